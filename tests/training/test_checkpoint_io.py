"""DPR training's checkpoint writer (models/checkpoint_io.py): the Trainer uses it, what
it writes loads back as the same state, and a save that fails leaves the previous checkpoint and
no temporary file."""

from __future__ import annotations

import pytest
import torch

from models.checkpoint_io import StreamingAtomicCheckpointIO


class _Unpicklable:
    def __reduce__(self):
        raise RuntimeError("killed mid-save")


def test_a_saved_checkpoint_loads_back_as_the_same_state(tmp_path):
    state = {"state_dict": {"w": torch.randn(4, 3)}, "global_step": 7,
             "optimizer_states": [{"state": {0: {"exp_avg": torch.ones(2)}}}]}
    io = StreamingAtomicCheckpointIO()
    path = tmp_path / "deep" / "last.ckpt"  # the directory is made
    io.save_checkpoint(state, path)
    back = io.load_checkpoint(path)
    assert back["global_step"] == 7
    torch.testing.assert_close(back["state_dict"]["w"], state["state_dict"]["w"])
    torch.testing.assert_close(back["optimizer_states"][0]["state"][0]["exp_avg"], torch.ones(2))


def test_a_failed_save_keeps_the_previous_checkpoint_and_leaves_no_temporary_file(tmp_path):
    io = StreamingAtomicCheckpointIO()
    path = tmp_path / "last.ckpt"
    io.save_checkpoint({"global_step": 1}, path)
    with pytest.raises(RuntimeError, match="killed mid-save"):
        io.save_checkpoint({"global_step": 2, "bad": _Unpicklable()}, path)
    assert io.load_checkpoint(path)["global_step"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["last.ckpt"]


def test_the_training_trainer_writes_its_checkpoints_with_it(tmp_path, tiny_config):
    from models.retriever.api import build_trainer

    trainer = build_trainer(tiny_config(max_steps=2), tmp_path, has_val=False)
    assert isinstance(trainer.strategy.checkpoint_io, StreamingAtomicCheckpointIO)
