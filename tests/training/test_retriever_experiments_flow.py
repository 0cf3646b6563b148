"""The retriever-experiments flow on the smoke world: DPR-NQ -> fine-tunes -> Tables 2-3 and
Figure 2. P19 has no-overlap training questions, P159 none (its rows say "not run"); onlyQ
searches DPR-NQ's index, onlyP gets its own.

Slow (~3-4 min on 2 busy cores: demo world, BM25 index, EntityQuestions, DPR-NQ, then the
flow): the steps are plain functions tested in test_finetune.py and test_experiment_tables.py.
"""

from __future__ import annotations

import json

import pytest

from tasks.layout import Layout
from tasks.orchestration import run_settings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def flow_run(smoke_world, prefect_api):
    from flows.bm25_index import bm25_index
    from flows.entity_questions import entity_questions
    from flows.retriever_experiments import retriever_experiments
    from flows.train_retriever import train_retriever

    params = smoke_world
    with run_settings(params.paths.state):
        bm25_index(params=params)
        entity_questions(params=params)
        train_retriever(params=params)
        metrics = retriever_experiments(params=params)
    return params, metrics


def test_tables_have_every_row_with_counts(flow_run):
    params, metrics = flow_run
    layout = Layout(params)
    assert json.loads(layout.experiment_metrics.read_text()) == metrics
    rows = {(r["relation"], r["mode"]): r for r in metrics["pattern"]["rows"]}
    assert set(rows) == {("P19", "onlyQ"), ("P19", "onlyP"), ("P159", "onlyQ"),
                         ("P159", "onlyP")}
    for mode in ("onlyQ", "onlyP"):
        ran, empty = rows["P19", mode], rows["P159", mode]
        assert ran["status"] == "ran" and ran["train_questions"] > 0
        assert ran["test_questions"] == params.entity_questions.no_overlap_test
        assert ran["top_k"] is not None and ran["vs_baseline"]["questions"] == 10
        assert ran["bm25"] is not None and ran["baseline"] is not None
        assert empty["status"] == "0 training questions: not run" and empty["top_k"] is None
        assert empty["bm25"] is not None  # BM25 and DPR-NQ are still scored beside it
    assert sorted(metrics["not_run"]) == ["ft-p159-test-onlyp", "ft-p159-test-onlyq"]
    multi = {r["variant"]: r for r in metrics["multitask"]["rows"]}
    assert set(multi) == {"baseline", "single", "multi"}
    sources = multi["multi"]["sources"]
    assert sources["P19"] == multi["single"]["train_questions"] and sources["nq"] > 0
    assert multi["multi"]["train_questions"] == sources["P19"] + sources["nq"]
    assert multi["multi"]["eq_relations"] == 24 and multi["multi"]["nq_dev_questions"] == 20
    report = layout.experiment_report.read_text()
    assert "0 training questions: not run" in report and "Table 3" in report


def test_onlyq_reuses_the_baseline_index_and_figure2_is_drawn(flow_run):
    params, metrics = flow_run
    layout = Layout(params)
    assert not layout.experiment_dense("ft-p19-test-onlyq")[1].exists()
    assert (layout.experiment_dense("ft-p19-test-onlyp")[1] / "manifest.json").is_file()
    assert (layout.experiment_results / "runs" / "pattern" / "ft-p19-test-onlyq.trec").is_file()
    assert layout.experiment_tsne_plot.read_bytes()[:4] == b"\x89PNG"
    assert metrics["figure2"]["status"] == "ran"
    assert metrics["figure2"]["passages"]["NQ-style"] == 20


def test_every_fine_tune_runs_again_with_the_extra_seed(flow_run):
    params, metrics = flow_run
    layout = Layout(params)
    main, extra = params.retriever_training.dpr.seed, params.retriever_experiments.extra_seeds
    assert extra == (7,) and metrics["seeds"]["seeds"] == [main, 7]
    for name in ("ft-p19-test-onlyp", "mt-p19-single", "mt-p19-multi"):
        assert (layout.experiment_model(f"{name}-seed7") / "ctx_encoder").is_dir()
    assert not layout.experiment_model("ft-p159-test-onlyq-seed7").exists()  # did not run
    (p_vs_q,) = metrics["seeds"]["pattern"]["onlyP_vs_onlyQ"]
    main_diff = next(d for d in metrics["pattern"]["onlyP_vs_onlyQ"] if d["relation"] == "P19")
    assert p_vs_q["difference"]["per_seed"][str(main)] == main_diff["difference"]["difference"]
    assert "## Over fine-tuning seeds" in layout.experiment_report.read_text()

