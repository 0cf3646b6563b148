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


def test_ddp_spawn_on_two_cpu_processes(tiny_bert, tiny_train_json, tiny_config, tmp_path,
                                        capfd):
    from transformers import DPRQuestionEncoder

    from models.retriever.network import load_encoder_model

    config = tiny_config(max_steps=3, devices=2, strategy="ddp_spawn")
    state = train_retriever(load_samples(tiny_train_json), tiny_bert, config, tmp_path / "out",
                            tmp_path / "ckpt")
    assert state["global_step"] == 3 and len(state["log_history"]) == 3
    out, err = capfd.readouterr()  # the spawned processes' output is silenced as the launcher's
    assert "LeafSpec" not in out + err and "`Trainer.fit` stopped" not in out + err
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


def test_a_ddp_run_resumed_mid_epoch_ends_where_an_uninterrupted_one_does(
        tiny_bert, tiny_train_json, tiny_config, tmp_path):
    """Each process trains 12 of the 24 questions per epoch (batches of 8 and 4). The run
    crashes before step 5, its last checkpoint at step 3 (the middle of epoch 1); the
    resumed run trains the batches the crashed one had not reached: its weights equal those
    of a run never stopped."""
    from resume_worker import CrashBeforeStep
    from test_resume import _weights

    config = tiny_config(max_steps=7, devices=2, strategy="ddp_spawn",
                         checkpoint_every_n_steps=3)
    samples = load_samples(tiny_train_json)
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    with pytest.raises(Exception, match="crash before step 5"):
        train_retriever(samples, tiny_bert, config, out, ckpt, callbacks=[CrashBeforeStep(4)])
    saved = torch.load(ckpt / "last.ckpt", map_location="cpu", weights_only=False)
    assert saved["global_step"] == 3 and not out.exists()

    state = train_retriever(samples, tiny_bert, config, out, ckpt)  # same run: resumes
    assert state["resumed_from"] == str(ckpt / "last.ckpt") and state["global_step"] == 7
    whole = tmp_path / "whole"
    train_retriever(samples, tiny_bert, config, whole, tmp_path / "whole_ckpt")
    assert _weights(out) == _weights(whole)
