"""TREC run files: ``qid Q0 docid rank score tag``, one retrieved document a line.

Fields are separated by white space (written with single spaces); ranks start at 1. Scores are
written with ``repr`` so they read back exactly. Errors name the file and the 1-based line.

The rank column is the ranking: :func:`read_trec_run` orders by it, as the evaluation does.
``trec_eval`` ignores it and sorts by score, breaking ties by document id (descending), so a
run with tied scores (reciprocal rank fusion ties ~46 % of the demo hybrid's neighbours) would
be scored there in another order. :func:`write_trec_run` therefore lowers each tied score by
the fewest float steps that make the scores strictly decreasing (Anserini also perturbs tied
scores for trec_eval, after rounding them to four decimals): both tools then read the same
ranking, and no score moves by more than a few units in the last place.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview
from tasks.io.text import numbered_lines

_FIELDS = "6 white-space separated fields (qid Q0 docid rank score tag)"
_RANK = re.compile(r"[0-9]+")


def _check_token(value: str, what: str) -> None:
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"TREC {what} must be non-empty without white space: {value!r}")


def write_trec_run(path: str | Path, run: Mapping[str, Sequence[tuple[str, float]]],
                   tag: str) -> Path:
    """Atomically write ``{qid: [(docid, score), ...]}`` as a TREC run.

    Queries come in mapping order, documents in the given order with ranks 1, 2, ... A score
    equal to the one above it is written one float step (``math.nextafter``) below that one's
    written score, so the scores decrease strictly in rank order and ``trec_eval`` reads the
    same ranking (module docstring). Raises ``ValueError`` for an id or tag holding white
    space, a score that is not finite, or a score above the one ranked before it (a ranking
    that is not in score order).
    """
    _check_token(tag, "tag")
    with atomic_write(path, newline="\n") as out:
        for qid, ranking in run.items():
            _check_token(qid, "query id")
            above = above_written = math.inf
            for rank, (docid, score) in enumerate(ranking, start=1):
                _check_token(docid, "document id")
                score = float(score)
                if not math.isfinite(score):
                    raise ValueError(f"score of {docid!r} for {qid!r} is not finite: {score}")
                if score > above:
                    raise ValueError(f"{qid!r}: {docid!r} at rank {rank} scores {score!r}, above "
                                     f"the {above!r} ranked before it (not in score order)")
                above = score
                if score >= above_written:  # tied with the one above (or with its nudged score)
                    score = math.nextafter(above_written, -math.inf)
                above_written = score
                out.write(f"{qid} Q0 {docid} {rank} {score!r} {tag}\n")
    return Path(path)


def read_trec_run(path: str | Path, on_error: str = "raise",
                  skips: SkipCounter | None = None) -> dict[str, list[tuple[str, float]]]:
    """Read a TREC run into ``{qid: [(docid, score), ...]}``, each list in rank order (ties
    in file order), queries in the order of their first line.

    Raises :class:`DataFormatError` naming the line (or counts it in ``skips`` with
    ``on_error="skip"``) for a line without 6 fields, a second field other than ``Q0``, a rank
    that is not a non-negative integer written in digits 0-9 only, a score that is not a finite
    number, or a document listed twice for a query. Blank lines are ignored; a UTF-8 byte-order
    mark is stripped. Bytes that are not UTF-8 always raise, even when skipping, naming the
    first bad line.

    A well-formed file (as :func:`write_trec_run` writes it) is parsed by Arrow's CSV reader,
    2-3x faster than line by line (``bench/bench_trec.py``); any file that Arrow's stricter
    parse or the vectorised checks do not accept is read line by line, which gives the same
    result or names the bad line.
    """
    fast = _read_well_formed(path)
    if fast is not None:
        return fast
    return _read_line_by_line(path, on_error, skips)


def _read_well_formed(path: str | Path) -> dict[str, list[tuple[str, float]]] | None:
    """The run of a file in the exact single-space format, or ``None`` when anything in it is
    not (bad field count, white space other than single spaces, a field Arrow does not parse as
    the line-by-line reader would, ``Q0`` missing, a rank not all digits, a score that is not
    finite, a document twice for a query, bytes that are not UTF-8)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    types = {"qid": pa.string(), "q0": pa.string(), "docid": pa.string(), "rank": pa.string(),
             "score": pa.float64(), "tag": pa.string()}
    try:
        table = csv.read_csv(
            path, read_options=csv.ReadOptions(column_names=names, use_threads=False),
            parse_options=csv.ParseOptions(delimiter=" ", quote_char=False,
                                           double_quote=False, escape_char=False,
                                           newlines_in_values=False, ignore_empty_lines=True),
            convert_options=csv.ConvertOptions(column_types=types, null_values=[],
                                               strings_can_be_null=False,
                                               quoted_strings_can_be_null=False))
        rank_text = table["rank"]
        if not pc.all(pc.match_substring_regex(rank_text, "^[0-9]+$")).as_py():
            return None
        rank = pc.cast(rank_text, pa.int64())        # ArrowInvalid past int64
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    if table.num_rows == 0:
        return None
    if (not pc.all(pc.equal(table["q0"], "Q0")).as_py()
            or not pc.all(pc.is_finite(table["score"])).as_py()):
        return None
    qids = table["qid"].combine_chunks().dictionary_encode()
    docs = table["docid"].combine_chunks().dictionary_encode()
    for values in (qids.dictionary, docs.dictionary, pc.unique(table["tag"])):
        if (pc.any(pc.equal(values, "")).as_py()
                or pc.any(pc.match_substring_regex(values, _WHITE_SPACE)).as_py()):
            return None
    query = qids.indices.to_numpy().astype(np.int64)
    pairs = np.sort(query * len(docs.dictionary) + docs.indices.to_numpy())
    if (pairs[1:] == pairs[:-1]).any():
        return None
    rank = rank.to_numpy()
    order = np.argsort(rank, kind="stable")
    order = order[np.argsort(query[order], kind="stable")]
    starts = np.searchsorted(query[order], np.arange(len(qids.dictionary) + 1))
    docids = table["docid"].take(pa.array(order)).to_pylist()
    scores = table["score"].take(pa.array(order)).to_pylist()
    return {qid: list(zip(docids[start:end], scores[start:end], strict=True))
            for qid, start, end in zip(qids.dictionary.to_pylist(), starts[:-1], starts[1:],
                                       strict=True)}


