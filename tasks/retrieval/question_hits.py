"""Per-question judgements of a run: the first answer-bearing rank of every question (Parquet).

:func:`~tasks.retrieval.relation_results.evaluate_run` judges a run once and writes, beside its
metrics, one row per question: ``qid``, ``group`` (the relation file) and ``first_hit`` (the
0-based rank of the first passage with an answer over the whole ranking; null: none), in the
query set's order. Whatever compares runs question by question (the paired bootstrap of
:func:`~tasks.retrieval.comparison.compare_retrievers`) reads these files instead of reading
the runs and judging their passages again. A question is answered in the top ``k`` exactly
when ``first_hit < k`` (:func:`tasks.evaluation.topk.hits_at_k`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from tasks.io.errors import DataFormatError
from tasks.io.tables import read_table, write_table
from tasks.retrieval.evaluate import question_id

SCHEMA = pa.schema([pa.field("qid", pa.string(), nullable=False),
                    pa.field("group", pa.string(), nullable=False),
                    pa.field("first_hit", pa.int32())])


@dataclass(frozen=True)
class QuestionHits:
    """The judged questions of one run, in the query set's order."""

    qids: list[str]
    groups: list[str]
    first_hits: list[int | None]


def write_question_hits(path: Path, first_hits: Mapping[str, Sequence[int | None]]) -> Path:
    """Write ``{group: first hit of each of its questions}`` (the ``first_hits`` of
    :func:`tasks.retrieval.core.evaluate`'s evaluations), question ids as runs name them
    (:func:`~tasks.retrieval.evaluate.question_id`)."""
    rows: dict[str, list] = {"qid": [], "group": [], "first_hit": []}
    for group, hits in first_hits.items():
        rows["qid"].extend(question_id(group, i) for i in range(len(hits)))
        rows["group"].extend([group] * len(hits))
        rows["first_hit"].extend(hits)
    write_table(path, rows, schema=SCHEMA)
    return Path(path)


def read_question_hits(path: Path) -> QuestionHits:
    """The rows of :func:`write_question_hits`; a file without its columns is a
    :class:`~tasks.io.errors.DataFormatError` naming it."""
    table = read_table(path)
    missing = [name for name in SCHEMA.names if name not in table.column_names]
    if missing:
        raise DataFormatError(path, "columns", f"{', '.join(SCHEMA.names)} (a question-hits "
                              "table of evaluate_run)", f"no {', '.join(missing)}")
    return QuestionHits(table.column("qid").to_pylist(), table.column("group").to_pylist(),
                        table.column("first_hit").to_pylist())


def aligned_first_hits(paths: Mapping[str, Path]) -> dict[str, list[int | None]]:
    """``{name: first hits}`` of several runs' question-hits files, which must hold the same
    questions in the same order (else a ``ValueError`` naming the two files)."""
    read = {name: read_question_hits(path) for name, path in paths.items()}
    if not read:
        return {}
    first_name, first = next(iter(read.items()))
    for name, hits in read.items():
        if hits.qids != first.qids:
            extra = sorted(set(hits.qids) ^ set(first.qids))[:3]
            raise ValueError(
                f"{paths[name]} and {paths[first_name]} judge different questions "
                f"({len(hits.qids)} and {len(first.qids)}"
                + (f"; e.g. {', '.join(extra)} in only one" if extra else "; in another order")
                + "): evaluate both runs on the same query set")
    return {name: hits.first_hits for name, hits in read.items()}
