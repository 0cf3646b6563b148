"""Suggestion-guided paraphraser (Gan & Ng, 2019): transformer + copy mechanism.

Public API::

    from models.paraphraser import ParaphraserConfig, train_paraphraser, load_paraphraser

    out = train_paraphraser(triples, "vocab/spm.model", ParaphraserConfig(...), "models/para")
    para = load_paraphraser(out)
    para.generate([("suggestion words", "source question?"), (None, "another question?")])

Triples are ``(source, suggestion | None, target)``; generation inputs are
``(suggestion | None, source)``. ``None`` (or "") is the special ``<none>`` suggestion.
Only :mod:`models.paraphraser.config` is imported eagerly (no torch); the rest on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from models.paraphraser.config import ModelConfig, ParaphraserConfig

if TYPE_CHECKING:
    from models.paraphraser.checkpoint import Paraphraser, load_paraphraser, train_paraphraser
    from models.paraphraser.datamodule import ParaphraseDataModule
    from models.paraphraser.module import ParaphraserModule
    from models.paraphraser.network import PointerGeneratorTransformer
    from models.paraphraser.tokenizer import ParaphraseTokenizer

_LAZY = {
    "Paraphraser": "models.paraphraser.checkpoint",
    "load_paraphraser": "models.paraphraser.checkpoint",
    "train_paraphraser": "models.paraphraser.checkpoint",
    "ParaphraseDataModule": "models.paraphraser.datamodule",
    "ParaphraserModule": "models.paraphraser.module",
    "PointerGeneratorTransformer": "models.paraphraser.network",
    "ParaphraseTokenizer": "models.paraphraser.tokenizer",
}

__all__ = [
    "ModelConfig", "ParaphraseDataModule", "Paraphraser", "ParaphraserConfig",
    "ParaphraserModule", "ParaphraseTokenizer", "PointerGeneratorTransformer",
    "load_paraphraser", "train_paraphraser",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'models.paraphraser' has no attribute {name!r}")
