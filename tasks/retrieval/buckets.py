"""Accuracy per subject-frequency bucket (paper §4, Figure 1): rand-ent and train-ent.

The one-off bucket files of the configured relations
(``one-off/common-random-buckets/P19/bucket{b}.test.json`` = rand-ent,
``one-off/nq-seen-buckets/P19/bucket{b}.test.json`` = train-ent) are retrieved with the same
BM25 index and dense encoder + FAISS index as the main test split, one TREC run per retriever
for every bucket question, and scored with :func:`~tasks.retrieval.evaluate.evaluate_relations`.

Each bucket file is a "group" keyed ``rand-ent/P19/bucket3``; its question ids are
``rand-ent/P19/bucket3:000017`` (:func:`~tasks.retrieval.evaluate.question_id` of the group),
unique across sets, relations and buckets. Empty bucket files (the layout always has all of
them) count 0 questions and have no accuracy (``null``).

Steps (plain functions, cached tasks on top): retrieve BM25 -> retrieve dense -> (fuse, for
hybrid, with :func:`~tasks.retrieval.dense_stages.fuse_runs`) -> evaluate every run into
``metrics/retrieval_buckets.json`` -> Figure 1 (PNG + long CSV for ``dvc plots``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.evaluation.has_answer import HasAnswerMode
from tasks.io.atomic import write_json
from tasks.io.entityquestions import EQQuestion, read_eq_file
from tasks.io.trec import read_trec_run, write_trec_run
from tasks.orchestration import TRANSIENT, artifact_task
from tasks.reporting.figures import write_bucket_accuracy
from tasks.retrieval.bm25 import bm25_run_tag, bm25_search
from tasks.retrieval.dense_index import dense_search
from tasks.retrieval.dense_stages import run_tag
from tasks.retrieval.encoders import EncoderSpec, encode_questions
from tasks.retrieval.evaluate import Run, evaluate_relations, passages_by_id, question_id

#: Figure-1 set name -> directory under ``one-off/`` (see :mod:`tasks.questions.writers`).
SET_DIRS = {"rand-ent": "common-random-buckets", "train-ent": "nq-seen-buckets"}


def group_key(bucket_set: str, relation: str, bucket: int) -> str:
    """``rand-ent/P19/bucket3``: the key of one bucket file in runs and evaluations."""
    return f"{bucket_set}/{relation}/bucket{bucket}"


def bucket_path(dataset_dir: Path, bucket_set: str, relation: str, bucket: int) -> Path:
    """``dataset/one-off/<set dir>/<relation>/bucket<b>.test.json``."""
    if bucket_set not in SET_DIRS:
        raise ValueError(f"bucket set must be one of {sorted(SET_DIRS)}, not {bucket_set!r}")
    return (Path(dataset_dir) / "one-off" / SET_DIRS[bucket_set] / relation
            / f"bucket{bucket}.test.json")


def load_bucket_questions(dataset_dir: Path, sets: Sequence[str], relations: Sequence[str],
                          n_buckets: int) -> dict[str, list[EQQuestion]]:
    """``{group key: questions}`` for every set, relation and bucket (set, relation, bucket
    order); a missing bucket file is a ``FileNotFoundError`` naming its path."""
    groups: dict[str, list[EQQuestion]] = {}
    for bucket_set in sets:
        for relation in relations:
            for bucket in range(n_buckets):
                path = bucket_path(dataset_dir, bucket_set, relation, bucket)
                if not path.is_file():
                    raise FileNotFoundError(
                        f"{path}: bucket file of {bucket_set} {relation} bucket {bucket} is "
                        "missing (is the relation in entity_questions.relations and selected? "
                        "is entity_questions.n_buckets the same as when the files were written?)")
                groups[group_key(bucket_set, relation, bucket)] = read_eq_file(path)
    return groups


def _flatten(groups: Mapping[str, list[EQQuestion]]) -> tuple[list[str], list[str]]:
    qids = [question_id(key, i) for key, items in groups.items() for i in range(len(items))]
    texts = [q.question for items in groups.values() for q in items]
    return qids, texts


def retrieve_bm25_buckets(index: str | Path, dataset_dir: Path, run_path: Path,
                          sets: Sequence[str], relations: Sequence[str], n_buckets: int,
                          k: int = 100, k1: float = 0.9, b: float = 0.4, threads: int = 2,
                          heap: str = "2g") -> Path:
    """Top-``k`` BM25 passages of every bucket question, as one TREC run."""
    qids, texts = _flatten(load_bucket_questions(dataset_dir, sets, relations, n_buckets))
    run = bm25_search(index, texts, qids, k=k, k1=k1, b=b, threads=threads, heap=heap)
    write_trec_run(run_path, run, tag=bm25_run_tag(k1, b))
    return run_path


def retrieve_dense_buckets(index_dir: Path, dataset_dir: Path, run_path: Path, spec: EncoderSpec,
                           sets: Sequence[str], relations: Sequence[str], n_buckets: int,
                           k: int = 100, batch_size: int = 64, device: str = "auto",
                           bf16: bool = False) -> Path:
    """Encode every bucket question and write its top-``k`` passages as one TREC run."""
    qids, texts = _flatten(load_bucket_questions(dataset_dir, sets, relations, n_buckets))
    embeddings = encode_questions(spec, texts, qids, batch_size=batch_size, device=device,
                                  bf16=bf16)
    write_trec_run(run_path, dense_search(index_dir, embeddings, k), tag=run_tag("dense",
                                                                                 spec.name))
    return run_path


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


def bucket_accuracy(runs: Mapping[str, Run], groups: Mapping[str, list[EQQuestion]],
                    passages: Mapping[str, tuple[str, str]], ks: Sequence[int],
                    mode: HasAnswerMode = "string") -> dict[str, dict]:
    """``{group key: {"questions": n, retriever: {"top<k>": percent} | None}}``."""
    filled = {key: items for key, items in groups.items() if items}
    out: dict[str, dict] = {key: {"questions": len(items)} for key, items in groups.items()}
    for name, run in runs.items():
        evaluations = evaluate_relations(run, filled, passages, ks, mode) if filled else {}
        for key in groups:
            accuracy = evaluations[key].accuracy if key in evaluations else None
            out[key][name] = (None if accuracy is None else
                              {f"top{k}": round(100 * v, 2) for k, v in accuracy.items()})
    return out


def bucket_metrics(accuracy: Mapping[str, dict], sets: Sequence[str], relations: Sequence[str],
                   n_buckets: int, retrievers: Sequence[str], ks: Sequence[int],
                   mode: str, bucket_order: str,
                   ranges: Mapping[str, list[int]] | None = None) -> dict:
    """The metrics JSON: ``sets -> relation -> bucket<b> -> {questions, hyperlinks?,
    <retriever>: {top<k>: percent} | null}``."""
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
    }


def evaluate_buckets(run_paths: dict[str, Path], dataset_dir: Path, passages_tsv: Path,
                     metrics_path: Path, sets: Sequence[str], relations: Sequence[str],
                     n_buckets: int, ks: Sequence[int], mode: HasAnswerMode = "string",
                     bucket_order: str = "ascending",
                     questions_table: Path | None = None) -> dict:
    """Top-k accuracy of every retriever's bucket run per set, relation and bucket (JSON)."""
    runs = {name: read_trec_run(path) for name, path in run_paths.items()}
    groups = load_bucket_questions(dataset_dir, sets, relations, n_buckets)
    wanted = {pid for run in runs.values() for hits in run.values() for pid, _ in hits}
    passages = passages_by_id(passages_tsv, wanted)
    accuracy = bucket_accuracy(runs, groups, passages, ks, mode)
    metrics = bucket_metrics(accuracy, sets, relations, n_buckets, list(runs), ks, mode,
                             bucket_order, hyperlink_ranges(questions_table))
    write_json(metrics_path, metrics, indent=2)
    return metrics


def plot_buckets(metrics_path: Path, k: int, png_path: Path, csv_path: Path) -> list[Path]:
    """Figure 1 (PNG) and its long-format data (CSV) from the bucket metrics JSON."""
    metrics = json.loads(Path(metrics_path).read_text(encoding="utf-8"))
    return write_bucket_accuracy(metrics, k, png_path, csv_path)


retrieve_bm25_buckets_task = artifact_task(retrieve_bm25_buckets, outputs=("run_path",),
                                           name="retrieve BM25 buckets", **TRANSIENT)
retrieve_dense_buckets_task = artifact_task(retrieve_dense_buckets, outputs=("run_path",),
                                            name="retrieve dense buckets")
evaluate_buckets_task = artifact_task(evaluate_buckets, outputs=("metrics_path",),
                                      name="evaluate buckets")
plot_buckets_task = artifact_task(plot_buckets, outputs=("png_path", "csv_path"),
                                  name="plot accuracy per bucket")
