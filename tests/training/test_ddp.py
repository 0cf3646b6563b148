"""Lightning DDP on 2 CPU processes (gloo, ``ddp_spawn``): the module's loss gathers the
vectors of both processes; the launching process gets the trained weights and the state.

Slow (~40 s: two spawned interpreters import torch and Lightning); the gather itself is tested
in seconds by test_gather.py."""

from __future__ import annotations

import json

import pytest
import torch

from models.retriever import load_samples
from models.retriever.api import train_retriever

pytestmark = pytest.mark.slow


def test_ddp_spawn_on_two_cpu_processes(tiny_bert, tiny_train_json, tiny_config, tmp_path):
    from transformers import DPRQuestionEncoder

    from models.retriever.network import load_encoder_model

    config = tiny_config(max_steps=3, devices=2, strategy="ddp_spawn")
    state = train_retriever(load_samples(tiny_train_json), tiny_bert, config, tmp_path / "out",
                            tmp_path / "ckpt")
    assert state["global_step"] == 3 and len(state["log_history"]) == 3
    args = json.loads((tmp_path / "out" / "training_args.json").read_text())
    assert args["resolved"]["strategy"] == "ddp_spawn" and args["resolved"]["devices"] == 2
    trained = DPRQuestionEncoder.from_pretrained(tmp_path / "out" / "question_encoder")
    initial = load_encoder_model(tiny_bert).state_dict()
    after = trained.question_encoder.bert_model.state_dict()
    assert any(not torch.equal(after[k], initial[k]) for k in initial)


def test_ddp_spawn_with_the_gradient_cache(tiny_bert, tiny_train_json, tiny_config, tmp_path):
    """Lightning's manual optimization under DDP: the chunked backward passes run without
    DDP's synchronisation, one gradient average follows (the math: test_grad_cache.py)."""
    config = tiny_config(max_steps=3, devices=2, strategy="ddp_spawn", grad_cache_chunk=2)
    state = train_retriever(load_samples(tiny_train_json), tiny_bert, config, tmp_path / "out",
                            tmp_path / "ckpt")
    assert state["global_step"] == 3 and len(state["log_history"]) == 3
    args = json.loads((tmp_path / "out" / "training_args.json").read_text())
    assert args["grad_cache_chunk"] == 2 and args["resolved"]["devices"] == 2
