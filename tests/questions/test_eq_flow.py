"""The Prefect flow on the hand-built world: every step a cached task, the summary artifact
published, a second run served from the cache, bad params refused at the entry.

Marked slow (the Prefect test API takes 7-14 s to start); the plain-step tests cover the same
construction code, and tests/flows/test_study_flow.py runs this flow inside the study.
"""

from __future__ import annotations

import json

import pytest
from eq_world import world_params

from tasks.orchestration import run_settings
from tasks.params_loading import ParamsError

pytestmark = pytest.mark.slow


def test_flow_runs_caches_and_publishes_the_summary(eq_world, prefect_api, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter

    from flows.entity_questions import entity_questions

    world, _ = eq_world
    params = world_params(tmp_path)
    raw = world / "data" / "raw"
    params = params.model_copy(update={"paths": params.paths.model_copy(
        update={"data": world / "data"}), "entity_questions": params.entity_questions.model_copy(
        update={"linker_truth": str(raw / "nq" / "nq-train.entities.jsonl")})})
    with run_settings(params.paths.state):
        first = entity_questions(params=params, return_state=True)
        second = entity_questions(params=params, return_state=True)
    assert first.is_completed() and second.is_completed()
    assert first.result() == second.result()
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(
            id={"any_": [second.state_details.flow_run_id]}))
        assert runs and all(run.state.name == "Cached" for run in runs), \
            [(run.name, run.state.name) for run in runs]
        artifact = client.read_latest_artifacts()
        assert any(a.key == "entityquestions-summary" for a in artifact)


def test_flow_entry_refuses_unknown_relation(prefect_api, tmp_path):
    from flows.entity_questions import entity_questions

    params_file = tmp_path / "params.yaml"
    params_file.write_text("entity_questions: {relations: [P19, P4242]}\n")
    with pytest.raises(ParamsError, match=r"unknown relation\(s\) \['P4242'\]"):
        entity_questions(params_file=str(params_file))


def test_dpr_hard_negatives_from_bm25(eq_world, tmp_path):
    """BM25 hard negatives: ranked passages without any answer, BM25 score kept."""
    from tasks.evaluation.has_answer import passage_has_answer
    from tasks.io.dpr import iter_dpr_examples
    from tasks.questions.dpr_training import dpr_training_step
    from tasks.retrieval.bm25 import build_bm25_index, export_collection

    world, _ = eq_world
    passages = world / "data" / "raw" / "wikipedia" / "psgs_w100.tsv"
    index = build_bm25_index(export_collection(passages, tmp_path / "collection"),
                             tmp_path / "index")
    dataset = tmp_path / "dataset" / "train"
    dataset.mkdir(parents=True)
    people = passages.read_text()
    name = next(line.split("\t")[2] for line in people.splitlines()[1:]
                if " was born in " in line)
    born = people.split(f"{name} was born in ")[1].split(".")[0]
    questions = [{"question": f"Where was {name} born?", "answers": [born]}]
    (dataset / "P19.train.json").write_text(json.dumps(questions))
    counts = dpr_training_step(tmp_path / "dataset", passages, tmp_path / "dpr",
                               hard_negatives=5, bm25_index=index)
    assert counts == {"files": {"train/P19.train.json": {"questions": 1, "examples": 1,
                                                        "without_positive": 0}},
                      "passages_skipped": 0}
    (example,) = iter_dpr_examples(tmp_path / "dpr" / "train" / "P19.train.json")
    assert example.positive_ctxs[0].title == name
    assert 0 < len(example.hard_negative_ctxs) <= 5
    for ctx in example.hard_negative_ctxs:
        assert ctx.score is not None and not passage_has_answer([born], ctx.text)
    scores = [ctx.score for ctx in example.hard_negative_ctxs]
    assert scores == sorted(scores, reverse=True)
