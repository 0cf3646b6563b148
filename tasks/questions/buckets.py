"""Subject-frequency buckets (paper §3, Figure 1): "rand-ent".

A relation's facts are ordered by the frequency of their subject (its Wikipedia hyperlink count)
and cut into ``n`` buckets of approximately equal *cumulative* frequency: with a long-tailed
popularity, the rarest bucket holds thousands of subjects and the most frequent one a handful.
Each cut is placed where the running sum is closest to ``k * total / n``, so every bucket's
cumulative frequency is within the largest single frequency of ``total / n``; when no subject
alone carries more than ``total / (21 n)`` the buckets are within 10% of each other. A subject
too frequent to share a bucket (more than an equal share of what is left) gets one of its own.

Bucket numbering follows ``order``: ``"ascending"`` numbers from the rarest subjects (bucket 0)
to the most frequent; ``"descending"`` is the reverse, which is how the files of the official
release are numbered (its ``bucket0`` holds the most famous subjects).
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import accumulate
from pathlib import Path

from tasks.io.errors import SkipCounter
from tasks.io.hyperlinks import read_hyperlink_counts
from tasks.orchestration import artifact_task
from tasks.questions.assignments import BUCKETS_SCHEMA, read_assignments, write_assignments
from tasks.questions.facts import Fact, facts_by_key, qid_order, read_facts_table, sample_facts

log = logging.getLogger(__name__)

ORDERS = ("ascending", "descending")


def cut_points(frequencies: Sequence[int], n_buckets: int) -> list[int]:
    """Cut indexes ``[0, c1, ..., c_{n-1}, N]`` over frequencies sorted ascending.

    Bucket ``b`` is ``frequencies[c_b:c_{b+1}]``. First, from the top, a subject whose frequency
    alone exceeds an equal share of what is left (``rest / buckets left``) gets a bucket of its
    own: no cut can balance it. The other subjects are cut where the running sum is closest to
    ``k * rest / buckets left`` (the earlier index on a tie), so each of those buckets is within
    the largest frequency among them of an equal share. All-zero frequencies are cut into
    buckets of equal size instead.
    """
    if n_buckets < 1:
        raise ValueError(f"n_buckets must be >= 1, not {n_buckets}")
    if any(b < a for a, b in zip(frequencies, frequencies[1:], strict=False)):
        raise ValueError("frequencies must be sorted ascending")
    size = len(frequencies)
    rest, left, heavy = sum(frequencies), n_buckets, 0
    while left > 1 and heavy < size and rest > 0:
        top = frequencies[size - heavy - 1]
        if top * left <= rest:
            break
        heavy, rest, left = heavy + 1, rest - top, left - 1
    body = size - heavy
    prefix = [0, *accumulate(frequencies[:body])]
    cuts = [0]
    for k in range(1, left):
        if rest == 0:
            cuts.append(max(cuts[-1], round(k * body / left)))
            continue
        target = k * rest / left
        i = bisect_left(prefix, target, lo=cuts[-1])
        candidates = [j for j in (i - 1, i) if cuts[-1] <= j <= body]
        cuts.append(min(candidates, key=lambda j: (abs(prefix[j] - target), j)))
    cuts.append(body)
    cuts.extend(body + i + 1 for i in range(heavy))
    return cuts


def bucket_of_sorted(frequencies: Sequence[int], n_buckets: int) -> list[int]:
    """Bucket index (0 = rarest) of each position of ascending ``frequencies``."""
    cuts = cut_points(frequencies, n_buckets)
    labels: list[int] = []
    for b in range(n_buckets):
        labels.extend([b] * (cuts[b + 1] - cuts[b]))
    return labels


@dataclass(frozen=True, slots=True)
class BucketedFact:
    """A fact with its subject's frequency and bucket."""

    fact: Fact
    frequency: int
    bucket: int


@dataclass(frozen=True, slots=True)
class BucketRange:
    """What one bucket holds: facts, summed frequency and the frequency range."""

    bucket: int
    facts: int
    cumulative: int
    min_frequency: int | None
    max_frequency: int | None


