"""Seen-entity buckets, "train-ent" (paper §3): per frequency bucket, every fact whose subject
was linked in the NQ training questions, i.e. entities a retriever trained on NQ has seen."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tasks.io.linking import LinkedQuestion
from tasks.questions.buckets import BucketedFact


def seen_entities(linked: Iterable[LinkedQuestion]) -> set[str]:
    """Every entity id linked in at least one question."""
    return {entity for item in linked for entity in item.entities}


def seen_buckets(bucketed: Sequence[BucketedFact], seen: set[str],
                 n_buckets: int = 8) -> dict[int, list[BucketedFact]]:
    """Per bucket, the facts whose subject is in ``seen`` (all of them, bucket order kept)."""
    out: dict[int, list[BucketedFact]] = {b: [] for b in range(n_buckets)}
    for item in bucketed:
        if item.fact.subject_id in seen:
            out[item.bucket].append(item)
    return out


def seen_counts(buckets: Mapping[int, Sequence[BucketedFact]]) -> list[int]:
    """Number of facts per bucket, bucket 0 first."""
    return [len(buckets[b]) for b in sorted(buckets)]
