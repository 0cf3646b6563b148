"""Validation of the paraphraser configuration and of bad inputs (no training here)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from models.paraphraser import ParaphraserConfig


@pytest.mark.parametrize(("overrides", "message"), [
    ({"d_model": 66, "heads": 4}, "divisible by heads"),
    ({"d_model": 60, "heads": 4}, "must be even"),
    ({"max_steps": None, "max_epochs": None}, "set max_steps or max_epochs"),
    ({"dropout": 1.0}, "dropout"),
    ({"label_smoothing": -0.1}, "label_smoothing"),
    ({"devices": 0}, "devices"),
    ({"devices": ()}, "devices"),
    ({"precision": "fp8"}, "precision"),
    ({"accelerator": "tpu9"}, "accelerator"),
    ({"batch_size": 0}, "batch_size"),
    ({"lr": 0}, "lr"),
    ({"layer": 2}, "layer"),  # a misspelt key is an error naming it
])
def test_invalid_config_is_one_clear_error(overrides, message):
    with pytest.raises(ValidationError, match=message):
        ParaphraserConfig(**overrides)


def test_config_is_frozen_and_dumps_to_json():
    cfg = ParaphraserConfig(max_steps=10)
    with pytest.raises(ValidationError):
        cfg.d_model = 8
    again = ParaphraserConfig.model_validate(cfg.model_dump(mode="json"))
    assert again == cfg
    assert cfg.n_decoder_layers == cfg.layers


def test_hardware_is_configuration():
    from models.paraphraser.checkpoint import resolve_hardware

    cpu = resolve_hardware(ParaphraserConfig(accelerator="cpu"))
    assert cpu == {"accelerator": "cpu", "devices": 1, "strategy": "auto",
                   "precision": "32-true"}
    multi = resolve_hardware(ParaphraserConfig(accelerator="gpu", devices=4,
                                               precision="bf16-mixed"))
    assert multi["strategy"] == "ddp" and multi["precision"] == "bf16-mixed"
    listed = resolve_hardware(ParaphraserConfig(accelerator="gpu", devices=(0, 1)))
    assert listed["devices"] == [0, 1] and listed["strategy"] == "ddp"
    assert resolve_hardware(ParaphraserConfig(precision="32"))["precision"] == "32-true"


@pytest.mark.parametrize(("triples", "message"), [
    ([("", "x", "a question?")], r"triples\[0\]: source"),
    ([("a question?", "x", "   ")], r"triples\[0\]: target"),
    ([("a question?", 3, "b question?")], r"triples\[0\]: suggestion"),
    ([("a question?", "b question?")], r"triples\[0\]: expected"),
    ([], "no training triples"),
])
def test_bad_triples_are_rejected_before_training(tmp_path, triples, message):
    from models.paraphraser import train_paraphraser

    with pytest.raises(ValueError, match=message):
        train_paraphraser(triples, tmp_path / "missing.model", ParaphraserConfig(max_steps=1),
                          tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_config_mapping_is_validated(tmp_path):
    from models.paraphraser import train_paraphraser

    with pytest.raises(ValidationError, match="d_modl"):
        train_paraphraser([("a b?", None, "b a?")], tmp_path / "x.model", {"d_modl": 8},
                          tmp_path / "out")


def test_load_rejects_a_directory_that_is_not_a_checkpoint(tmp_path):
    from models.paraphraser import load_paraphraser

    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="model.safetensors is missing"):
        load_paraphraser(tmp_path)
