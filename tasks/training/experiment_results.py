"""Score the experiments' runs and write their metrics JSON and Markdown tables.

Each TREC run is judged through the retrieval core (:func:`tasks.retrieval.core.first_hits`,
one :func:`~tasks.evaluation.judge.judge_run` per run) with the EntityQuestions answer mode,
NQ-style dev questions with their own mode; the per-question hits at k feed Tables 2 and 3
(:mod:`tasks.training.experiment_tables`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tasks.evaluation.over_seeds import SeedInterval
from tasks.evaluation.topk import hits_at_k
from tasks.io.atomic import write_json, write_text
from tasks.io.trec import read_trec_run
from tasks.orchestration import artifact_task
from tasks.retrieval.core import first_hits, load_passages
from tasks.retrieval.query_sets import QuerySet, read_query_set
from tasks.training.experiment_plan import Job
from tasks.training.experiment_seeds import compare_over_seeds
from tasks.training.experiment_tables import (
    NQ_DEV,
    markdown_report,
    multitask_table,
    pattern_table,
)


def group_hits(run: Mapping, query_set: QuerySet, passages: Mapping, k: int, mode: str,
               modes: Mapping[str, str] | None = None) -> dict[str, list[int]]:
    """0/1 per question (answer in the top ``k``) by group; ``modes[group]`` overrides the
    answer mode of a group (NQ-style dev questions)."""
    modes = dict(modes or {})
    by_mode: dict[str, dict] = {}
    for group, items in query_set.groups.items():
        by_mode.setdefault(modes.get(group, mode), {})[group] = items
    out: dict[str, list[int]] = {}
    for group_mode, groups in by_mode.items():
        subset = QuerySet(query_set.name, groups)
        for group, firsts in first_hits(run, subset, passages, k, group_mode).items():
            out[group] = hits_at_k(firsts, k)
    return {group: out.get(group, []) for group in query_set.groups}  # empty: no questions


def write_experiment_results(jobs: Sequence[Job], status: Mapping[str, dict],
                             runs: Mapping[str, Mapping[str, Path]], queries: Mapping[str, Path],
                             passages: Path, metrics_path: Path, report_path: Path,
                             baseline: str, k: int, mode: str, nq_mode: str,
                             boot: Mapping[str, Any], extra: Mapping[str, Any],
                             seeds: Sequence[int] = (), main_seed: int = 0) -> dict:
    """``runs[query set][model]``: TREC runs over the query-set files ``queries[query set]``;
    score them, build Tables 2-3, write the metrics JSON and the Markdown report. With
    ``seeds`` (the fine-tuning seeds, ``main_seed`` included; the others' models named by
    :func:`tasks.training.experiment_seeds.seed_model`) also the comparison over seeds."""
    table = load_passages(passages)
    hits: dict[str, dict[str, dict[str, list[int]]]] = {}
    for name, by_model in runs.items():
        query_set = read_query_set(queries[name])
        hits[name] = {model: group_hits(read_trec_run(path), query_set, table, k, mode,
                                        {NQ_DEV: nq_mode})
                      for model, path in by_model.items()}
    metrics: dict[str, Any] = {
        "k": k, "baseline": baseline, "has_answer_mode": mode, "nq_has_answer_mode": nq_mode,
        "n_bootstrap": boot["n"], "seed": boot["seed"], "confidence": boot["confidence"],
        "jobs": {job.name: {"table": job.table, "relation": job.relation,
                            "variant": job.variant, "mode": job.mode, **status[job.name]}
                 for job in jobs},
        "not_run": sorted(n for n, s in status.items() if s["status"] != "ran"),
        **dict(extra),
    }
    if any(j.table == "pattern" for j in jobs):
        metrics["pattern"] = pattern_table(jobs, status, hits, baseline, boot)
    if any(j.table == "multitask" for j in jobs):
        metrics["multitask"] = multitask_table(jobs, status, hits, baseline, boot)
    if len(seeds) > 1:
        ran = {job.name: status[job.name]["status"] == "ran" for job in jobs}
        metrics["seeds"] = compare_over_seeds(
            jobs, ran, hits, baseline, seeds, main_seed,
            SeedInterval(boot["confidence"], boot["n"], boot["seed"]))
    write_json(metrics_path, metrics, indent=2)
    write_text(report_path, markdown_report(metrics) + "\n")
    return metrics


write_experiment_results_task = artifact_task(
    write_experiment_results, outputs=("metrics_path", "report_path"),
    name="score the retriever experiments")
