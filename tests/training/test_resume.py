"""SIGKILL a training run after its first checkpoint; a second run resumes from ``last.ckpt``
(step, optimizer, loss history) and finishes at ``max_steps`` without redoing steps."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time

import pytest
import torch
from resume_worker import CONFIG, CrashBeforeStep, main


def _start(args: list[str], delay: float) -> multiprocessing.Process:
    """The worker in a forked process (torch and Lightning are already imported here: a fresh
    interpreter would spend most of the test importing them)."""
    process = multiprocessing.get_context("fork").Process(target=main, args=(*args, delay))
    process.start()
    return process


def test_training_resumes_from_the_last_checkpoint_after_sigkill(tiny_bert, tiny_train_json,
                                                                 tmp_path):
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    args = [str(tiny_bert), str(tiny_train_json), str(ckpt), str(out)]
    proc = _start(args, delay=0.3)
    deadline = time.monotonic() + 120
    try:
        while not (ckpt / "last.ckpt").exists():
            assert proc.is_alive(), f"the training process ended early ({proc.exitcode})"
            assert time.monotonic() < deadline, "no checkpoint within 120 s"
            time.sleep(0.05)
        time.sleep(0.3)  # let the checkpoint write finish; the next one is 4 steps away
        os.kill(proc.pid, signal.SIGKILL)
        proc.join(timeout=30)
    finally:
        if proc.is_alive():
            proc.kill()
    assert proc.exitcode == -signal.SIGKILL
    killed_at = torch.load(ckpt / "last.ckpt", map_location="cpu",
                           weights_only=False)["global_step"]
    assert 4 <= killed_at < 12 and not out.exists()

    from models.retriever import RetrieverTrainConfig, load_samples, train_retriever

    returned = train_retriever(load_samples(tiny_train_json), tiny_bert,
                               RetrieverTrainConfig(**CONFIG), out, ckpt)  # same run: resumes
    state = json.loads((out / "trainer_state.json").read_text())
    assert returned["global_step"] == state["global_step"]
    assert state["resumed_from"] == str(ckpt / "last.ckpt")
    assert state["global_step"] == 12
    steps = [h["step"] for h in state["log_history"] if "loss" in h]
    assert steps == list(range(1, 13)), steps  # steps before the kill kept, none redone

    # The kill fell inside an epoch (3 batches each): the resumed run trained the batches the
    # killed one had not reached, with its dropout masks, so it ends where a run that was
    # never stopped ends.
    assert killed_at % 3 != 0
    whole = tmp_path / "whole"
    train_retriever(load_samples(tiny_train_json), tiny_bert, RetrieverTrainConfig(**CONFIG),
                    whole, tmp_path / "whole_ckpt")
    assert _weights(out) == _weights(whole)


def _weights(model_dir) -> dict[str, bytes]:
    """Every tensor the saved retriever holds, by file and name, as raw bytes."""
    from safetensors.torch import load_file

    return {f"{file.relative_to(model_dir)}:{name}": tensor.numpy().tobytes()
            for file in sorted(model_dir.rglob("*.safetensors"))
            for name, tensor in load_file(file).items()}


def test_only_rank_zero_resets_the_checkpoint_directory(tmp_path, monkeypatch):
    from models.resume import prepare_checkpoints as _prepare_checkpoints

    stale = tmp_path / "ckpt"
    stale.mkdir()
    (stale / "run.json").write_text(json.dumps({"fingerprint": "old"}))
    (stale / "last.ckpt").write_bytes(b"old run")
    monkeypatch.setenv("LOCAL_RANK", "1")  # a process Lightning's DDP launcher started
    assert _prepare_checkpoints(stale, "new") is None
    assert (stale / "last.ckpt").read_bytes() == b"old run"
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert _prepare_checkpoints(stale, "new") is None  # another run: rank 0 starts over
    assert not (stale / "last.ckpt").exists()
    assert json.loads((stale / "run.json").read_text()) == {"fingerprint": "new"}
    (stale / "last.ckpt").write_bytes(b"new run")
    assert _prepare_checkpoints(stale, "new") == stale / "last.ckpt"  # same run: resume


@pytest.mark.parametrize("crash_at", [3, 6])  # epochs of 3 batches: each a validated step
def test_a_checkpoint_that_validation_follows_resumes_after_that_validation(
        tiny_bert, tiny_train_json, tmp_path, crash_at):
    """The step checkpoint of an epoch's last batch waits for the epoch's validation: the
    resumed run has every validation in its history and ends with the weights of a run never
    stopped (saved before it, Lightning skipped that validation on resume)."""
    from models.retriever import RetrieverTrainConfig, load_samples, train_retriever

    samples = load_samples(tiny_train_json)
    config = RetrieverTrainConfig(**{**CONFIG, "checkpoint_every_n_steps": 3})
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    with pytest.raises(RuntimeError, match=f"crash before step {crash_at + 1}"):
        train_retriever(samples, tiny_bert, config, out, ckpt, val=samples[:4],
                        callbacks=[CrashBeforeStep(crash_at)])
    saved = torch.load(ckpt / "last.ckpt", map_location="cpu", weights_only=False)
    assert saved["global_step"] == crash_at
    train_retriever(samples, tiny_bert, config, out, ckpt, val=samples[:4])
    whole = tmp_path / "whole"
    train_retriever(samples, tiny_bert, config, whole, tmp_path / "whole_ckpt", val=samples[:4])
    resumed = json.loads((out / "trainer_state.json").read_text())["log_history"]
    uninterrupted = json.loads((whole / "trainer_state.json").read_text())["log_history"]
    assert [h["step"] for h in resumed if "val_loss" in h] == [3, 6, 9, 12]
    assert resumed == uninterrupted
    assert _weights(out) == _weights(whole)