#: An RE2 character class of exactly the characters ``str.split()`` splits on (``str.isspace``:
#: ASCII and Unicode white space; RE2's ``\s`` is ASCII only). A test checks it against
#: ``str.isspace`` over every code point.
_WHITE_SPACE = (r"[\x{9}-\x{d}\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}"
                r"\x{2028}-\x{2029}\x{202f}\x{205f}\x{3000}]")


def _read_line_by_line(path: str | Path, on_error: str,
                       skips: SkipCounter | None) -> dict[str, list[tuple[str, float]]]:
    """:func:`read_trec_run` one line at a time: every check with the line it fails on."""
    ranked: dict[str, list[tuple[int, str, float]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in numbered_lines(path):
        fields = line.split()
        if not fields:
            continue
        try:
            qid, docid, rank, score = _parse_line(fields, line, path, f"line {lineno}")
            if (qid, docid) in seen:
                raise DataFormatError(path, f"line {lineno}", "each document once per query",
                                      f"{docid} again for {qid} (first on line "
                                      f"{seen[qid, docid]})")
        except DataFormatError as error:
            handle(error, on_error, skips)
            continue
        seen[qid, docid] = lineno
        ranked.setdefault(qid, []).append((rank, docid, score))
    return {qid: [(docid, score) for _, docid, score in sorted(rows, key=lambda r: r[0])]
            for qid, rows in ranked.items()}


def _parse_line(fields: list[str], line: str, path: str | Path,
                where: str) -> tuple[str, str, int, float]:
    """``(qid, docid, rank, score)`` of a run line split into ``fields``."""
    if len(fields) != 6:
        raise DataFormatError(path, where, _FIELDS, f"{len(fields)} in {preview(line.rstrip())}")
    qid, q0, docid, rank_text, score_text, _tag = fields
    if q0 != "Q0":
        raise DataFormatError(path, where, "'Q0' as the second field", preview(q0))
    if not _RANK.fullmatch(rank_text):
        raise DataFormatError(path, where, "an integer rank (digits only)", preview(rank_text))
    try:
        score = float(score_text)
    except ValueError:
        raise DataFormatError(path, where, "a numeric score", preview(score_text)) from None
    if not math.isfinite(score):
        raise DataFormatError(path, where, "a finite score", preview(score_text))
    return qid, docid, int(rank_text), score
