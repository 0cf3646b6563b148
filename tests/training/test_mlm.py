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
