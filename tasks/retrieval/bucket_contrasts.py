"""The two popularity contrasts of Figure 1 with bootstrap CIs (paper §4), over the bucket runs.

- **rise with popularity**: top-k on the most popular bucket minus the rarest bucket of
  rand-ent, both pooled over the relations, per retriever; and each retriever's rise minus
  BM25's (the paper: dense retrievers gain far more from popularity than BM25);
- **seen vs random**: top-k on train-ent (subjects seen in NQ training questions) minus
  rand-ent, every bucket pooled, per retriever.

The two pools of a contrast hold different questions, so each pool is resampled on its own;
within a pool every retriever is scored on the same resampled questions, so retrievers'
rises are paired. Percentile intervals (``numpy.percentile``, linear), in points, rounded as
:func:`tasks.retrieval.comparison.compare_retrievers` rounds. Deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

RAND_ENT, TRAIN_ENT = "rand-ent", "train-ent"


def _bootstrap_means(hits: Mapping[str, np.ndarray], n: int,
                     rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``n`` bootstrap means of each retriever's 0/1 hits over the same resampled questions."""
    size = len(next(iter(hits.values())))
    means = {name: np.empty(n, dtype=np.float64) for name in hits}
    chunk = max(1, min(n, 2_000_000 // size))  # never n x size indices in memory at once
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        idx = rng.integers(0, size, size=(stop - start, size))
        for name, values in hits.items():
            means[name][start:stop] = values[idx].mean(axis=1)
    return means


def _interval(observed: float, samples: np.ndarray, confidence: float) -> dict:
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(samples, [100 * alpha, 100 * (1 - alpha)])
    return {"difference": round(100 * observed, 2), "ci_low": round(100 * float(low), 2),
            "ci_high": round(100 * float(high), 2), "significant": bool(low > 0 or high < 0)}


def _pool(hits: Mapping[str, Mapping[str, np.ndarray]], bucket_set: str,
          bucket: str | None) -> dict[str, np.ndarray]:
    """Each retriever's hits over ``bucket`` (``None``: every bucket) of every relation of
    ``bucket_set``; group keys are ``set/relation/bucket<b>``."""
    chosen = [by_retriever for key, by_retriever in sorted(hits.items())
              if key.split("/")[0] == bucket_set
              and (bucket is None or key.split("/")[-1] == bucket)]
    names = list(chosen[0]) if chosen else []
    return {name: np.concatenate([group[name] for group in chosen]).astype(np.float64)
            for name in names}


def _two_pools(first: dict[str, np.ndarray], second: dict[str, np.ndarray], n: int,
               seed: int) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Bootstrap samples and observed values of ``mean(second) - mean(first)`` per retriever."""
    rng = np.random.default_rng(seed)
    a, b = _bootstrap_means(first, n, rng), _bootstrap_means(second, n, rng)
    return ({name: b[name] - a[name] for name in first},
            {name: float(second[name].mean() - first[name].mean()) for name in first})


def bucket_contrasts(hits: Mapping[str, Mapping[str, np.ndarray]], k: int,
                     bucket_order: str = "ascending", n_bootstrap: int = 1000, seed: int = 0,
                     confidence: float = 0.95, reference: str = "bm25") -> dict:
    """The contrasts of the module docstring from ``hits`` (``{group key: {retriever: 0/1 per
    question at k}}``); a contrast whose pools hold no question is left out."""
    out: dict = {"k": k, "n_bootstrap": n_bootstrap, "seed": seed, "confidence": confidence}
    buckets = sorted({key.split("/")[-1] for key, group in hits.items()
                      if key.split("/")[0] == RAND_ENT and len(next(iter(group.values()), ()))},
                     key=lambda b: int(b.removeprefix("bucket")))
    if buckets:
        rare, popular = ((buckets[0], buckets[-1]) if bucket_order == "ascending"
                         else (buckets[-1], buckets[0]))
        rare_hits, popular_hits = _pool(hits, RAND_ENT, rare), _pool(hits, RAND_ENT, popular)
        samples, observed = _two_pools(rare_hits, popular_hits, n_bootstrap, seed)
        rise = {"set": RAND_ENT, "rare_bucket": rare, "popular_bucket": popular,
                "rare_questions": len(next(iter(rare_hits.values()))),
                "popular_questions": len(next(iter(popular_hits.values()))),
                "rise": {name: _interval(observed[name], samples[name], confidence)
                         for name in samples}}
        if reference in samples:
            rise[f"rise_minus_{reference}"] = {
                name: _interval(observed[name] - observed[reference],
                                samples[name] - samples[reference], confidence)
                for name in samples if name != reference}
        out["popularity_rise"] = rise
    seen, random = _pool(hits, TRAIN_ENT, None), _pool(hits, RAND_ENT, None)
    if seen and random and len(next(iter(seen.values()))) and len(next(iter(random.values()))):
        samples, observed = _two_pools(random, seen, n_bootstrap, seed)
        out["seen_minus_random"] = {
            "train_ent_questions": len(next(iter(seen.values()))),
            "rand_ent_questions": len(next(iter(random.values()))),
            "difference": {name: _interval(observed[name], samples[name], confidence)
                           for name in samples}}
    return out
