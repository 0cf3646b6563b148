"""Popularity: hyperlink counts that follow a power law, C / rank^s.

Generated subjects get a random popularity rank (1 = most linked). Real objects (countries,
cities, languages...) are ranked by how many facts point at them. All entities are then put in
one order and given ``max(1, round(C / rank ** s))`` in-links, so the counts are exactly
Zipf-distributed: a heavy head of famous entities and a long tail of rare ones.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence


def subject_ranks(rng: random.Random, subject_ids: Sequence[str]) -> dict[str, int]:
    """A random popularity rank (1-based) for each generated subject."""
    order = list(subject_ids)
    rng.shuffle(order)
    return {entity_id: rank for rank, entity_id in enumerate(order, start=1)}


def zipf_count(rank: int, max_count: int, exponent: float) -> int:
    """In-links of the entity at ``rank``: ``max(1, round(max_count / rank ** exponent))``."""
    return max(1, round(max_count / rank ** exponent))


def hyperlink_counts(subject_rank: Mapping[str, int], object_indegree: Mapping[str, int],
                     max_count: int, exponent: float) -> dict[str, int]:
    """Counts for every entity, from one global order of subjects and objects.

    A subject at rank r weighs ``1 / r ** s``; an object weighs its in-degree relative to the
    most used object (so the most used country ranks with the most famous subjects). Ties are
    broken by id, which keeps the result deterministic.
    """
    weights: dict[str, float] = {
        entity_id: 1.0 / rank ** exponent for entity_id, rank in subject_rank.items()
    }
    top = max(object_indegree.values(), default=1) or 1
    for entity_id, degree in object_indegree.items():
        weights[entity_id] = max(weights.get(entity_id, 0.0), 0.999 * degree / top)
    # Objects nothing points at rank last, in id order.
    order = sorted(weights, key=lambda entity_id: (-weights[entity_id], _id_number(entity_id)))
    return {entity_id: zipf_count(rank, max_count, exponent)
            for rank, entity_id in enumerate(order, start=1)}


def quantile(rank: int, total: int) -> float:
    """Position of ``rank`` in ``[0, 1)``: 0 for the most popular, near 1 for the rarest."""
    return (rank - 1) / max(1, total)


def _id_number(entity_id: str) -> int:
    return int(entity_id[1:]) if entity_id[1:].isdigit() else 0
