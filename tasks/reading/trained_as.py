"""Whether a saved reader was trained with the settings a stage is asked to use.

The reader is trained by one stage (train-reader, or an augmentation kind's stage) and read by
others (readers, retrieve-then-read, reader-augmentation). A later stage run with other
``readers.model`` settings (``--set readers.model.max_epochs=2``) must not silently read a
reader trained with the old ones: every checkpoint saves its ``ReaderConfig`` in
``training_args.json``, and :func:`require_trained_as` compares it with the one asked for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from models.reader.api import TRAINING_ARGS_FILE
from tasks.reader_config import ReaderConfig

#: ``ReaderConfig`` fields that do not change the trained weights: threads, loader workers,
#: logging, inference batch, decoding (read from the checkpoint's own ``reader_config.json``).
RUNTIME_FIELDS = frozenset({"num_workers", "cpu_threads", "log_every_n_steps",
                            "predict_batch_size", "n_best", "max_answer_length"})


def settings_differences(model_dir: Path, config: ReaderConfig) -> dict[str, tuple[Any, Any]]:
    """``{field: (trained with, asked for)}`` of the training settings that differ; ``{}``
    when the checkpoint has no ``training_args.json`` (an outside model: nothing to compare)."""
    path = Path(model_dir) / TRAINING_ARGS_FILE
    if not path.is_file():
        return {}
    trained = json.loads(path.read_text(encoding="utf-8"))
    asked = config.model_dump(mode="json")
    return {name: (trained.get(name), value) for name, value in asked.items()
            if name not in RUNTIME_FIELDS and trained.get(name) != value}


def require_trained_as(model_dir: Path, config: ReaderConfig, command: str) -> Path:
    """``model_dir`` when its reader was trained with ``config``'s training settings; else a
    clear error naming each difference and the command that trains it with them."""
    differences = settings_differences(model_dir, config)
    if differences:
        listed = "; ".join(f"{name}: trained with {was!r}, asked for {now!r}"
                           for name, (was, now) in differences.items())
        raise ValueError(f"the reader at {model_dir} was trained with other readers.model "
                         f"settings ({listed}): train it again with these settings ({command} "
                         "with the same --set / --params)")
    return Path(model_dir)
