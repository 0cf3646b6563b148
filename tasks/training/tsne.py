"""Figure 2 of Sciavolino et al. (2021): t-SNE of passage embeddings before and after
fine-tuning on one relation.

Passages: the positive passages of NQ-style questions and of the relation's questions (DPR
training JSON), a seeded sample of distinct passages per set. Each encoder (the baseline's
passage encoder, the fine-tuned one) embeds both sets through the dense retriever's own
encoder (:func:`tasks.retrieval.encoders.load_encoder`); t-SNE (scikit-learn) maps each to 2-d;
the silhouette of the two sets in the original space puts a number on how apart they lie.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tasks.io.atomic import write_json
from tasks.io.dpr import iter_dpr_examples
from tasks.orchestration import artifact_task
from tasks.reporting.scatter import write_embedding_scatter
from tasks.retrieval.encoders import EncoderSpec, load_encoder


def positive_passages(dpr_file: Path, n: int, seed: int = 0) -> list[tuple[str, str]]:
    """A seeded sample of up to ``n`` distinct ``(title, text)`` positives of a DPR file."""
    if not Path(dpr_file).is_file():
        raise FileNotFoundError(f"{dpr_file}: no DPR training JSON to take positives from")
    seen: dict[tuple[str, str], None] = {}
    for example in iter_dpr_examples(dpr_file):
        for ctx in example.positive_ctxs:
            seen.setdefault((ctx.title or "", ctx.text), None)
    passages = list(seen)
    if len(passages) > n:
        passages = random.Random(seed).sample(passages, n)
    return passages


def tsne_points(vectors: np.ndarray, perplexity: float, seed: int) -> np.ndarray:
    """2-d t-SNE of ``vectors`` (perplexity capped below the number of points)."""
    from sklearn.manifold import TSNE
    from threadpoolctl import threadpool_limits

    if len(vectors) < 3:
        raise ValueError(f"t-SNE needs at least 3 points, got {len(vectors)}")
    perplexity = min(perplexity, (len(vectors) - 1) / 3)
    # One OpenMP thread: on a shared 2-core machine more threads make it ~20x slower.
    with threadpool_limits(1):
        return TSNE(n_components=2, perplexity=perplexity, random_state=seed,
                    init="pca").fit_transform(np.asarray(vectors, dtype=np.float64))


def silhouette(vectors: np.ndarray, labels: Sequence[str]) -> float:
    """Silhouette of the sets in the embedding space (cosine; -1..1, higher = more apart)."""
    from sklearn.metrics import silhouette_score

    return round(float(silhouette_score(vectors, list(labels), metric="cosine")), 4)


def tsne_figure(sets: Mapping[str, Path], encoders: Mapping[str, EncoderSpec],
                png_path: Path, summary_path: Path, passages_per_set: int = 200,
                perplexity: float = 30.0, seed: int = 0, batch_size: int = 64,
                device: str = "auto", cpu_threads: int | None = None) -> dict[str, Any]:
    """Embed the positives of each set (``{label: DPR file}``) with each encoder's passage side
    (``{panel: spec}``; ``cpu_threads`` torch CPU threads, None: the machine's count), t-SNE
    them, write the PNG (+ CSV next to it) and a summary JSON; return the summary (passages
    per set, silhouette per panel)."""
    labels: list[str] = []
    titles: list[str] = []
    texts: list[str] = []
    counts = {}
    for label, dpr_file in sets.items():
        chosen = positive_passages(dpr_file, passages_per_set, seed)
        counts[label] = len(chosen)
        labels += [label] * len(chosen)
        titles += [t for t, _ in chosen]
        texts += [x for _, x in chosen]
    empty = [label for label, n in counts.items() if n == 0]
    if empty:
        raise ValueError(f"no positive passages for {empty} ({[str(sets[e]) for e in empty]})")
    panels, scores = {}, {}
    for panel, spec in encoders.items():
        vectors = load_encoder(spec, device).encode_passages(titles, texts,
                                                             batch_size=batch_size,
                                                             cpu_threads=cpu_threads)
        panels[panel] = (tsne_points(vectors, perplexity, seed), labels)
        scores[panel] = silhouette(vectors, labels)
    write_embedding_scatter(panels, png_path, title="Positive passages, t-SNE of the passage "
                            "encoder's vectors")
    summary = {"passages": counts, "silhouette_cosine": scores,
               "perplexity": min(perplexity, (len(labels) - 1) / 3), "seed": seed,
               "png": str(png_path)}
    write_json(summary_path, summary, indent=2)
    return summary


tsne_figure_task = artifact_task(tsne_figure, outputs=("png_path", "summary_path"),
                                 name="t-SNE of passage embeddings (Figure 2)")
