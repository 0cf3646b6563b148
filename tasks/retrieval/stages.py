"""The BM25 retrieval stage as named steps, each a plain function with a cached task on top.

Steps: export the passages as a Pyserini JsonCollection -> build the Lucene index -> retrieve
the top-k passages of every question (TREC run, searched in batches: ``bm25_batches.py``) ->
evaluate (DPR result JSON per relation, top-k accuracy) -> report (Markdown + Prefect table
artifact).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect import task

from tasks.evaluation.has_answer import HasAnswerMode
from tasks.io.atomic import write_json
from tasks.io.dpr import RetrievalResult, RetrievedCtx, write_retrieval_results
from tasks.io.entityquestions import EQQuestion, discover_eq_files, read_eq_file
from tasks.io.passages import iter_passages
from tasks.io.pyserini_collection import write_json_collection
from tasks.io.trec import read_trec_run
from tasks.orchestration import TRANSIENT, artifact_task
from tasks.reporting.tables import publish_table_artifact, topk_rows, write_topk_report
from tasks.retrieval.bm25 import build_bm25_index
from tasks.retrieval.evaluate import (
    RelationEvaluation,
    evaluate_relations,
    passages_by_id,
    question_id,
    summarise,
)


def export_collection(passages_tsv: Path, collection_dir: Path) -> Path:
    """Write ``psgs_w100.tsv`` as a JsonCollection with contents = title + text."""
    write_json_collection(collection_dir, iter_passages(passages_tsv), contents="title_text")
    return collection_dir


def load_questions(questions_dir: Path, split: str = "test") -> dict[str, list[EQQuestion]]:
    """Every relation file of an EntityQuestions split: ``{relation: questions}``."""
    files = discover_eq_files(questions_dir, split)
    if not files:
        raise FileNotFoundError(f"{questions_dir}: no EntityQuestions {split} files (P*.{split}"
                                ".json) found")
    return {relation: read_eq_file(path) for relation, path in files.items()}


def split_queries(questions_dir: Path, split: str = "test") -> tuple[list[str], list[str]]:
    """``(qids, texts)`` of every question of the split, relation files in order."""
    questions = load_questions(questions_dir, split)
    qids = [question_id(r, i) for r, items in questions.items() for i in range(len(items))]
    texts = [q.question for items in questions.values() for q in items]
    return qids, texts


def evaluate_run(run_path: Path, questions_dir: Path, passages_tsv: Path, results_dir: Path,
                 metrics_path: Path, retriever: str, ks: Sequence[int],
                 mode: HasAnswerMode = "string", result_ctxs: int | None = None) -> dict:
    """DPR-style result JSON per relation file and top-k accuracy metrics (JSON, percent).

    Accuracy is computed over the whole run; the result JSON keeps the first ``result_ctxs``
    passages of each question (all of them when ``None``), since every ctx carries its text.
    """
    run = read_trec_run(run_path)
    questions = load_questions(questions_dir)
    passages = passages_by_id(passages_tsv, {pid for hits in run.values() for pid, _ in hits})
    evaluations = evaluate_relations(run, questions, passages, ks, mode)
    for relation, evaluation in evaluations.items():
        write_retrieval_results(results_dir / f"{relation}.{retriever}.json",
                                _results(evaluation, passages, result_ctxs))
    metrics = summarise(evaluations, retriever, mode)
    write_json(metrics_path, metrics, indent=2)
    return metrics


def _results(evaluation: RelationEvaluation, passages: dict[str, tuple[str, str]],
             limit: int | None = None) -> list[RetrievalResult]:
    return [
        RetrievalResult(question=q.question, answers=q.answers, ctxs=tuple(
            RetrievedCtx(id=pid, title=passages[pid][0], text=passages[pid][1], score=score,
                         has_answer=hit)
            for (pid, score), hit in zip(hits[:limit], has[:limit], strict=True)))
        for q, hits, has in zip(evaluation.questions, evaluation.ranked, evaluation.has_answer,
                                strict=True)
    ]


def report_topk(metrics: dict, ks: Sequence[int], report_path: Path, title: str) -> str:
    """Markdown table on disk and the same table as a Prefect artifact."""
    text = write_topk_report(metrics, ks, report_path, title)
    header, rows = topk_rows(metrics, ks)
    publish_table_artifact(f"topk-{metrics['retriever']}".lower().replace("_", "-"), header, rows,
                           f"{title} ({metrics['has_answer_mode']} match)")
    return text


export_collection_task = artifact_task(export_collection, outputs=("collection_dir",),
                                       name="export JsonCollection")
# Lucene tasks start the JVM (jnius) in this process: retried as transient (TRANSIENT).
build_bm25_index_task = artifact_task(build_bm25_index, outputs=("index_dir",),
                                      name="build BM25 index", **TRANSIENT)
evaluate_run_task = artifact_task(evaluate_run, outputs=("results_dir", "metrics_path"),
                                  name="evaluate top-k")
report_topk_task = task(report_topk, name="report top-k")
