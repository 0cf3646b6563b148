"""Two-level bootstrap over training seeds and questions (seeds crossed with questions).

A reader (or retriever) trained once per seed and scored on one fixed set of questions gives a
``seeds x questions`` matrix of per-question scores (or of paired differences, e.g. after -
before augmentation). Its grand mean varies with both the training draw and the sample of
questions: a Student-t interval over the per-seed means covers the first only, a paired
bootstrap over the questions of one seed the second only. Every question is scored under every
seed, so the two factors are *crossed*, not nested: the bootstrap resamples the seeds and the
questions independently, with replacement, and takes the mean of the resampled sub-matrix
(Owen, 2007, "The pigeonhole bootstrap", Annals of Applied Statistics 1(2)). Its variance is
about ``var(seed effects) / S + var(question effects) / Q + var(interaction) / (S Q)``; it
slightly overstates the variance (conservative). With one seed it is a plain bootstrap over the
questions. With a handful of seeds the percentile interval of the seed factor is narrower than
a Student-t interval over the per-seed values (plug-in variance over ``S``, not ``S - 1``, and
no t quantile), so where the seeds dominate the t-interval is the wider, safer one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def crossed_bootstrap(values: np.ndarray | Sequence[Sequence[float]], n: int = 1000,
                      seed: int = 0, confidence: float = 0.95) -> tuple[float, float, float]:
    """Bootstrap of the grand mean of ``values[s, q]`` (seed ``s``, question ``q``), resampling
    seeds and questions independently with replacement ``n`` times: ``(observed mean, low,
    high)``, the percentile interval (``numpy.percentile``, linear) at ``confidence``.

    Each resample is drawn as multinomial counts ``w_s`` over the seeds and ``w_q`` over the
    questions, and its mean is ``w_s @ values @ w_q / (S Q)``, the mean of the sub-matrix that
    repeats rows and columns by those counts. Deterministic for a ``seed``.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or 0 in v.shape:
        raise ValueError(f"values must be a non-empty seeds x questions matrix, got shape "
                         f"{v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("values must be finite")
    if n < 1:
        raise ValueError(f"n must be >= 1, not {n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    n_seeds, n_questions = v.shape
    rng = np.random.default_rng(seed)
    means = np.empty(n, dtype=np.float64)
    # Chunks keep the (resamples x questions) count matrix small for large question sets.
    chunk = max(1, min(n, 2_000_000 // n_questions))
    for start in range(0, n, chunk):
        size = min(n, start + chunk) - start
        w_seeds = rng.multinomial(n_seeds, np.full(n_seeds, 1.0 / n_seeds), size=size)
        w_questions = rng.multinomial(n_questions, np.full(n_questions, 1.0 / n_questions),
                                      size=size)
        means[start:start + size] = ((w_seeds @ v) * w_questions).sum(axis=1)
    means /= n_seeds * n_questions
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(v.mean()), float(low), float(high)
