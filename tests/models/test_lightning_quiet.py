"""Lightning's LeafSpec deprecation, its litlogger tip and its per-Trainer information that
says nothing (no GPU, no TPU, the configured end reached) are silenced inside
``quiet_lightning``, and only they: other warnings and log records still show, and the
silencing ends with the block. One real training (MLM pre-training) shows none of them."""

from __future__ import annotations

import logging
import warnings

import pytest

from models.lightning_quiet import RANK_ZERO_LOGGER, quiet_lightning
from models.mlm import MlmConfig, pretrain_mlm
from tasks.retrieval.encoders import resolve_model_path


def _leaf_spec_warnings() -> list[str]:
    """The warnings Lightning's pytree flattening gives (it builds a LeafSpec)."""
    from pytorch_lightning.utilities._pytree import _tree_flatten

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", append=True)  # after quiet_lightning's filter
        _tree_flatten(1.0)
    return [str(w.message) for w in caught if "LeafSpec" in str(w.message)]


def test_leaf_spec_warning_is_silenced_inside_only():
    assert _leaf_spec_warnings(), "Lightning no longer warns: quiet_lightning can go"
    with quiet_lightning():
        assert _leaf_spec_warnings() == []
        with pytest.warns(FutureWarning, match="another deprecation"):
            warnings.warn("another deprecation", FutureWarning, stacklevel=1)
    assert _leaf_spec_warnings()


def _trainer_messages(caplog) -> list[str]:
    import pytorch_lightning as pl

    caplog.clear()
    with caplog.at_level(logging.INFO, logger=RANK_ZERO_LOGGER):
        pl.Trainer(accelerator="cpu", logger=False, enable_progress_bar=False,
                   enable_checkpointing=False, enable_model_summary=False)
    return [r.getMessage() for r in caplog.records if r.name == RANK_ZERO_LOGGER]


def test_litlogger_tip_is_silenced_inside_only(caplog):
    assert any("litlogger" in m for m in _trainer_messages(caplog))
    with quiet_lightning():
        messages = _trainer_messages(caplog)
    assert not any("litlogger" in m for m in messages)
    assert any("litlogger" in m for m in _trainer_messages(caplog))
    assert not logging.getLogger(RANK_ZERO_LOGGER).filters


SILENCED = ["GPU available: False, used: False", "TPU available: False, using: 0 TPU cores",
            "`Trainer.fit` stopped: `max_steps=300` reached.",
            "`Trainer.fit` stopped: `max_epochs=1` reached.",
            "`Trainer(limit_val_batches=1.0)` was configured so 100% of the batches will be used..",
            "Loading `train_dataloader` to estimate number of stepping batches."]
KEPT = ["GPU available: True (cuda), used: True", "GPU available: True (cuda), used: False",
        "`Trainer.fit` stopped: `max_steps=300` reached. And then something else.",
        "`Trainer(limit_val_batches=1)` was configured so 1 batch will be used.",
        "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]"]


def test_lightnings_information_that_says_nothing_is_silenced_inside_only(caplog):
    from pytorch_lightning.utilities.rank_zero import rank_zero_info

    def logged() -> list[str]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=RANK_ZERO_LOGGER):
            for message in SILENCED + KEPT:
                rank_zero_info(message)
        return [r.getMessage() for r in caplog.records if r.name == RANK_ZERO_LOGGER]

    with quiet_lightning():
        assert logged() == KEPT
    assert logged() == SILENCED + KEPT


def test_training_shows_neither(tmp_path, caplog):
    config = MlmConfig(layers=1, hidden=32, heads=2, intermediate=64, max_length=16,
                       batch_size=4, max_steps=2, warmup_steps=0, log_every_n_steps=1,
                       accelerator="cpu", cpu_threads=1)
    pairs = [(f"Town {i}", f"town {i} lies on the river") for i in range(4)]
    with warnings.catch_warnings(record=True) as caught, \
            caplog.at_level(logging.INFO, logger=RANK_ZERO_LOGGER):
        warnings.simplefilter("always", append=True)
        pretrain_mlm(pairs, config, tmp_path / "mlm", resolve_model_path(config.tokenizer))
    assert not [w for w in caught if "LeafSpec" in str(w.message)]
    messages = [r.getMessage() for r in caplog.records if r.name == RANK_ZERO_LOGGER]
    assert messages == [], messages  # (was the tip, GPU and TPU lines, and "fit stopped")


def test_the_callback_silences_a_spawned_process_for_good_and_the_launcher_not_at_all(caplog):
    from pytorch_lightning.utilities.rank_zero import rank_zero_info

    from models.spawned_quiet import QuietSpawnedProcesses

    logger = logging.getLogger(RANK_ZERO_LOGGER)
    launcher = QuietSpawnedProcesses()
    launcher.setup(None, None, "fit")  # built here: the quiet_lightning context's job
    assert _leaf_spec_warnings() and not logger.filters
    spawned = QuietSpawnedProcesses()
    spawned.launcher_pid = -1  # as in a process ddp_spawn started: another pid
    with warnings.catch_warnings():  # (the test's own way back; a spawned process ends)
        try:
            spawned.setup(None, None, "fit")
            assert _leaf_spec_warnings() == []
            caplog.clear()
            with caplog.at_level(logging.INFO, logger=RANK_ZERO_LOGGER):
                for message in SILENCED + KEPT:
                    rank_zero_info(message)
            assert [r.getMessage() for r in caplog.records if r.name == RANK_ZERO_LOGGER] == KEPT
        finally:
            for installed in list(logger.filters):
                logger.removeFilter(installed)
