"""The study's DAG derived from the registry: a stage waits for the stages that write what it
reads (DVC's rule), the registry's order is a topological order, a stage that is switched
off leaves no edge, and the stages ready at once start by their typical way to the end."""

from __future__ import annotations

import pytest

from tasks.pipeline.stage_graph import (
    remaining_path_s,
    stage_priorities,
    upstream_stages,
    with_upstream,
)
from tasks.pipeline.stages import STAGES, Stage


def test_the_registry_has_two_branches_that_meet_at_the_end():
    edges = upstream_stages(STAGES)
    assert list(edges) == [s.name for s in STAGES]
    assert edges["demo_world"] == () and edges["demo_reading_world"] == ()
    # the EntityQuestions branch starts on the world's encyclopedia alone
    assert edges["bm25_index"] == ("demo_world",)
    # the paraphrase branch reads only the world's reading sources: it need not wait for the
    # encyclopedia, nor for EntityQuestions
    assert edges["paraphrase"] == ("demo_reading_world",)
    # the reader is trained on the raw SQuAD training file, beside the paraphrase stage; its
    # questions are asked once the paraphrased sets exist (their subjects' hyperlink counts
    # are the encyclopedia's)
    assert edges["train_reader"] == ("demo_reading_world",)
    assert set(edges["readers"]) == {"demo_world", "demo_reading_world", "paraphrase",
                                     "train_reader"}
    # the augmentation kinds need the paraphraser, not the reader, nor each other
    for kind in ("augment_non_adversarial", "augment_adversarial"):
        assert set(edges[kind]) == {"demo_reading_world", "paraphrase"}, kind
    assert set(edges["reader_augmentation"]) == {
        "demo_reading_world", "paraphrase", "train_reader", "readers",
        "augment_non_adversarial", "augment_adversarial"}
    # the EntityQuestions branch is a chain
    assert "bm25_index" in edges["entity_questions"]
    assert "entity_questions" in edges["train_retriever"]
    assert {"train_retriever", "entity_questions"} <= set(edges["retrieval"])
    assert "retrieval" in edges["retriever_experiments"]
    # where they meet
    assert set(edges["paraphrased_retrieval"]) == {"paraphrase", "train_retriever"}
    assert set(edges["retrieve_then_read"]) == {"retrieval", "train_reader"}
    # the report reads every stage's metrics and reports; the stages without either reach it
    # through the stages that read their outputs
    assert set(edges["report"]) == {s.name for s in STAGES} - {
        "report", "bm25_index", "train_reader", "augment_non_adversarial", "augment_adversarial"}


def test_every_stage_waits_only_for_earlier_stages_that_run():
    stages = [s for s in STAGES if s.name not in ("demo_world", "demo_reading_world")]
    edges = upstream_stages(stages)  # real data: no demo world
    assert edges["paraphrase"] == () and not {"demo_world", "demo_reading_world"} & set(
        edges["readers"])
    names = [s.name for s in stages]
    for name, upstream in edges.items():
        assert all(names.index(u) < names.index(name) for u in upstream), name


def test_a_stage_before_its_inputs_is_an_error():
    first = Stage(name="reads", flow="m:f", description="", params=(),
                  deps=("${paths.data}/x/part",))
    second = Stage(name="writes", flow="m:g", description="", params=(),
                   outs=("${paths.data}/x",))
    with pytest.raises(ValueError, match="'reads' reads what the later stage"):
        upstream_stages([first, second])
    assert upstream_stages([second, first]) == {"writes": (), "reads": ("writes",)}


def _toy(name: str, typical_s: float, reads: tuple[str, ...] = ()) -> Stage:
    return Stage(name=name, flow=f"m:{name}", description="", params=(), typical_s=typical_s,
                 deps=tuple(f"${{paths.data}}/{r}" for r in reads),
                 outs=(f"${{paths.data}}/{name}",))


