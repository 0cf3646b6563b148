"""A reader training that crashes after a checkpoint resumes from ``last.ckpt`` when called
again with the same run, and ends with the weights of a run that was never stopped (the
loader's place in the epoch and torch's random state come back with the step and the
optimizer); without a checkpoint directory nothing is written."""

from __future__ import annotations

import json

import pytest
import torch
from crashing import crash_before_step
from reader_synthetic import synthetic_examples

from models.reader import ReaderConfig, train_reader
from models.reader.module import ReaderModule

CONFIG = ReaderConfig(max_length=96, doc_stride=16, max_query_length=24, batch_size=16,
                      max_steps=10, max_epochs=None, lr=4e-3, warmup_ratio=0.1, seed=1,
                      accelerator="cpu", precision="32-true", cpu_threads=1,
                      log_every_n_steps=1, checkpoint_every_n_steps=3, hidden_dropout=0.1)


def _weights(reader_dir) -> dict[str, bytes]:
    from safetensors.torch import load_file

    return {name: tensor.numpy().tobytes()
            for name, tensor in load_file(reader_dir / "model.safetensors").items()}


def test_a_crashed_training_resumes_and_ends_as_an_uninterrupted_one(tiny_bert, tmp_path,
                                                                    monkeypatch):
    examples = synthetic_examples(60, 1)  # 60 windows: 4 batches an epoch
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    restore = crash_before_step(monkeypatch, ReaderModule, 5)
    with pytest.raises(RuntimeError, match="crash before step 6"):
        train_reader(examples, CONFIG, out, tiny_bert, checkpoint_dir=ckpt)
    saved = torch.load(ckpt / "last.ckpt", map_location="cpu", weights_only=False)
    assert saved["global_step"] == 3 and not out.exists()  # in the middle of epoch 0
    restore()

    train_reader(examples, CONFIG, out, tiny_bert, checkpoint_dir=ckpt)  # same run: resumes
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["resumed_from"] == str(ckpt / "last.ckpt") and state["global_step"] == 10
    assert [h["step"] for h in state["log_history"]] == list(range(1, 11))

    assert not ckpt.exists()  # the reader is saved: its checkpoints go
    whole = tmp_path / "whole"
    train_reader(examples, CONFIG, whole, tiny_bert)  # no checkpoint directory
    assert json.loads((whole / "trainer_state.json").read_text())["resumed_from"] is None
    assert _weights(out) == _weights(whole)


def test_another_run_starts_over_and_a_finished_run_leaves_no_checkpoint(tiny_bert, tmp_path,
                                                                        monkeypatch):
    examples = synthetic_examples(60, 1)
    ckpt = tmp_path / "ckpt"
    restore = crash_before_step(monkeypatch, ReaderModule, 4)
    with pytest.raises(RuntimeError, match="crash before step 5"):
        train_reader(examples, CONFIG, tmp_path / "a", tiny_bert, checkpoint_dir=ckpt)
    assert (ckpt / "last.ckpt").is_file()  # step 3
    restore()
    other = CONFIG.model_copy(update={"seed": 2, "max_steps": 4})
    train_reader(examples, other, tmp_path / "b", tiny_bert, checkpoint_dir=ckpt)
    state = json.loads((tmp_path / "b" / "trainer_state.json").read_text())
    assert state["resumed_from"] is None and state["global_step"] == 4
    assert not ckpt.exists()  # the reader is saved: its checkpoints go

    import models.resume

    kept = []
    monkeypatch.setattr(models.resume, "discard_checkpoints", kept.append)
    for steps in (2, 3):  # ends before its first checkpoint; its last step is one's step
        short = CONFIG.model_copy(update={"max_steps": steps})
        train_reader(examples, short, tmp_path / f"c{steps}", tiny_bert, checkpoint_dir=ckpt)
        assert kept[-1] == ckpt and sorted(p.name for p in ckpt.iterdir()) == ["run.json"]
