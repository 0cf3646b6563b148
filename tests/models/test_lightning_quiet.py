"""Lightning's LeafSpec deprecation and its litlogger tip are silenced inside
``quiet_lightning``, and only they: other warnings and log records still show, and the
silencing ends with the block. One real training (MLM pre-training) shows neither."""

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
    assert any("GPU available" in m for m in messages)  # the rest of Lightning's info stays
    assert any("litlogger" in m for m in _trainer_messages(caplog))
    assert not logging.getLogger(RANK_ZERO_LOGGER).filters


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
    assert messages and not any("litlogger" in m for m in messages)
