"""The retrieve-then-read flow on the smoke world: a tiny reader trained by the train-reader stage's
task reads the top-k of two retrievers' DPR result files (built from the world's SQuAD dev
questions and passages); predictions per retriever and k, EM and recall that the files
reproduce, the paired comparison, the report; retrievers without results are skipped, and a
missing reader or explicitly requested results are clear errors."""

from __future__ import annotations

import json

import pytest
from smoke_params import smoke_params_at

from tasks.evaluation.squad_metrics import exact_match_score, metric_max_over_ground_truths
from tasks.io.dpr_results import read_retrieval_results, write_retrieval_results
from tasks.io.squad import read_squad
from tasks.io.squad_predictions import read_predictions
from tasks.layout import Layout
from tasks.orchestration import run_settings
from tasks.reading.retrieve_then_read import QUESTIONS_FILE, predictions_file

RELATIONS = ("P19", "P36")


def _params(smoke_world, root, tiny_bert, **section):
    return smoke_params_at(smoke_world, root, tiny_bert, retrieve_then_read=(
        smoke_world.retrieve_then_read.model_copy(update=section)))


def _retrieval_results(params) -> None:
    """bm25 ranks each question's own context first, dense second (after another one)."""
    questions = list(read_squad(params.raw_path("squad_dev")).questions())
    contexts = sorted({q.context for q in questions})
    layout = Layout(params)
    for name in ("bm25", "dense"):
        for r, relation in enumerate(RELATIONS):
            results = []
            for i, q in enumerate(questions[r::2][:5]):
                own = contexts.index(q.context)
                other = (own + 1 + i) % len(contexts)
                ranked = [own, other, (other + 1) % len(contexts)]
                if name == "dense":
                    ranked = [other, own, (other + 1) % len(contexts)]
                answers = [a.text for a in q.answers]
                results.append({"question": q.question, "answers": answers, "ctxs": [
                    {"id": f"p{c}", "title": "", "text": contexts[c], "score": 3.0 - rank,
                     "has_answer": any(a in contexts[c] for a in answers)}
                    for rank, c in enumerate(ranked)]})
            write_retrieval_results(layout.retrieval_results(name) / f"{relation}.{name}.json",
                                    results)


@pytest.fixture(scope="module")
def flow_run(prefect_api, smoke_world, tiny_bert, tmp_path_factory):
    from flows.retrieve_then_read import retrieve_then_read
    from tasks.reading.stages import train_reader_on_squad

    params = _params(smoke_world, tmp_path_factory.mktemp("rtr"), tiny_bert)
    layout = Layout(params)
    train_reader_on_squad(params.raw_path("squad_train"), layout.reader_dir("tiny-bert"),
                          params.readers.model)
    _retrieval_results(params)
    with run_settings(params.paths.state):
        metrics = retrieve_then_read(params=params)
    return params, layout, metrics


def test_predictions_and_scores_per_retriever_and_k(flow_run):
    params, layout, metrics = flow_run
    cfg = params.retrieve_then_read
    out = layout.retrieve_then_read_results
    questions = json.loads((out / QUESTIONS_FILE).read_text())
    per_relation = cfg.questions_per_relation
    assert len(questions) == per_relation * len(RELATIONS) == metrics["questions"]
    assert set(metrics["retrievers"]) == {"bm25", "dense"}  # hybrid, dpr-nq: no results
    for name in ("bm25", "dense"):
        results = {r: read_retrieval_results(layout.retrieval_results(name)
                                             / f"{r}.{name}.json") for r in RELATIONS}
        for k in cfg.ks:
            preds = read_predictions(predictions_file(out, name, k))
            assert set(preds) == {q["id"] for q in questions}
            em, recall = {}, {}
            for q in questions:
                relation, position = q["id"].split(":")
                result = results[relation][int(position)]
                assert result.question == q["question"]
                em.setdefault(relation, []).append(metric_max_over_ground_truths(
                    exact_match_score, preds[q["id"]], list(result.answers)))
                recall.setdefault(relation, []).append(
                    any(c.has_answer for c in result.ctxs[:k]))
            block = metrics["retrievers"][name][f"top{k}"]
            for relation in RELATIONS:
                row = block["per_relation"][relation]
                assert row["exact_match"] == pytest.approx(
                    100 * sum(em[relation]) / per_relation, abs=0.01)
                assert row["answer_recall"] == pytest.approx(
                    100 * sum(recall[relation]) / per_relation, abs=0.01)
    # bm25 ranks the question's own context first: recall@1 = 100; dense second: 0
    assert metrics["retrievers"]["bm25"]["top1"]["answer_recall"] == 100.0
    assert metrics["retrievers"]["dense"]["top1"]["answer_recall"] == 0.0
    assert set(metrics["comparisons"]) == {"bm25 - dense"}
    # k > 1: the fused choice too, with one fitted weight per relation and its gain
    fused_ks = [k for k in cfg.ks if k > 1]
    assert cfg.fusion and fused_ks
    for name in ("bm25", "dense"):
        for k in fused_ks:
            assert set(read_predictions(predictions_file(out, name, k, fused=True))) == \
                {q["id"] for q in questions}
            fused = metrics["retrievers"][name][f"top{k}_fused"]
            assert set(fused["fusion"]["weights"]) == set(RELATIONS)
            assert f"top{k}_fused" in metrics["fusion_gains"][name]
    saved = json.loads(layout.retrieve_then_read_metrics.read_text())
    assert saved["reader"] == "tiny-bert" and saved["retrievers"] == metrics["retrievers"]
    report = layout.retrieve_then_read_report.read_text()
    assert "| bm25 |" in report and "bm25 vs the other retrievers" in report


def test_missing_reader_or_requested_results_are_clear_errors(flow_run, tmp_path):
    from flows.retrieve_then_read import retrieve_then_read

    params, layout, _ = flow_run
    asked = params.model_copy(update={"retrieve_then_read": params.retrieve_then_read
                                      .model_copy(update={"retrievers": ("bm25", "hybrid")})})
    with pytest.raises(FileNotFoundError, match="hybrid"), run_settings(params.paths.state):
        retrieve_then_read(params=asked)
    other = params.model_copy(update={"readers": params.readers.model_copy(update={
        "model": params.readers.model.model_copy(update={"model": str(tmp_path / "none")})})})
    with pytest.raises(FileNotFoundError, match="run the train-reader stage first"), \
            run_settings(params.paths.state):
        retrieve_then_read(params=other)
