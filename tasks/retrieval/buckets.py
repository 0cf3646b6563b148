"""Accuracy per subject-frequency bucket (paper §4, Figure 1): rand-ent and train-ent.

The one-off bucket files of the configured relations
(``one-off/common-random-buckets/P19/bucket{b}.test.json`` = rand-ent,
``one-off/nq-seen-buckets/P19/bucket{b}.test.json`` = train-ent) are one query set
(:func:`~tasks.retrieval.query_sets.bucket_query_set`), retrieved by every retriever like the
test split (same indexes and encoders) and scored with :func:`tasks.retrieval.core.evaluate`.

Each bucket file is a group keyed ``rand-ent/P19/bucket3``; its question ids are
``rand-ent/P19/bucket3:000017``, unique across sets, relations and buckets. Empty bucket files
(the layout always has all of them) count 0 questions and have no accuracy (``null``).

Steps (plain functions, cached tasks on top): evaluate every retriever's bucket run into
``metrics/retrieval_buckets.json`` -> Figure 1 (PNG + long CSV for ``dvc plots``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from tasks.evaluation.has_answer import DEFAULT_MODE, HasAnswerMode
from tasks.evaluation.topk import hits_at_k
from tasks.io.atomic import write_json
from tasks.io.trec import read_trec_run
from tasks.orchestration import artifact_task
from tasks.reporting.figures import write_bucket_accuracy
from tasks.retrieval.bucket_contrasts import bucket_contrasts
from tasks.retrieval.core import Passages, evaluate, passage_lookup
from tasks.retrieval.evaluate import Run
from tasks.retrieval.query_sets import SET_DIRS, QuerySet, group_key, read_query_set


def hyperlink_ranges(questions_table: Path | None) -> dict[str, list[int]]:
    """``{group key: [min, max]}`` subject hyperlink counts of each bucket file, from
    ``questions.parquet`` (``{}`` when the table is absent)."""
    if questions_table is None or not Path(questions_table).is_file():
        return {}
    from tasks.io.tables import read_table

    names = {directory: name for name, directory in SET_DIRS.items()}
    table = read_table(questions_table, columns=["collection", "relation", "bucket",
                                                 "subject_frequency"]).to_pydict()
    ranges: dict[str, list[int]] = {}
    for collection, relation, bucket, frequency in zip(
            table["collection"], table["relation"], table["bucket"],
            table["subject_frequency"], strict=True):
        if collection not in names or bucket is None or frequency is None:
            continue
        key = group_key(names[collection], relation, int(bucket))
        low, high = ranges.get(key, [int(frequency), int(frequency)])
        ranges[key] = [min(low, int(frequency)), max(high, int(frequency))]
    return ranges


def bucket_accuracy(runs: Mapping[str, Run], query_set: QuerySet, passages: Passages,
                    ks: Sequence[int], mode: HasAnswerMode = DEFAULT_MODE,
                    hits_k: int = 20) -> tuple[dict[str, dict], dict[str, dict[str, np.ndarray]]]:
    """``({group key: {"questions": n, retriever: {"top<k>": percent} | None}}, {group key:
    {retriever: 0/1 per question, an answer in the top hits_k}})``."""
    groups = query_set.groups
    out: dict[str, dict] = {key: {"questions": len(items)} for key, items in groups.items()}
    hits: dict[str, dict[str, np.ndarray]] = {key: {} for key in groups}
    for name, run in runs.items():
        evaluations = evaluate(run, query_set, passages, ks, mode, result_ctxs=0)
        for key in groups:
            accuracy = evaluations[key].accuracy if key in evaluations else None
            out[key][name] = (None if accuracy is None else
                              {f"top{k}": round(100 * v, 2) for k, v in accuracy.items()})
            firsts = evaluations[key].first_hits if key in evaluations else []
            hits[key][name] = np.asarray(hits_at_k(firsts, hits_k), dtype=np.int8)
    return out, hits


def bucket_metrics(accuracy: Mapping[str, dict], sets: Sequence[str], relations: Sequence[str],
                   n_buckets: int, retrievers: Sequence[str], ks: Sequence[int],
                   mode: str, bucket_order: str,
                   ranges: Mapping[str, list[int]] | None = None,
                   contrasts: Mapping | None = None) -> dict:
    """The metrics JSON: ``sets -> relation -> bucket<b> -> {questions, hyperlinks?,
    <retriever>: {top<k>: percent} | null}``, and the popularity ``contrasts`` with their CIs
    (:func:`~tasks.retrieval.bucket_contrasts.bucket_contrasts`) when given."""
    ranges = ranges or {}
    nested: dict[str, dict] = {}
    for bucket_set in sets:
        for relation in relations:
            for bucket in range(n_buckets):
                key = group_key(bucket_set, relation, bucket)
                entry = {"questions": accuracy[key]["questions"]}
                if key in ranges:
                    entry["hyperlinks"] = list(ranges[key])
                entry.update({name: accuracy[key][name] for name in retrievers})
                nested.setdefault(bucket_set, {}).setdefault(relation, {})[
                    f"bucket{bucket}"] = entry
    return {
        "retrievers": list(retrievers),
        "ks": list(ks),
        "has_answer_mode": mode,
        "bucket_order": bucket_order,
        "bucket0": "rarest subjects" if bucket_order == "ascending" else "most frequent subjects",
        "sets": nested,
        **({"contrasts": dict(contrasts)} if contrasts is not None else {}),
    }


def evaluate_buckets(run_paths: dict[str, Path], queries: Path, passages: Path,
                     metrics_path: Path, ks: Sequence[int], mode: HasAnswerMode = DEFAULT_MODE,
                     bucket_order: str = "ascending",
                     questions_table: Path | None = None, k: int = 20) -> dict:
    """Top-k accuracy of every retriever's bucket run per set, relation and bucket, and the
    popularity contrasts at top-``k`` with bootstrap CIs (JSON).

    ``queries``: the file of a :func:`~tasks.retrieval.query_sets.bucket_query_set`;
    ``passages``: the table of :func:`~tasks.retrieval.core.collect_passages` (or a TSV).
    """
    runs = {name: read_trec_run(path) for name, path in run_paths.items()}
    query_set = read_query_set(queries)
    scope = query_set.meta
    accuracy, hits = bucket_accuracy(runs, query_set, passage_lookup(passages, runs.values()),
                                     ks, mode, hits_k=k)
    metrics = bucket_metrics(accuracy, scope["sets"], scope["relations"], scope["n_buckets"],
                             list(runs), ks, mode, bucket_order,
                             hyperlink_ranges(questions_table),
                             bucket_contrasts(hits, k, bucket_order))
    write_json(metrics_path, metrics, indent=2)
    return metrics


def plot_buckets(metrics_path: Path, k: int, png_path: Path, csv_path: Path) -> list[Path]:
    """Figure 1 (PNG) and its long-format data (CSV) from the bucket metrics JSON."""
    metrics = json.loads(Path(metrics_path).read_text(encoding="utf-8"))
    return write_bucket_accuracy(metrics, k, png_path, csv_path)


evaluate_buckets_task = artifact_task(evaluate_buckets, outputs=("metrics_path",),
                                      name="evaluate buckets")
plot_buckets_task = artifact_task(plot_buckets, outputs=("png_path", "csv_path"),
                                  name="plot accuracy per bucket")
