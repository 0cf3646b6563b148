"""The train-retriever flow on a tiny world: MLM pre-training -> DPR-NQ -> metrics; the trained
pair is returned as an EncoderSpec; a second run is served from the cache.

Slow (~40 s with the Prefect API start): the steps are plain functions tested on their own in
test_mlm.py, test_retriever_training.py and test_errors.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.io.passages import Passage, write_passages
from tasks.layout import Layout
from tasks.orchestration import run_settings

PROJECT_ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runs(prefect_api, tmp_path_factory, tiny_train_json):
    from flows.train_retriever import train_retriever
    from tasks.params_loading import load_params

    root = tmp_path_factory.mktemp("train_flow")
    examples = json.loads(tiny_train_json.read_text())
    passages = root / "psgs.tsv"
    write_passages(passages, [Passage(str(i), c["text"], c["title"]) for i, e in
                              enumerate(examples) for c in e["positive_ctxs"]])
    (root / "dev.json").write_text(json.dumps(examples[:8]))
    overrides = {f"paths.{n}": str(root / n)
                 for n in ("data", "results", "metrics", "plots", "reports", "state")}
    overrides.update({
        "sources.passages": str(passages), "sources.nq_train": str(tiny_train_json),
        "sources.nq_dev": str(root / "dev.json"),
        "retriever_training.mlm": {"layers": 1, "hidden": 32, "heads": 2, "intermediate": 64,
                                   "max_length": 32, "batch_size": 8, "max_steps": 4,
                                   "warmup_steps": 0, "accelerator": "cpu"},
        "retriever_training.dpr.max_steps": 4,
        "retriever_training.dpr.pooling": "cls",  # the DPR-format pair (smoke: mean)
    })
    params = load_params(PROJECT_ROOT / "params.yaml", profile="smoke", overrides=overrides)
    with run_settings(params.paths.state):
        first = train_retriever(params=params)
        stamp = (Layout(params).trained_retriever("dpr-nq") / "trainer_state.json").stat()
        second = train_retriever(params=params)
    return params, first, second, stamp.st_mtime_ns


def test_flow_trains_and_returns_the_encoder_spec(runs):
    from tasks.retrieval.encoders import EncoderSpec

    params, first, _, _ = runs
    layout = Layout(params)
    out = layout.trained_retriever("dpr-nq")
    assert first["mlm"]["global_step"] == 4 and first["dpr"]["global_step"] == 4
    assert first["dpr"]["train_questions"] == 24 and first["dpr"]["val_questions"] == 8
    spec = EncoderSpec.model_validate(first["encoder"]["spec"])
    assert spec.kind == "dpr" and spec.question_model == str((out / "question_encoder")
                                                             .resolve())
    assert first["encoder"]["dense_params"]["normalize"] is False
    metrics = json.loads(layout.retriever_training_metrics.read_text())
    assert set(metrics) == {"mlm", "dpr-nq"}
    assert len(metrics["dpr-nq"]["loss_curve"]) >= 1 and metrics["dpr-nq"]["global_step"] == 4
    args = json.loads((out / "training_args.json").read_text())
    assert args["init_model"] == str(layout.mlm_model.resolve())


def test_second_run_is_cached(runs):
    params, first, second, mtime = runs
    out = Layout(params).trained_retriever("dpr-nq")
    assert (out / "trainer_state.json").stat().st_mtime_ns == mtime
    assert second["dpr"] == first["dpr"] and second["encoder"] == first["encoder"]
