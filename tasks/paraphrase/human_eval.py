"""Human evaluation round trip (Gan & Ng, 2019, §4): raters score each (original, paraphrase)
pair for semantic equivalence and fluency on a 5-point scale; a pair is kept when both raters
give 4 or 5 on both scales.

:func:`export_form` writes one CSV for the raters: columns :data:`FORM_COLUMNS`, one row per
pair and rater (2 raters by default), the rating cells empty, the pairs in a seeded random order
(the same for every rater). :func:`import_ratings` reads the filled CSV back and checks every
row (known pair, known rater, each rating an integer 1-5, no repeated pair/rater, every rated
pair rated by all raters): a bad row raises :class:`~tasks.io.errors.DataFormatError` naming the
file and line, or with ``on_error="skip"`` is counted and left out (a pair left with fewer
raters is then dropped, counted as ``incomplete``). Agreement per scale: exact agreement,
agreement within one point, Cohen's kappa (unweighted and quadratic-weighted) and kappa of the
keep/drop decision.
"""

from __future__ import annotations

import csv
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview

SCALES = ("semantic_equivalence", "fluency")
FORM_COLUMNS = ("pair_id", "rater", "original", "paraphrase", *SCALES)
RATINGS = (1, 2, 3, 4, 5)
INSTRUCTIONS = (
    "Rate each pair on two 5-point scales. semantic_equivalence: 5 = the paraphrase asks "
    "exactly the same question, 1 = a different question. fluency: 5 = fluent English, "
    "1 = incomprehensible. Fill only your own rows (column rater)."
)


def export_form(pairs: Iterable[Mapping[str, Any]], csv_path: Path,
                raters: Sequence[str] = ("A", "B"), seed: int = 2019) -> Path:
    """Write the rating form for ``pairs`` (mappings with ``pair_id``, ``original``,
    ``paraphrase``). Ratings are left empty; the first line is a ``#`` comment with the
    instructions."""
    if len(set(raters)) != len(raters) or len(raters) < 2:
        raise ValueError(f"need at least 2 distinct raters, got {list(raters)}")
    rows = [dict(p) for p in pairs]
    ids = [str(r["pair_id"]) for r in rows]
    if len(set(ids)) != len(ids):
        raise ValueError("pair ids must be unique")
    random.Random(seed).shuffle(rows)
    with atomic_write(csv_path, newline="") as out:
        out.write(f"# {INSTRUCTIONS}\n")
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(FORM_COLUMNS)
        for rater in raters:
            for row in rows:
                writer.writerow([row["pair_id"], rater, row["original"], row["paraphrase"],
                                 "", ""])
    return Path(csv_path)


@dataclass
class RatingsResult:
    """What :func:`import_ratings` read: ratings per pair and rater, kept pairs, agreement."""

    ratings: dict[str, dict[str, dict[str, int]]]
    kept: list[str]
    agreement: dict[str, dict[str, float | None]]
    counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """JSON-ready summary (counts, kept pair ids, agreement)."""
        return {"counts": self.counts, "kept": self.kept, "agreement": self.agreement}


def _rating(value: str, path: Path, where: str, scale: str) -> int:
    text = (value or "").strip()
    if text.isdigit() and int(text) in RATINGS:
        return int(text)
    raise DataFormatError(path, where, f"{scale} as an integer rating 1-5",
                          preview(value) if text else "an empty cell")