def bucket_facts(facts: Sequence[Fact], frequency: Mapping[str, int], n_buckets: int = 8,
                 order: str = "ascending", key: str = "subject_id") -> list[BucketedFact]:
    """Bucket one relation's facts by subject frequency; result in bucket, frequency order.

    ``frequency`` maps subject ids (``key="subject_id"``) or subject labels
    (``key="subject_label"``) to hyperlink counts; a subject without a count has frequency 0.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, not {order!r}")
    scored = sorted(((int(frequency.get(getattr(f, key), 0)), f) for f in facts),
                    key=lambda item: (item[0], qid_order(item[1].subject_id)))
    labels = bucket_of_sorted([freq for freq, _ in scored], n_buckets)
    if order == "descending":
        labels = [n_buckets - 1 - b for b in labels]
    out = [BucketedFact(f, freq, b) for (freq, f), b in zip(scored, labels, strict=True)]
    return sorted(out, key=lambda item: (item.bucket, item.frequency,
                                         qid_order(item.fact.subject_id)))


def bucket_ranges(bucketed: Sequence[BucketedFact], n_buckets: int = 8) -> list[BucketRange]:
    """Per bucket: number of facts, cumulative frequency, min and max frequency."""
    ranges = []
    for b in range(n_buckets):
        freqs = [item.frequency for item in bucketed if item.bucket == b]
        ranges.append(BucketRange(b, len(freqs), sum(freqs), min(freqs, default=None),
                                  max(freqs, default=None)))
    return ranges


def sample_buckets(bucketed: Sequence[BucketedFact], per_bucket: int, seed: int,
                   relation: str, n_buckets: int = 8) -> dict[int, list[BucketedFact]]:
    """rand-ent: at most ``per_bucket`` facts drawn at random from each bucket (seeded)."""
    out: dict[int, list[BucketedFact]] = {}
    for b in range(n_buckets):
        members = [item for item in bucketed if item.bucket == b]
        facts = sample_facts([m.fact for m in members], per_bucket, seed, relation,
                             f"bucket{b}")
        chosen = {f.subject_id for f in facts}
        out[b] = [m for m in members if m.fact.subject_id in chosen]
    return out


def read_frequencies(hyperlinks: Path, key: str = "wikidata", on_error: str = "raise",
                     skips: SkipCounter | None = None) -> dict[str, int]:
    """Hyperlink counts (``entity<TAB>count``) keyed by Wikidata id or Wikipedia title."""
    return read_hyperlink_counts(hyperlinks, key=key,  # type: ignore[arg-type]
                                 on_error=on_error, skips=skips)


def bucket_facts_step(facts_path: Path, hyperlinks: Path, relations: list[str],
                      buckets_path: Path, n_buckets: int = 8, order: str = "ascending",
                      key: str = "wikidata", on_bad_record: str = "raise") -> dict:
    """Bucket every fact of the selected relations; write ``buckets_path``; return the ranges.

    A hyperlink-count line that is not ``entity<TAB>integer`` raises a
    :class:`~tasks.io.errors.DataFormatError` naming the file and line, or is counted
    (``on_bad_record="skip"``).
    """
    by_relation, _ = read_facts_table(facts_path)
    skips = SkipCounter(source=f"hyperlink counts {hyperlinks}")
    frequency = read_frequencies(hyperlinks, key, on_bad_record, skips)
    if skips.total:
        log.warning("%s", skips.summary())
    attribute = "subject_id" if key == "wikidata" else "subject_label"
    rows: list[dict[str, object]] = []
    ranges: dict[str, list[dict]] = {}
    missing = 0
    for relation in relations:
        facts = by_relation.get(relation, [])
        missing += sum(getattr(f, attribute) not in frequency for f in facts)
        bucketed = bucket_facts(facts, frequency, n_buckets, order, attribute)
        rows.extend({"relation": relation, "subject_id": item.fact.subject_id,
                     "frequency": item.frequency, "bucket": item.bucket} for item in bucketed)
        ranges[relation] = [asdict(r) for r in bucket_ranges(bucketed, n_buckets)]
    write_assignments(buckets_path, rows, BUCKETS_SCHEMA)
    return {"ranges": ranges, "subjects_without_count": missing,
            "skipped_lines": skips.total, "skip_summary": skips.summary()}


def read_buckets(buckets_path: Path, by_relation: Mapping[str, Sequence[Fact]]
                 ) -> dict[str, list[BucketedFact]]:
    """The buckets written by :func:`bucket_facts_step` (bucket, frequency order)."""
    index = facts_by_key(by_relation)
    out: dict[str, list[BucketedFact]] = {}
    for row in read_assignments(buckets_path):
        relation = str(row["relation"])
        out.setdefault(relation, []).append(BucketedFact(
            index[(relation, str(row["subject_id"]))], int(row["frequency"]),  # type: ignore
            int(row["bucket"])))  # type: ignore[arg-type]
    return out


bucket_facts_task = artifact_task(bucket_facts_step, outputs=("buckets_path",),
                                  name="bucket facts by subject frequency")
