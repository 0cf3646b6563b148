"""The retrieval core: the passages of a set of runs, read once, and one evaluation.

:func:`collect_passages` streams the passage collection (``psgs_w100.tsv``, or the contexts of
the paraphrased sets) ONCE per flow run for every passage any run retrieved, test split and
buckets and every retriever together, into one Parquet table (``id``, ``title``, ``text``);
every evaluation then reads that small table (:func:`load_passages`). :func:`evaluate` scores a
run against a :class:`~tasks.retrieval.query_sets.QuerySet` -- the test split, the frequency
buckets, the paraphrased sets, any retriever -- through
:func:`tasks.retrieval.evaluate.evaluate_relations` (``has_answer`` of every ranked passage and
the first-hit rank of every question, per group). The metrics of each study (per relation,
per bucket, orig vs para) are views of its result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pyarrow as pa

from tasks.evaluation.has_answer import DEFAULT_MODE, HasAnswerMode
from tasks.io.tables import read_table, write_table
from tasks.io.trec import read_trec_run
from tasks.orchestration import artifact_task
from tasks.retrieval.evaluate import RelationEvaluation, Run, evaluate_relations, passages_by_id
from tasks.retrieval.query_sets import QuerySet

Passages = Mapping[str, tuple[str, str]]
PASSAGE_SCHEMA = pa.schema([("id", pa.string()), ("title", pa.string()), ("text", pa.string())])


def retrieved_ids(runs: Iterable[Run], depth: int | None = None) -> set[str]:
    """Every passage id in the runs (the first ``depth`` of each ranking when given)."""
    return {pid for run in runs for hits in run.values() for pid, _ in hits[:depth]}


def collect_passages(run_paths: Sequence[Path], passages_tsv: Path, table_path: Path) -> Path:
    """The passages retrieved by any of the TREC runs, read from the collection in one pass,
    as a Parquet table ``id, title, text`` (sorted by id; atomic).

    A retrieved id missing from the collection is an error naming the file.
    """
    wanted = retrieved_ids(read_trec_run(path) for path in run_paths)
    found = passages_by_id(passages_tsv, wanted)
    ids = sorted(found)
    write_table(table_path, pa.table({"id": ids, "title": [found[i][0] for i in ids],
                                      "text": [found[i][1] for i in ids]},
                                     schema=PASSAGE_SCHEMA))
    return Path(table_path)


def load_passages(table_path: Path) -> dict[str, tuple[str, str]]:
    """``{id: (title, text)}`` of a table of :func:`collect_passages`."""
    table = read_table(table_path, columns=["id", "title", "text"]).to_pydict()
    return dict(zip(table["id"], zip(table["title"], table["text"], strict=True), strict=True))


def evaluate(run: Run, query_set: QuerySet, passages: Passages, ks: Sequence[int],
             mode: HasAnswerMode = DEFAULT_MODE,
             result_ctxs: int | None = None) -> dict[str, RelationEvaluation]:
    """Score a run on a query set: ``{group: evaluation}`` (ranked hits, first-hit ranks over
    the whole ranking, accuracy at each k, and ``has_answer`` of the first ``result_ctxs``
    passages: all when ``None``). Empty groups are left out (no accuracy)."""
    groups = {key: list(items) for key, items in query_set.groups.items() if items}
    if not groups:
        return {}
    return evaluate_relations(run, groups, passages, ks, mode, result_ctxs=result_ctxs)


def first_hits(run: Run, query_set: QuerySet, passages: Passages, depth: int,
               mode: HasAnswerMode = DEFAULT_MODE) -> dict[str, list[int | None]]:
    """First-hit rank (``None``: none) of every question within the top ``depth``, by group."""
    truncated = {qid: list(hits)[:depth] for qid, hits in run.items()}
    return {key: e.first_hits
            for key, e in evaluate(truncated, query_set, passages, [depth], mode,
                                   result_ctxs=0).items()}


def passage_lookup(passages: Path, runs: Iterable[Run]) -> dict[str, tuple[str, str]]:
    """The passages of the runs from a table of :func:`collect_passages` (``.parquet``) or,
    streamed once, from a passage TSV."""
    if Path(passages).suffix == ".parquet":
        return load_passages(passages)
    return passages_by_id(passages, retrieved_ids(runs))


collect_passages_task = artifact_task(collect_passages, outputs=("table_path",),
                                      name="collect retrieved passages")
