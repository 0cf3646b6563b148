"""Summaries of a difference over training seeds (not in the papers).

A model trained once per seed and scored on one fixed set of questions gives, for any
difference (after - before, orig - para, onlyP - onlyQ, ...), one value per seed and a
``seeds x questions`` matrix of per-question differences whose row means those values are.
:func:`seed_summary` gives the mean, sample sd and Student-t interval over the seeds (the
training draws); :func:`summarise_over_seeds` adds the two-level bootstrap interval of the
matrix (:func:`tasks.evaluation.crossed_bootstrap.crossed_bootstrap`), which also covers the
sample of questions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tasks.evaluation.crossed_bootstrap import crossed_bootstrap


@dataclass(frozen=True)
class SeedInterval:
    """The interval settings: confidence level, bootstrap resamples and bootstrap seed."""

    confidence: float = 0.95
    n: int = 1000
    seed: int = 0


def seed_summary(values: Sequence[float], confidence: float = 0.95) -> dict:
    """Mean, sample sd and Student-t interval of per-seed ``values`` (points, 2 decimals),
    with how many are above and below 0. With one value sd and the interval are None."""
    from scipy import stats

    n = len(values)
    if n == 0:
        raise ValueError("no seed values to summarise")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"need 0 < confidence < 1, got {confidence}")
    mean = math.fsum(values) / n
    out: dict = {"seeds": n, "mean": round(mean, 2), "sd": None, "ci_low": None,
                 "ci_high": None, "significant": False,
                 "above_zero": sum(v > 0 for v in values),
                 "below_zero": sum(v < 0 for v in values)}
    if n > 1:
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
        half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
        low, high = mean - half, mean + half
        out.update(sd=round(sd, 2), ci_low=round(low, 2), ci_high=round(high, 2),
                   significant=bool(low > 0 or high < 0))
    return out


def summarise_over_seeds(per_seed: Sequence[float], matrix: np.ndarray,
                         interval: SeedInterval) -> dict:
    """:func:`seed_summary` of the per-seed values plus the two-level bootstrap interval
    (``two_level_low`` / ``two_level_high`` / ``two_level_significant``) of the ``seeds x
    questions`` matrix whose row means they are (same units: points)."""
    out = seed_summary(per_seed, interval.confidence)
    _, low, high = crossed_bootstrap(matrix, n=interval.n, seed=interval.seed,
                                     confidence=interval.confidence)
    return out | {"two_level_low": round(low, 2), "two_level_high": round(high, 2),
                  "two_level_significant": bool(low > 0 or high < 0)}
