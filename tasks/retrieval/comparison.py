"""Comparing retrievers on the test split: paired bootstrap CIs and the accuracy-vs-k figure.

Steps (plain functions, cached tasks on top): top-``k`` hit of every question per retriever
(from the question-hits table its evaluation wrote, :mod:`tasks.retrieval.question_hits`: the
runs are not read or judged again) -> for each pair of retrievers, the difference of
top-``k`` accuracy with a paired bootstrap CI over questions (``metrics/retrieval_comparison
.json`` + Markdown + Prefect table artifact) -> accuracy vs k per retriever (PNG + CSV).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path

from tasks.evaluation.topk import bootstrap_difference, hits_at_k
from tasks.io.atomic import write_json
from tasks.orchestration import artifact_task
from tasks.reporting.figures import write_accuracy_vs_k
from tasks.reporting.tables import (
    difference_rows,
    publish_table_artifact,
    write_comparison_report,
)
from tasks.retrieval.question_hits import aligned_first_hits


def compare_retrievers(hits_paths: dict[str, Path], metrics_paths: dict[str, Path],
                       comparison_path: Path, report_path: Path, ks: Sequence[int],
                       k: int = 20, n_bootstrap: int = 1000, seed: int = 0,
                       confidence: float = 0.95,
                       title: str = "EntityQuestions: BM25 vs dense vs hybrid retrieval",
                       notes: str = "") -> dict:
    """Top-``k`` accuracy per retriever and, for each pair, the difference with a paired
    bootstrap CI over questions; JSON (``dvc metrics``) + Markdown table (``notes`` under its
    title: :func:`~tasks.retrieval.retrievers.describe_retrievers`) + Prefect artifact.

    ``hits_paths``: each retriever's question-hits table, written by
    :func:`~tasks.retrieval.relation_results.evaluate_run` when it judged the run (the same
    questions in the same order for every retriever: :mod:`tasks.retrieval.question_hits`).
    """
    names = list(hits_paths)
    hits = {name: hits_at_k(firsts, k) for name, firsts in aligned_first_hits(hits_paths).items()}
    n_questions = len(next(iter(hits.values())))
    pairs = {}
    for a, b in itertools.combinations(names, 2):
        diff, low, high = bootstrap_difference(hits[a], hits[b], n=n_bootstrap, seed=seed,
                                               confidence=confidence)
        pairs[f"{a}_vs_{b}"] = {
            "a": a, "b": b, "difference": round(100 * diff, 2), "ci_low": round(100 * low, 2),
            "ci_high": round(100 * high, 2), "significant": bool(low > 0 or high < 0),
        }
    comparison = {
        "k": k,
        "statistic": f"top-{k} accuracy over all questions (percent); A - B in points",
        "questions": n_questions,
        "n_bootstrap": n_bootstrap,
        "seed": seed,
        "confidence": confidence,
        "accuracy": {name: round(100 * sum(h) / max(1, len(h)), 2) for name, h in hits.items()},
        "pairs": pairs,
    }
    write_json(comparison_path, comparison, indent=2)
    metrics = {name: json.loads(Path(metrics_paths[name]).read_text(encoding="utf-8"))
               for name in names}
    write_comparison_report(metrics, comparison, ks, report_path, title, notes)
    header, rows = difference_rows(comparison)
    publish_table_artifact("retrieval-comparison", header, rows,
                           f"Top-{k} accuracy differences with {round(100 * confidence)}% "
                           "bootstrap CIs")
    return comparison


def plot_accuracy(metrics_paths: dict[str, Path], ks: Sequence[int], png_path: Path,
                  csv_path: Path) -> list[Path]:
    """Accuracy vs k per retriever: PNG and CSV (``dvc plots``)."""
    metrics = {name: json.loads(Path(path).read_text(encoding="utf-8"))
               for name, path in metrics_paths.items()}
    return write_accuracy_vs_k(metrics, ks, png_path, csv_path)


compare_retrievers_task = artifact_task(compare_retrievers,
                                        outputs=("comparison_path", "report_path"),
                                        name="compare retrievers")
plot_accuracy_task = artifact_task(plot_accuracy, outputs=("png_path", "csv_path"),
                                   name="plot accuracy vs k")
