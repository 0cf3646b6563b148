"""TREC run files: ``qid Q0 docid rank score tag``, one retrieved document a line.

Fields are separated by white space (written with single spaces); ranks start at 1. Scores are
written with ``repr`` so they read back exactly. Errors name the file and the 1-based line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview

_FIELDS = "6 white-space separated fields (qid Q0 docid rank score tag)"


def _check_token(value: str, what: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"TREC {what} must be non-empty without white space: {value!r}")


def write_trec_run(path: str | Path, run: Mapping[str, Sequence[tuple[str, float]]],
                   tag: str) -> Path:
    """Atomically write ``{qid: [(docid, score), ...]}`` as a TREC run.

    Queries come in mapping order, documents in the given order with ranks 1, 2, ...
    Raises ``ValueError`` for an id or tag holding white space, or a score that is not finite.
    """
    _check_token(tag, "tag")
    with atomic_write(path, newline="\n") as out:
        for qid, ranking in run.items():
            _check_token(qid, "query id")
            for rank, (docid, score) in enumerate(ranking, start=1):
                _check_token(docid, "document id")
                score = float(score)
                if not math.isfinite(score):
                    raise ValueError(f"score of {docid!r} for {qid!r} is not finite: {score}")
                out.write(f"{qid} Q0 {docid} {rank} {score!r} {tag}\n")
    return Path(path)


def read_trec_run(path: str | Path, on_error: str = "raise",
                  skips: SkipCounter | None = None) -> dict[str, list[tuple[str, float]]]:
    """Read a TREC run into ``{qid: [(docid, score), ...]}``, each list in rank order.

    Raises :class:`DataFormatError` naming the line (or counts it in ``skips`` with
    ``on_error="skip"``) for a line without 6 fields, a second field other than ``Q0``, a rank
    that is not an integer, a score that is not a number, or a document listed twice for a query.
    Blank lines are ignored.
    """
    ranked: dict[str, list[tuple[int, str, float]]] = {}
    seen: dict[tuple[str, str], int] = {}
    with open(path, encoding="utf-8") as stream:
        for lineno, line in enumerate(stream, start=1):
            fields = line.split()
            if not fields:
                continue
            where = f"line {lineno}"
            try:
                if len(fields) != 6:
                    raise DataFormatError(path, where, _FIELDS,
                                          f"{len(fields)} in {preview(line.rstrip())}")
                qid, q0, docid, rank_text, score_text, _tag = fields
                if q0 != "Q0":
                    raise DataFormatError(path, where, "'Q0' as the second field", preview(q0))
                try:
                    rank = int(rank_text)
                except ValueError:
                    raise DataFormatError(path, where, "an integer rank",
                                          preview(rank_text)) from None
                try:
                    score = float(score_text)
                except ValueError:
                    raise DataFormatError(path, where, "a numeric score",
                                          preview(score_text)) from None
                if math.isnan(score):
                    raise DataFormatError(path, where, "a numeric score", preview(score_text))
                if (qid, docid) in seen:
                    raise DataFormatError(path, where, "each document once per query",
                                          f"{docid} again for {qid} (first on line "
                                          f"{seen[qid, docid]})")
            except DataFormatError as error:
                handle(error, on_error, skips)
                continue
            seen[qid, docid] = lineno
            ranked.setdefault(qid, []).append((rank, docid, score))
    return {qid: [(docid, score) for _, docid, score in sorted(rows, key=lambda r: r[0])]
            for qid, rows in ranked.items()}
