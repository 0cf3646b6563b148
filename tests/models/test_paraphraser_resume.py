"""A paraphraser training that crashes after a checkpoint resumes from ``last.ckpt`` and ends
with the weights of a run never stopped: the shuffle, the batches already trained, torch's
random state (dropout) and the collator's forced out-of-vocabulary draws all come back."""

from __future__ import annotations

import json

import pytest
import sentencepiece as spm
import torch
from crashing import crash_before_step

from models.paraphraser import ParaphraserConfig, train_paraphraser
from models.paraphraser.module import ParaphraserModule

TRIPLES = [(f"where is the {w} tower?", w, f"in which town is the {w} tower?")
           for w in ("red", "tall", "old", "new", "blue", "green", "stone", "iron", "glass",
                     "white", "black", "small")] + \
          [(f"who built the {w} bridge?", None, f"who is the builder of the {w} bridge?")
           for w in ("long", "wide", "steel", "rope", "wood", "brick")]
# dropout on and words forced out of vocabulary: both draw random numbers in every step
CONFIG = ParaphraserConfig(d_model=32, heads=2, layers=1, ff=64, dropout=0.1, max_len=24,
                           lr=3e-3, warmup_steps=2, val_fraction=0.0, batch_size=4,
                           max_steps=10, max_epochs=None, copy_oov_rate=0.3, accelerator="cpu",
                           devices=1, precision="32-true", seed=7, cpu_threads=1,
                           log_every_n_steps=1, checkpoint_every_n_steps=3)


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory) -> str:
    text = [t[0] for t in TRIPLES] + [t[2] for t in TRIPLES]
    prefix = str(tmp_path_factory.mktemp("spm") / "para")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_prefix=prefix,
                                   vocab_size=60, hard_vocab_limit=False,
                                   character_coverage=1.0, minloglevel=2)
    return prefix + ".model"


def _weights(model_dir) -> dict[str, bytes]:
    from safetensors.torch import load_file

    return {name: tensor.numpy().tobytes()
            for name, tensor in load_file(model_dir / "model.safetensors").items()}


def test_a_crashed_training_resumes_and_ends_as_an_uninterrupted_one(spm_model, tmp_path,
                                                                    monkeypatch):
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    restore = crash_before_step(monkeypatch, ParaphraserModule, 5)
    with pytest.raises(RuntimeError, match="crash before step 6"):
        train_paraphraser(TRIPLES, spm_model, CONFIG, out, checkpoint_dir=ckpt)
    saved = torch.load(ckpt / "last.ckpt", map_location="cpu", weights_only=False)
    assert saved["global_step"] == 3 and not out.exists()  # 18 triples: 5 batches an epoch
    restore()

    train_paraphraser(TRIPLES, spm_model, CONFIG, out, checkpoint_dir=ckpt)  # resumes
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["resumed_from"] == str(ckpt / "last.ckpt") and state["global_step"] == 10
    assert [h["step"] for h in state["log_history"]] == list(range(1, 11))

    whole = tmp_path / "whole"
    train_paraphraser(TRIPLES, spm_model, CONFIG, whole)
    assert _weights(out) == _weights(whole)
