"""A saved reader is read only with the training settings it was trained with: the differences
are named, runtime settings (threads, inference batch, decoding) do not count, and an outside
checkpoint without ``training_args.json`` is taken as it is."""

from __future__ import annotations

import pytest

from models.reader.api import TRAINING_ARGS_FILE
from tasks.io.atomic import write_json
from tasks.reader_config import ReaderConfig
from tasks.reading.trained_as import require_trained_as, settings_differences


def _saved(tmp_path, config: ReaderConfig):
    write_json(tmp_path / TRAINING_ARGS_FILE,
               {**config.model_dump(mode="json"), "base_model": "/x", "n_train_questions": 3})
    return tmp_path


def test_the_same_training_settings_pass_and_runtime_ones_do_not_count(tmp_path):
    config = ReaderConfig(max_epochs=1, lr=2e-4, devices=(0, 1))
    model_dir = _saved(tmp_path, config)
    runtime = config.model_copy(update={"cpu_threads": 2, "predict_batch_size": 8, "n_best": 5,
                                        "max_answer_length": 10, "log_every_n_steps": 1,
                                        "num_workers": 1})
    assert settings_differences(model_dir, runtime) == {}
    assert require_trained_as(model_dir, runtime, "cmd") == model_dir


def test_other_training_settings_are_named_with_the_command(tmp_path):
    model_dir = _saved(tmp_path, ReaderConfig(max_epochs=1, seed=42))
    asked = ReaderConfig(max_epochs=2, seed=7)
    assert settings_differences(model_dir, asked) == {"max_epochs": (1, 2), "seed": (42, 7)}
    with pytest.raises(ValueError, match=r"trained with other readers.model settings "
                       r"\(max_epochs: trained with 1, asked for 2; seed: trained with 42, "
                       r"asked for 7\): train it again with these settings \(qastress stage "
                       r"train-reader with"):
        require_trained_as(model_dir, asked, "qastress stage train-reader")


def test_an_outside_checkpoint_has_nothing_to_compare(tmp_path):
    assert settings_differences(tmp_path, ReaderConfig(max_epochs=5)) == {}
