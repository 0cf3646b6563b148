"""The test split's results: DPR result JSON per relation file, top-k metrics, the report.

Steps (plain functions, cached tasks on top): evaluate a retriever's TREC run on the test
split with :func:`tasks.retrieval.core.evaluate` -> DPR-style result JSON per relation
(``results/retrieval/<retriever>/<relation>.<retriever>.json``), the first-hit rank of every
question (``results/retrieval/<retriever>/test.hits.parquet``) and top-k accuracy per relation
and macro average (``metrics/retrieval_<retriever>.json``) -> Markdown table + Prefect table
artifact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from prefect import task

from tasks.evaluation.has_answer import DEFAULT_MODE, HasAnswerMode
from tasks.io.atomic import write_json
from tasks.io.dpr_results import RetrievalResult, RetrievedCtx, write_retrieval_results
from tasks.io.errors import DataFormatError
from tasks.io.trec import read_trec_run
from tasks.orchestration import artifact_task
from tasks.reporting.tables import publish_table_artifact, topk_rows, write_topk_report
from tasks.retrieval.core import evaluate, passage_lookup
from tasks.retrieval.evaluate import RelationEvaluation, summarise
from tasks.retrieval.query_sets import read_query_set
from tasks.retrieval.question_hits import write_question_hits


def evaluate_run(run_path: Path, queries: Path, passages: Path, results_dir: Path,
                 metrics_path: Path, retriever: str, ks: Sequence[int],
                 mode: HasAnswerMode = DEFAULT_MODE, result_ctxs: int | None = None,
                 hits_path: Path | None = None) -> dict:
    """DPR-style result JSON per group (relation file) and top-k accuracy metrics (JSON,
    percent) of a run on a query set (a file of
    :func:`~tasks.retrieval.query_sets.write_query_set`).

    ``passages``: the table of :func:`~tasks.retrieval.core.collect_passages` (or a passage
    TSV). Accuracy is computed over the whole run; the result JSON keeps the first
    ``result_ctxs`` passages of each question (all of them when ``None``), since every ctx
    carries its text. ``hits_path``: the first-hit rank of every question as well
    (:mod:`tasks.retrieval.question_hits`), for comparisons question by question.
    """
    run = read_trec_run(run_path)
    query_set = read_query_set(queries)
    note = run_coverage(run, query_set.qids, run_path)
    if note:
        print(f"{retriever}: {note}")
    texts = passage_lookup(passages, [run])
    evaluations = evaluate(run, query_set, texts, ks, mode, result_ctxs=result_ctxs)
    for relation, evaluation in evaluations.items():
        write_retrieval_results(results_dir / f"{relation}.{retriever}.json",
                                _results(evaluation, texts, result_ctxs))
    if hits_path is not None:
        write_question_hits(hits_path, {relation: evaluation.first_hits
                                        for relation, evaluation in evaluations.items()})
    metrics = summarise(evaluations, retriever, mode)
    write_json(metrics_path, metrics, indent=2)
    return metrics


def run_coverage(run: Mapping[str, Sequence[object]], qids: Sequence[str],
                 run_path: Path) -> str | None:
    """How the run's queries meet the query set's: ``None`` when every question has a
    ranking and the run has no other query; else a note counting the questions without one
    (scored as misses: BM25 finds nothing for a question without an indexed term) and the
    run's queries that are not questions (left out). A run that holds none of the questions
    (ids of another scheme) is a :class:`DataFormatError`."""
    asked = set(qids)
    missing = [qid for qid in qids if qid not in run]
    extra = [qid for qid in run if qid not in asked]
    if qids and len(missing) == len(qids):
        raise DataFormatError(run_path, "query ids", f"the query set's ids ({qids[0]!r}, ...)",
                              f"none of its {len(qids)} questions; the run's ids: "
                              f"{', '.join(map(repr, list(run)[:3])) or 'none (empty run)'}")
    if not missing and not extra:
        return None
    parts = []
    if missing:
        parts.append(f"{len(missing)} of {len(qids)} questions have no ranking in "
                     f"{Path(run_path).name} (scored as misses: {', '.join(missing[:5])}"
                     f"{', ...' if len(missing) > 5 else ''})")
    if extra:
        parts.append(f"{len(extra)} queries of the run are not questions of the set (left "
                     f"out: {', '.join(extra[:5])}{', ...' if len(extra) > 5 else ''})")
    return "; ".join(parts)


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


evaluate_run_task = artifact_task(evaluate_run,
                                  outputs=("results_dir", "metrics_path", "hits_path"),
                                  name="evaluate top-k")
report_topk_task = task(report_topk, name="report top-k")
