"""Top-k retrieval accuracy as computed by the EntityQuestions ``utils/accuracy.py`` script.

- A question counts at ``k`` when its first answer-bearing passage has 0-based rank ``< k``.
  A ``k`` larger than the number of retrieved passages is accepted and gives the accuracy over
  all of them (the script's ``found_k < k`` test); ``k = 0`` gives 0.
- Accuracy is a fraction (``n_correct / n_questions``); the script prints it as ``{:.1%}``.
- The macro average is the plain mean over relation files of their accuracies at each ``k``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np


def first_hit_ranks(has_answer_rows: Sequence[Sequence[bool]]) -> list[int | None]:
    """0-based rank of each question's first answer-bearing passage, ``None`` when none has one."""
    return [next((rank for rank, hit in enumerate(row) if hit), None) for row in has_answer_rows]


def _check_ks(ks: Iterable[int]) -> list[int]:
    checked: list[int] = []
    for k in ks:
        if isinstance(k, bool) or int(k) != k or k < 0:
            raise ValueError(f"k must be a non-negative integer, not {k!r}")
        if int(k) not in checked:
            checked.append(int(k))
    return checked


def hits_at_k(first_hits: Sequence[int | None], k: int) -> list[int]:
    """1 for each question answered within the top ``k``, else 0 (input to the bootstrap)."""
    (k,) = _check_ks([k])
    return [1 if hit is not None and hit < k else 0 for hit in first_hits]


def topk_accuracy(first_hits: Sequence[int | None], ks: Iterable[int]) -> dict[int, float]:
    """Share of questions whose first hit rank is ``< k``, for each ``k`` (in the given order)."""
    checked = _check_ks(ks)
    n = len(first_hits)
    if n == 0:
        raise ValueError("top-k accuracy of an empty question list is undefined")
    found = [hit for hit in first_hits if hit is not None]
    return {k: sum(1 for hit in found if hit < k) / n for k in checked}


def macro_average(per_relation: Mapping[str, Mapping[int, float]]) -> dict[int, float]:
    """Mean over relation files of the accuracy at each ``k`` (the script's "Average" row).

    Every relation must report the same ``k`` values; sums run in the mapping's order.
    """
    if not per_relation:
        raise ValueError("macro average over zero relation files is undefined")
    relations = list(per_relation)
    ks = list(per_relation[relations[0]])
    for relation in relations[1:]:
        if set(per_relation[relation]) != set(ks):
            raise ValueError(
                f"relation {relation!r} reports k values {sorted(per_relation[relation])}, "
                f"but {relations[0]!r} reports {sorted(ks)}"
            )
    average: dict[int, float] = {}
    for k in ks:
        total = 0
        for relation in relations:
            total += per_relation[relation][k]
        average[k] = total / len(relations)
    return average


def bootstrap_difference(
    hits_a: Sequence[int] | np.ndarray,
    hits_b: Sequence[int] | np.ndarray,
    n: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Paired bootstrap of ``accuracy(a) - accuracy(b)`` over the same questions.

    ``hits_a[i]`` / ``hits_b[i]`` are 0/1 (hit at some k) for question ``i`` under retrievers
    A and B. Questions are resampled with replacement ``n`` times (the same resample for both
    retrievers); returns ``(observed difference, low, high)`` with the percentile interval
    (``numpy.percentile``, linear interpolation) at ``confidence``. Deterministic for a seed.
    """
    a = np.asarray(hits_a, dtype=np.float64)
    b = np.asarray(hits_b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"hits must be two 1-d sequences of equal length, got {a.shape} and {b.shape}"
        )
    if a.size == 0:
        raise ValueError("bootstrap over zero questions is undefined")
    if not np.isin(a, (0.0, 1.0)).all() or not np.isin(b, (0.0, 1.0)).all():
        raise ValueError("hits must be 0/1 (or booleans) per question")
    if n < 1:
        raise ValueError(f"n must be >= 1, not {n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    diff = a - b
    size = diff.size
    rng = np.random.default_rng(seed)
    means = np.empty(n, dtype=np.float64)
    # Resample in chunks so that n x size indices never sit in memory at once.
    chunk = max(1, min(n, 2_000_000 // size))
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        idx = rng.integers(0, size, size=(stop - start, size))
        means[start:stop] = diff[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(diff.mean()), float(low), float(high)
