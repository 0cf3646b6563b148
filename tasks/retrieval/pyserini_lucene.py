"""Pyserini's ``LuceneSearcher`` imported without its neural query encoders.

``pyserini.search.lucene`` imports, with its package, the learned-sparse (impact) searchers,
whose module imports ``pyserini.encode`` at once: transformers, torch and faiss. BM25 uses none
of them. ``bench/bench_pyserini_import.py`` (fresh processes, the study's 2-core machine): 8.4 s
of wall time and 9.2 CPU-s with them, 1.8 s and 2.5 CPU-s without. A study run pays it once per
JVM worker process (one per stage worker that uses Lucene), while the other stage worker
trains.

:func:`lucene_searcher_class` imports the package with a stand-in ``pyserini.encode`` whose
classes say why they cannot be used, and takes the stand-in out of ``sys.modules`` again, so a
later ``import pyserini.encode`` gets the real module. Where ``pyserini.encode`` or
``pyserini.search.lucene`` is already imported, the plain import is used.
"""

from __future__ import annotations

import sys
import types
from typing import Any

ENCODE = "pyserini.encode"
SEARCH = "pyserini.search.lucene"


def _stand_in(name: str) -> type:
    """A class named like ``pyserini.encode.<name>`` that cannot be instantiated."""
    def unavailable(self: Any, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            f"{ENCODE}.{name} was not loaded: {SEARCH} was imported for BM25 without the "
            f"neural query encoders (tasks/retrieval/pyserini_lucene.py); import {ENCODE} "
            f"before {SEARCH} to use the impact searchers")

    return type(name, (), {"__init__": unavailable, "__module__": ENCODE})


def _stand_in_module() -> types.ModuleType:
    module = types.ModuleType(ENCODE, "stand-in: the neural encoders were not loaded")
    module.__getattr__ = _stand_in  # type: ignore[method-assign]  # PEP 562
    return module


def lucene_searcher_class() -> type:
    """``pyserini.search.lucene.LuceneSearcher``, imported without ``pyserini.encode`` when
    neither is imported yet. The JVM must be started first (:func:`~tasks.retrieval.jvm
    .start_jvm`)."""
    if ENCODE in sys.modules or SEARCH in sys.modules:
        from pyserini.search.lucene import LuceneSearcher

        return LuceneSearcher
    sys.modules[ENCODE] = _stand_in_module()  # found there, it is not bound to the package
    try:
        from pyserini.search.lucene import LuceneSearcher
    finally:
        del sys.modules[ENCODE]
    return LuceneSearcher
