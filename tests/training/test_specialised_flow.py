"""The specialised-encoders flow on the smoke world (after entity-questions and
train-retriever): metrics, Markdown and HTML Table 4, a relation without training questions
reported as not run, one index per passage encoder searched by every question encoder.

Slow (a minute or more on 2 busy cores): the pieces are tested on their own in
test_specialised.py and test_paq_like.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.io.dpr import iter_dpr_examples
from tasks.layout import Layout
from tasks.orchestration import run_settings
from tasks.retrieval.faiss_index import INDEX_FILE

pytestmark = pytest.mark.slow
PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def flow_run(prefect_api, smoke_world):
    from flows.entity_questions import entity_questions
    from flows.specialised_encoders import specialised_encoders
    from flows.train_retriever import train_retriever

    overrides = {f"paths.{n}": str(getattr(smoke_world.paths, n))
                 for n in ("data", "results", "metrics", "plots", "reports", "state")}
    overrides.update({
        "retriever_training.mlm.max_steps": 4, "retriever_training.dpr.max_steps": 4,
        # P30: a relation outside entity_questions.relations, so it has no training questions
        "specialised_encoders.relations": ["P19", "P106", "P30"],
        "specialised_encoders.finetune.max_steps": 4,
        "specialised_encoders.paq": {"n_passages": 200, "training": {"max_steps": 4}},
    })
    from tasks.params_loading import load_params

    params = load_params(PROJECT_ROOT / "params.yaml", profile="smoke", overrides=overrides)
    with run_settings(params.paths.state):
        entity_questions(params=params)
        train_retriever(params=params)
        metrics = specialised_encoders(params=params)
    return params, metrics


def test_metrics_rows_and_not_run_relations(flow_run):
    from tasks.training.specialised import NO_TRAIN, READY

    params, metrics = flow_run
    layout = Layout(params)
    assert json.loads(layout.specialised_metrics.read_text()) == json.loads(
        json.dumps(metrics))
    plans = metrics["relations"]
    assert list(plans) == ["P19", "P106", "P30"]
    assert plans["P30"]["status"] == NO_TRAIN and plans["P30"]["train_questions"] == 0
    for relation, plan in plans.items():
        train = layout.eq_dpr / "train" / f"{relation}.train.json"
        n_train = sum(1 for _ in iter_dpr_examples(train)) if train.is_file() else 0
        assert plan["train_questions"] == n_train
        assert (plan["status"] == READY) == (n_train > 0 and plan["test_questions"] > 0)
    ran = [r for r, p in plans.items() if p["status"] == READY]
    assert ran, "the smoke world has training questions for P19/P106"
    assert metrics["counts"] == {"relations": 3, "ran": len(ran),
                                 "not_run": {NO_TRAIN: 3 - len(ran)}}
    assert list(metrics["passage_encoders"]) == ["dpr-nq", "dpr-paq"]
    for name, result in metrics["passage_encoders"].items():
        assert list(result["per_relation"]) == ran
        assert result["searches"] == [name, *[f"{name}-{r.lower()}" for r in ran]]
        assert result["index"]["opened"] == 1 and result["index"]["searches"] == 1 + len(ran)
        size = (params.paths.data / result["index"]["path"] / INDEX_FILE).stat().st_size
        assert result["memory"]["one_index_bytes"] == size
        assert result["memory"]["one_index_per_relation_bytes"] == len(ran) * size
        assert all(f["passage_encoder_identical"] for f in result["finetune"].values())
        assert all(f["global_step"] == 4 for f in result["finetune"].values())
    assert metrics["paq"]["questions"] >= 1 and metrics["paq"]["training"]["global_step"] == 4


def test_markdown_and_html_table(flow_run):
    from tasks.reporting.html_report import build_report, report_artifacts

    params, _ = flow_run
    layout = Layout(params)
    text = layout.specialised_report.read_text()
    assert "| P30 |" in text and "no training questions: not run" in text
    assert "macro (specialised relations)" in text and "## Index memory" in text
    html = build_report(params, report_artifacts(layout), {}, []).html
    assert 'id="specialised"' in html and "no training questions: not run" in html