def import_ratings(csv_path: Path, pair_ids: Iterable[str] | None = None,
                   raters: Sequence[str] = ("A", "B"), min_rating: int = 4,
                   on_error: str = "raise", skips: SkipCounter | None = None) -> RatingsResult:
    """Read a filled form; keep pairs every rater scores ``>= min_rating`` on both scales.

    ``pair_ids`` (when given) are the pairs that were exported; an unknown id is a bad row.
    Exported pairs nobody rated are counted as ``unrated`` (not an error).
    """
    csv_path = Path(csv_path)
    skips = skips or SkipCounter(str(csv_path))
    known = None if pair_ids is None else {str(p) for p in pair_ids}
    ratings: dict[str, dict[str, dict[str, int]]] = {}
    where_of: dict[str, str] = {}
    with open(csv_path, encoding="utf-8-sig", newline="") as stream:
        lines = (line for line in stream)
        first = next(lines, "")
        offset = 1
        header_line = first
        if first.startswith("#"):
            header_line, offset = next(lines, ""), 2
        header = next(csv.reader([header_line]), [])
        missing = [c for c in FORM_COLUMNS if c not in header]
        if missing:
            raise DataFormatError(csv_path, f"line {offset}",
                                  f"a header with the columns {', '.join(FORM_COLUMNS)}",
                                  f"{preview(header)} (missing {', '.join(missing)})")
        reader = csv.DictReader(lines, fieldnames=header)
        for row in reader:
            where = f"line {offset + reader.line_num}"
            if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
                continue
            try:
                pair_id = (row.get("pair_id") or "").strip()
                rater = (row.get("rater") or "").strip()
                if known is not None and pair_id not in known:
                    raise DataFormatError(csv_path, where, "a pair_id of the exported form",
                                          preview(pair_id))
                if rater not in raters:
                    raise DataFormatError(csv_path, where, f"a rater in {list(raters)}",
                                          preview(rater))
                if rater in ratings.get(pair_id, {}):
                    raise DataFormatError(csv_path, where, "one row per pair and rater",
                                          f"pair {pair_id!r} rated again by {rater!r} "
                                          f"(first at {where_of[f'{pair_id}/{rater}']})")
                scores = {s: _rating(row.get(s, ""), csv_path, where, s) for s in SCALES}
            except DataFormatError as error:
                handle(error, on_error, skips)
                continue
            ratings.setdefault(pair_id, {})[rater] = scores
            where_of[f"{pair_id}/{rater}"] = where
    counts = Counter[str]()
    complete: dict[str, dict[str, dict[str, int]]] = {}
    for pair_id, by_rater in ratings.items():
        if set(by_rater) != set(raters):
            lacking = [r for r in raters if r not in by_rater]
            error = DataFormatError(csv_path, f"pair {pair_id!r}",
                                    f"ratings from every rater ({', '.join(raters)})",
                                    f"none from {', '.join(lacking)}")
            handle(error, on_error, skips)
            counts["incomplete"] += 1
            continue
        complete[pair_id] = by_rater
    kept = [p for p, by_rater in complete.items()
            if all(score >= min_rating for scores in by_rater.values()
                   for score in scores.values())]
    counts.update({"rated": len(complete), "kept": len(kept), "bad_rows": skips.total})
    if known is not None:
        counts["unrated"] = len(known - set(ratings))
    return RatingsResult(complete, kept, agreement(complete, raters, min_rating), dict(counts))


def cohen_kappa(a: Sequence[int], b: Sequence[int], labels: Sequence[int] = RATINGS,
                weights: str | None = None) -> float | None:
    """Cohen's kappa of two raters' labels (``weights="quadratic"`` for the weighted kappa).

    ``None`` when undefined (no items, or both raters always give the same single label).
    """
    if len(a) != len(b):
        raise ValueError("both raters must rate the same items")
    n, k = len(a), len(labels)
    if n == 0:
        return None
    index = {label: i for i, label in enumerate(labels)}
    observed = [[0.0] * k for _ in range(k)]
    for x, y in zip(a, b, strict=True):
        observed[index[x]][index[y]] += 1.0 / n
    row = [sum(r) for r in observed]
    col = [sum(observed[i][j] for i in range(k)) for j in range(k)]

    def weight(i: int, j: int) -> float:
        if weights == "quadratic":
            return ((i - j) / (k - 1)) ** 2 if k > 1 else 0.0
        return 0.0 if i == j else 1.0

    disagreement = sum(weight(i, j) * observed[i][j] for i in range(k) for j in range(k))
    expected = sum(weight(i, j) * row[i] * col[j] for i in range(k) for j in range(k))
    if expected == 0:
        return None
    return 1.0 - disagreement / expected


def agreement(ratings: Mapping[str, Mapping[str, Mapping[str, int]]],
              raters: Sequence[str] = ("A", "B"),
              min_rating: int = 4) -> dict[str, dict[str, float | None]]:
    """Agreement of the first two raters, per scale and for the keep decision."""
    first, second = raters[0], raters[1]
    pairs = [ratings[p] for p in sorted(ratings)]
    out: dict[str, dict[str, float | None]] = {}
    for scale in SCALES:
        a = [p[first][scale] for p in pairs]
        b = [p[second][scale] for p in pairs]
        n = len(a)
        out[scale] = {
            "pairs": n,
            "exact": sum(x == y for x, y in zip(a, b, strict=True)) / n if n else None,
            "within_one": sum(abs(x - y) <= 1 for x, y in zip(a, b, strict=True)) / n
            if n else None,
            "cohen_kappa": cohen_kappa(a, b),
            "quadratic_kappa": cohen_kappa(a, b, weights="quadratic"),
        }
    keep_a = [int(all(p[first][s] >= min_rating for s in SCALES)) for p in pairs]
    keep_b = [int(all(p[second][s] >= min_rating for s in SCALES)) for p in pairs]
    n = len(keep_a)
    out["keep_decision"] = {
        "pairs": n,
        "exact": sum(x == y for x, y in zip(keep_a, keep_b, strict=True)) / n if n else None,
        "cohen_kappa": cohen_kappa(keep_a, keep_b, labels=(0, 1)),
    }
    return out
