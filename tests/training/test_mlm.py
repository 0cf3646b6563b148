"""Masked-LM pre-training of a small BERT: the loss falls, the checkpoint loads with AutoModel
and AutoTokenizer, and the bi-encoder can start from it."""

from __future__ import annotations

import json

from models.mlm import MlmConfig, pretrain_mlm
from tasks.retrieval.encoders import resolve_model_path

PAIRS = [(f"Town {i}", f"town {i} is a small town on the river with a bridge and a mill")
         for i in range(16)]


def test_pretrain_small_bert_and_reload(tmp_path):
    from transformers import AutoModel, AutoTokenizer

    config = MlmConfig(layers=1, hidden=32, heads=2, intermediate=64, max_length=32,
                       batch_size=16, max_steps=30, lr=3e-3, warmup_steps=0,
                       log_every_n_steps=1, accelerator="cpu", cpu_threads=1)
    out = tmp_path / "mlm"
    state = pretrain_mlm(PAIRS, config, out, resolve_model_path(config.tokenizer))
    losses = [h["loss"] for h in state["log_history"]]
    assert state["global_step"] == 30 and len(losses) == 30
    assert state["final_train_loss"] == losses[-1]
    assert sum(losses[-5:]) / 5 < 0.85 * sum(losses[:5]) / 5, losses
    model = AutoModel.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert model.config.model_type == "bert" and model.config.hidden_size == 32
    assert tokenizer("town")["input_ids"][0] == tokenizer.cls_token_id
    saved = json.loads((out / "trainer_state.json").read_text())
    assert saved["passages"] == 16


def test_empty_corpus_is_an_error(tmp_path):
    import pytest

    with pytest.raises(ValueError, match="corpus is empty"):
        pretrain_mlm([], MlmConfig(), tmp_path / "x", resolve_model_path(MlmConfig().tokenizer))


def test_an_empty_passage_is_an_error_before_training(tmp_path):
    import pytest

    pairs = [*PAIRS[:3], ("", "  "), *PAIRS[3:]]
    with pytest.raises(ValueError, match="passage 3: empty title and text"):
        pretrain_mlm(pairs, MlmConfig(max_steps=1), tmp_path / "x",
                     resolve_model_path(MlmConfig().tokenizer))
    assert not (tmp_path / "x").exists()


def test_examples_tokenised_when_drawn_train_as_tokenised_first(tmp_path, monkeypatch):
    """Passages are tokenised as the loader draws them; the weights are those of a training on
    every passage tokenised up front, and passages never drawn are never tokenised."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoTokenizer

    from models.mlm import pretrain

    pairs = [(f"Town {i}", f"town {i} has {'a bridge and ' * (i % 5)}a mill") for i in range(40)]
    pairs[7] = ("", "a passage without a title")
    config = MlmConfig(layers=1, hidden=32, heads=2, intermediate=64, max_length=16,
                       batch_size=4, max_steps=3, warmup_steps=0, accelerator="cpu",
                       cpu_threads=1)
    tokenizer_dir = resolve_model_path(config.tokenizer)
    drawn: list[int] = []
    lazy = pretrain.PassageExamples

    class Counting(lazy):
        def __getitem__(self, index):
            drawn.append(index)
            return super().__getitem__(index)

    monkeypatch.setattr(pretrain, "PassageExamples", Counting)
    pretrain_mlm(pairs, config, tmp_path / "lazy", tokenizer_dir)
    assert len(drawn) == 12 and len(set(drawn)) == 12  # 3 batches of 4, of 40 passages

    def up_front(tokenizer, pairs, max_length):
        return [lazy(tokenizer, pairs, max_length)[i] for i in range(len(pairs))]

    monkeypatch.setattr(pretrain, "PassageExamples", up_front)
    pretrain_mlm(pairs, config, tmp_path / "eager", tokenizer_dir)
    a = load_file(tmp_path / "lazy" / "model.safetensors")
    b = load_file(tmp_path / "eager" / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    assert lazy(tokenizer, pairs, 16)[7]["input_ids"] == tokenizer(
        "a passage without a title", truncation=True, max_length=16)["input_ids"]
