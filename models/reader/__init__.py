"""Extractive reader (SQuAD v1.1): ``AutoModelForQuestionAnswering`` fine-tuned with Lightning.

Public API::

    from models.reader import ReaderConfig, train_reader, load_reader

    out = train_reader(squad_questions, ReaderConfig(...), "models/reader", base_model=dir)
    reader = load_reader(out)
    reader.answers(questions)          # {question id: answer text}
    reader.predict(questions)          # Prediction(id, text, start, end, score, n_best)

Examples are anything with ``id``, ``question``, ``context`` and ``answers`` (``text``,
``answer_start``), e.g. ``tasks.io.squad.SquadQuestion``. Only :mod:`models.reader.config` is
imported eagerly (no torch); the rest on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from models.reader.config import ReaderConfig, WindowConfig

if TYPE_CHECKING:
    from models.reader.api import Reader, load_reader, train_reader
    from models.reader.decoding import Prediction, Span
    from models.reader.features import QAExample, featurize

_LAZY = {
    "Reader": "models.reader.api",
    "load_reader": "models.reader.api",
    "train_reader": "models.reader.api",
    "Prediction": "models.reader.decoding",
    "Span": "models.reader.decoding",
    "QAExample": "models.reader.features",
    "featurize": "models.reader.features",
}

__all__ = ["Prediction", "QAExample", "Reader", "ReaderConfig", "Span", "WindowConfig",
           "featurize", "load_reader", "train_reader"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'models.reader' has no attribute {name!r}")
