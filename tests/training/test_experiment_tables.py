"""Tables 2-3 of the retriever experiments from per-question hits: one row per relation x
template x mode with BM25 and the baseline beside, empty training sets kept as "not run",
question counts and paired CIs; the plan sizes every training set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.retriever_experiments_config import RetrieverExperimentsConfig
from tasks.training.experiment_plan import (
    capped,
    job_sizes,
    multitask_jobs,
    not_run_reason,
    pattern_jobs,
    runnable,
)
from tasks.training.experiment_tables import (
    NQ_DEV,
    markdown_report,
    multitask_table,
    pattern_table,
)

BOOT = {"n": 200, "seed": 0, "confidence": 0.95}
RELATIONS = ("P19", "P159", "P170")


def _question_file(path: Path, n: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([{"question": f"where was p{i} born?", "answers": ["X"]}
                                for i in range(n)]), encoding="utf-8")


def _dpr_file(path: Path, n: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([{"question": f"q{i}", "answers": ["X"], "positive_ctxs": [
        {"title": "T", "text": f"X {i}", "passage_id": str(i)}], "negative_ctxs": [],
        "hard_negative_ctxs": []} for i in range(n)]), encoding="utf-8")


@pytest.fixture()
def world(tmp_path):
    """P19 with 6 no-overlap (and similar) training questions, P159/P170 with none; P19's
    train split of 5 and an NQ-style file of 7."""
    from tasks.questions.writers import main_file, no_overlap_file, similar_file

    data, dpr = tmp_path / "dataset", tmp_path / "dpr"
    for relation in RELATIONS:
        n = 6 if relation == "P19" else 0
        for relative in (no_overlap_file(relation, "train"), similar_file(relation, "train")):
            _question_file(data / relative, n)
            if n:
                _dpr_file(dpr / relative, n)
    _question_file(data / main_file("P19", "train"), 5)
    _dpr_file(dpr / main_file("P19", "train"), 5)
    _dpr_file(tmp_path / "nq-train.json", 7)
    return data, dpr, tmp_path / "nq-train.json"


def _status(jobs):
    status = {}
    for job in jobs:
        sizes = job_sizes(job)
        ok = runnable(sizes)
        status[job.name] = {"status": "ran" if ok else not_run_reason(sizes),
                            "train_questions": sum(capped(sizes, job.max_questions).values())
                            if ok else 0, "sources": capped(sizes, job.max_questions)}
    return status


def test_plan_has_one_job_per_relation_template_mode_and_sizes_empty_sets(world):
    data, dpr, nq = world
    cfg = RetrieverExperimentsConfig()
    jobs = pattern_jobs(cfg, data, dpr)
    assert [(j.relation, j.variant, j.mode) for j in jobs] == [
        (r, t, m) for r in RELATIONS for t in ("test", "similar")
        for m in ("full", "onlyQ", "onlyP")]
    assert len({j.name for j in jobs}) == 18
    status = _status(jobs)
    assert status["ft-p19-similar-onlyq"] == {"status": "ran", "train_questions": 6,
                                              "sources": {"P19": 6}}
    assert status["ft-p159-test-full"]["status"] == "0 training questions: not run"
    assert sum(s["status"] != "ran" for s in status.values()) == 12


def test_multitask_jobs_mix_the_relation_with_nq_style_data(world):
    data, dpr, nq = world
    cfg = RetrieverExperimentsConfig.model_validate({"multitask": {"max_nq_questions": 4}})
    jobs = multitask_jobs(cfg, data, dpr, nq)
    assert [(j.name, j.table) for j in jobs] == [("mt-p19-single", "multitask"),
                                                 ("mt-p19-multi", "multitask")]
    status = _status(jobs)
    assert status["mt-p19-single"]["sources"] == {"P19": 5}
    assert status["mt-p19-multi"]["sources"] == {"P19": 5, "nq": 4}
    assert status["mt-p19-multi"]["train_questions"] == 9
    alone = RetrieverExperimentsConfig.model_validate({"multitask": {"enabled": False}})
    assert [j.table for j in multitask_jobs(alone, data, dpr, nq)] == ["figure2"]


def test_pattern_table_rows_with_bm25_baseline_counts_and_cis(world):
    data, dpr, _ = world
    jobs = pattern_jobs(RetrieverExperimentsConfig(), data, dpr)
    status = _status(jobs)
    tests = {r: 10 for r in RELATIONS}
    hits = {"pattern": {
        "bm25": {r: [1] * 9 + [0] for r in RELATIONS},
        "dpr-nq": {r: [1] * 2 + [0] * 8 for r in RELATIONS},
        **{j.name: {j.relation: [1] * (8 if j.mode == "onlyP" else 4) + [0] * (
            tests[j.relation] - (8 if j.mode == "onlyP" else 4))}
           for j in jobs if status[j.name]["status"] == "ran"}}}
    table = pattern_table(jobs, status, hits, "dpr-nq", BOOT)
    assert len(table["rows"]) == 18
    assert all(r["bm25"] == 90.0 and r["baseline"] == 20.0 and r["test_questions"] == 10
               for r in table["rows"])
    p19 = next(r for r in table["rows"] if r["model"] == "ft-p19-test-onlyp")
    assert p19["top_k"] == 80.0 and p19["vs_baseline"]["difference"] == 60.0
    assert p19["vs_baseline"]["questions"] == 10 and p19["vs_baseline"]["significant"]
    empty = next(r for r in table["rows"] if r["model"] == "ft-p170-similar-full")
    assert empty["top_k"] is None and empty["vs_baseline"] is None
    assert empty["status"] == "0 training questions: not run" and empty["train_questions"] == 0
    diffs = {(d["relation"], d["template"]): d for d in table["onlyP_vs_onlyQ"]}
    assert diffs["P19", "test"]["difference"]["difference"] == 40.0
    assert diffs["P159", "test"]["difference"] is None
    report = markdown_report({"k": 20, "baseline": "dpr-nq", "confidence": 0.95,
                              "n_bootstrap": 200, "pattern": table})
    assert report.count("0 training questions: not run") == 12
    assert "| P19 | test | onlyP | 6 | 10 | 90.00 | 20.00 | 80.00 | +60.00 [" in report


def test_multitask_table_macro_nq_dev_and_differences(world):
    data, dpr, nq = world
    jobs = multitask_jobs(RetrieverExperimentsConfig(), data, dpr, nq)
    status = _status(jobs)

    def hits(p19, p20, nq_dev):
        return {"P19": p19, "P20": p20, NQ_DEV: nq_dev}
    table = multitask_table(jobs, status, {"multitask": {
        "dpr-nq": hits([0, 0, 0, 1], [1, 1, 0, 0], [1, 1, 1, 1, 0]),
        "mt-p19-single": hits([1, 1, 1, 1], [1, 0, 0, 0], [1, 0, 0, 0, 0]),
        "mt-p19-multi": hits([1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 0, 0])}}, "dpr-nq", BOOT)
    rows = {r["variant"]: r for r in table["rows"]}
    assert rows["baseline"]["eq_macro_top_k"] == 37.5 and rows["single"]["eq_macro_top_k"] == 62.5
    assert rows["multi"]["nq_dev_top_k"] == 60.0 and rows["multi"]["nq_dev_questions"] == 5
    assert rows["multi"]["eq_relations"] == 2 and rows["multi"]["eq_questions"] == 8
    assert rows["multi"]["train_questions"] == 12  # 5 P19 + 7 NQ-style
    diffs = {(d["a"], d["b"], d["on"]): d["difference"] for d in table["differences"]}
    assert diffs["multi", "single", NQ_DEV]["difference"] == 40.0
    assert diffs["single", "baseline", "P19"]["questions"] == 4
    assert diffs["multi", "single", "eq-all"]["questions"] == 8