def test_remaining_path_is_the_longest_way_to_the_end():
    stages = [_toy("root", 1), _toy("short", 2, ("root",)), _toy("long", 10, ("root",)),
              _toy("tail", 5, ("long",)), _toy("end", 0.5, ("short", "tail"))]
    assert remaining_path_s(stages) == {"root": 16.5, "short": 2.5, "long": 15.5,
                                        "tail": 5.5, "end": 0.5}
    priorities = stage_priorities(stages)
    assert priorities["long"] > priorities["short"]
    # equal ways to the end: the earlier stage in the registry goes first, never a tie
    twins = [_toy("first", 3), _toy("second", 3)]
    assert stage_priorities(twins)["first"] > stage_priorities(twins)["second"]


def test_the_registry_starts_the_paraphrase_branchs_long_stages_first():
    priorities = stage_priorities(STAGES)
    assert len(set(priorities.values())) == len(STAGES)
    edges = upstream_stages(STAGES)
    for name, upstream in edges.items():  # a stage ranks below every stage it waits for
        assert all(priorities[u] > priorities[name] for u in upstream), name
    # when the paraphraser is trained, the augmentation kinds (the study's last long stages)
    # start before the short stages that became ready with them or before them
    for kind in ("augment_non_adversarial", "augment_adversarial"):
        for short in ("retrieve_then_read", "paraphrased_retrieval", "specialised_encoders",
                      "readers"):
            assert priorities[kind] > priorities[short], (kind, short)
    assert priorities["readers"] > priorities["paraphrased_retrieval"]


def test_each_configured_augmentation_kind_is_a_stage_of_the_study():
    from pathlib import Path

    from tasks.params_loading import load_params

    params_file = Path(__file__).resolve().parents[2] / "params.yaml"
    run = {profile: [s.name for s in STAGES if s.when(load_params(params_file, profile=profile))]
           for profile in ("demo", "smoke")}
    assert {"augment_non_adversarial", "augment_adversarial"} <= set(run["demo"])
    # the smoke profile augments with PPDB suggestions only: no adversarial stage runs, and
    # the comparison waits only for the kind that runs
    assert "augment_adversarial" not in run["smoke"]
    smoke = upstream_stages([s for s in STAGES if s.name in run["smoke"]])
    assert "augment_non_adversarial" in smoke["reader_augmentation"]
    assert "augment_adversarial" not in smoke["reader_augmentation"]


def test_a_partial_study_runs_its_targets_and_everything_they_read():
    """`qastress run --until`: the targets and their transitive upstream, in registry order."""
    stages = [_toy("root", 1), _toy("short", 2, ("root",)), _toy("long", 10, ("root",)),
              _toy("tail", 5, ("long",)), _toy("end", 0.5, ("short", "tail"))]
    assert [s.name for s in with_upstream(stages, ["tail"])] == ["root", "long", "tail"]
    assert [s.name for s in with_upstream(stages, ["tail", "short"])] == [
        "root", "short", "long", "tail"]
    assert [s.name for s in with_upstream(stages, ["end"])] == [s.name for s in stages]
    assert [s.name for s in with_upstream(STAGES, ["retrieval"])] == [
        "demo_world", "bm25_index", "entity_questions", "train_retriever", "retrieval"]
    # the paraphrase branch does not wait for the EntityQuestions one
    readers = {s.name for s in with_upstream(STAGES, ["readers"])}
    assert readers == {"demo_world", "demo_reading_world", "paraphrase", "train_reader",
                       "readers"}
    assert [s.name for s in with_upstream(STAGES, ["paraphrase"])] == [
        "demo_reading_world", "paraphrase"]


def test_a_partial_study_of_a_stage_that_does_not_run_is_an_error():
    with pytest.raises(ValueError, match="no stage 'retreival'.*expected one of"):
        with_upstream(STAGES, ["retreival"])
    without_world = [s for s in STAGES if s.name != "demo_world"]  # real data
    with pytest.raises(ValueError, match="no stage 'demo_world'"):
        with_upstream(without_world, ["demo_world"])
