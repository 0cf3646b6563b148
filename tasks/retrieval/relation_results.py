"""The test split's results: DPR result JSON per relation file, top-k metrics, the report.

Steps (plain functions, cached tasks on top): evaluate a retriever's TREC run on the test
split with :func:`tasks.retrieval.core.evaluate` -> DPR-style result JSON per relation
(``results/retrieval/<retriever>/<relation>.<retriever>.json``) and top-k accuracy per relation
and macro average (``metrics/retrieval_<retriever>.json``) -> Markdown table + Prefect table
artifact.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect import task

from tasks.evaluation.has_answer import DEFAULT_MODE, HasAnswerMode
from tasks.io.atomic import write_json
from tasks.io.dpr_results import RetrievalResult, RetrievedCtx, write_retrieval_results
from tasks.io.trec import read_trec_run
from tasks.orchestration import artifact_task
from tasks.reporting.tables import publish_table_artifact, topk_rows, write_topk_report
from tasks.retrieval.core import evaluate, passage_lookup
from tasks.retrieval.evaluate import RelationEvaluation, summarise
from tasks.retrieval.query_sets import read_query_set


def evaluate_run(run_path: Path, queries: Path, passages: Path, results_dir: Path,
                 metrics_path: Path, retriever: str, ks: Sequence[int],
                 mode: HasAnswerMode = DEFAULT_MODE, result_ctxs: int | None = None) -> dict:
    """DPR-style result JSON per group (relation file) and top-k accuracy metrics (JSON,
    percent) of a run on a query set (a file of
    :func:`~tasks.retrieval.query_sets.write_query_set`).

    ``passages``: the table of :func:`~tasks.retrieval.core.collect_passages` (or a passage
    TSV). Accuracy is computed over the whole run; the result JSON keeps the first
    ``result_ctxs`` passages of each question (all of them when ``None``), since every ctx
    carries its text.
    """
    run = read_trec_run(run_path)
    texts = passage_lookup(passages, [run])
    evaluations = evaluate(run, read_query_set(queries), texts, ks, mode,
                           result_ctxs=result_ctxs)
    for relation, evaluation in evaluations.items():
        write_retrieval_results(results_dir / f"{relation}.{retriever}.json",
                                _results(evaluation, texts, result_ctxs))
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


evaluate_run_task = artifact_task(evaluate_run, outputs=("results_dir", "metrics_path"),
                                  name="evaluate top-k")
report_topk_task = task(report_topk, name="report top-k")
