"""Named, independent random streams derived from the world's seed.

Each part of the generator draws from its own stream (``stream(seed, "names")``), so a change in
one part never shifts the draws of another. Streams are :class:`random.Random` seeded from a
string, which is deterministic across processes and platforms (no hash randomisation).
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def stream(seed: int, name: str) -> random.Random:
    """An independent generator for one named part of the world."""
    return random.Random(f"qastress-demo-world:{seed}:{name}")


def weighted_sample(rng: random.Random, items: Sequence[T], weights: Sequence[float],
                    k: int) -> list[T]:
    """``k`` distinct items drawn with probability proportional to ``weights`` (no repeats).

    Efraimidis-Spirakis keys ``u ** (1 / w)``: the ``k`` largest keys are a weighted sample
    without replacement. Items with weight 0 are never drawn.
    """
    keyed = []
    for index, (item, weight) in enumerate(zip(items, weights, strict=True)):
        if weight <= 0:
            continue
        keyed.append((rng.random() ** (1.0 / weight), index, item))
    keyed.sort(key=lambda entry: (-entry[0], entry[1]))
    return [item for _, _, item in keyed[:k]]


class WeightedChooser:
    """Repeated weighted choice (with replacement) from a fixed list, in O(log n) a draw."""

    def __init__(self, items: Sequence[T], weights: Sequence[float]):
        if not items:
            raise ValueError("WeightedChooser needs at least one item")
        self.items = list(items)
        self.cumulative = list(itertools.accumulate(weights))
        if self.cumulative[-1] <= 0:
            raise ValueError("WeightedChooser needs a positive total weight")

    def choose(self, rng: random.Random) -> T:
        """One item, with probability proportional to its weight."""
        point = rng.random() * self.cumulative[-1]
        return self.items[min(bisect.bisect_right(self.cumulative, point), len(self.items) - 1)]
