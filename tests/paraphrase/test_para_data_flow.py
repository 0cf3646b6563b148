"""The paraphrase flow end to end on the hand-made world: artifacts, report, cache, ratings.

The default run uses the PPDB-substitution paraphraser (no training: seconds); the neural
paraphraser of the smoke profile runs in the ``slow`` test and in
``test_para_data_generation.py``.
"""

from __future__ import annotations

import csv
import json

import pytest
from para_data_world import PROJECT_ROOT, stub_taggers, write_mini_world
from prefect_runs import settled_task_states

from tasks.io.squad import read_squad
from tasks.io.tables import read_table
from tasks.layout import Layout
from tasks.orchestration import run_settings
from tasks.paraphrase.report import STEPS

# name -> runs per flow run (None: one or more; generation runs in shards, in a subflow)
CACHED_TASKS = {"build PPDB table": 1, "PPDB suggestions": 1, "plan generation shards": 2,
                "generate paraphrase shard": None, "merge paraphrase shards": 2,
                "similarity filter": 2, "test set": 2, "human evaluation": 2,
                "adversarial suggestions": 1, "what the paraphrases change": 2}


def make_params(root, **overrides):
    from tasks.params_loading import load_params

    paths = {f"paths.{name}": str(root / name)
             for name in ("data", "results", "metrics", "plots", "reports", "state")}
    # the hand-made world is no demo world: its questions are not the world raters' grammar
    params = load_params(PROJECT_ROOT / "params.yaml", profile="smoke",
                         overrides={**paths, "paraphrase.world_raters": False, **overrides})
    write_mini_world(params.paths.raw, params.sources)
    return params


@pytest.fixture(scope="module")
def runs(prefect_api, tmp_path_factory):
    """Two runs with the PPDB-substitution paraphraser and the adversarial branch on, its
    Flair taggers replaced by stubs (loaded by name through ``load_tagger``)."""
    import models.flair_taggers
    from flows.paraphrase import paraphrase

    stubs = dict(zip(("stub-ner", "stub-chunk"), stub_taggers(), strict=True))
    params = make_params(tmp_path_factory.mktemp("para_flow"),
                         **{"paraphrase.generator": "ppdb_substitution",
                            "paraphrase.adversarial": True,
                            "paraphrase.ner_tagger": "stub-ner",
                            "paraphrase.chunk_tagger": "stub-chunk"})
    with pytest.MonkeyPatch.context() as patch, run_settings(params.paths.state):
        patch.setattr(models.flair_taggers, "load_tagger", stubs.__getitem__)
        first = paraphrase(params=params, return_state=True)
        second = paraphrase(params=params, return_state=True)
    return params, first, second


def test_flow_writes_the_test_set_in_the_release_layout(runs):
    params, first, _ = runs
    assert first.is_completed()
    stats = first.result()
    layout = Layout(params)
    orig = list(read_squad(layout.paraphrase_test_sets / "dev_orig.json").questions())
    para = list(read_squad(layout.paraphrase_test_sets / "dev_para.json").questions())
    test = stats["test_set"]
    assert 1 <= test["test_pairs"] == len(orig) == len(para) == test["questions_with_accepted"]
    assert test["questions"] == 7
    for i, (o, p) in enumerate(zip(orig, para, strict=True)):
        assert o.title == p.title == f"Title_{i}" and int(p.id) == int(o.id) - 1
        assert (o.context, o.answers) == (p.context, p.answers) and o.question != p.question
    scored = read_table(layout.paraphrase_scored).to_pylist()
    kept = {(r["qid"], r["paraphrase"]) for r in scored if r["keep_test_set"]}
    assert all(r["similarity"] > 0.95 for r in scored if r["keep_test_set"])
    pairs = read_table(layout.paraphrase_test_sets / "dev_pairs.parquet").to_pylist()
    assert all((r["squad_id"], r["paraphrase"]) in kept for r in pairs)


def test_counts_are_consistent_from_step_to_step(runs):
    _, first, _ = runs
    stats = first.result()
    assert stats["ppdb"]["kept"] == 21 and stats["suggestions"]["questions"] == 7
    gen, sim = stats["generation"], stats["similarity"]
    assert gen["inputs"] == stats["suggestions"]["suggestions"] + 7
    assert gen["inputs"] == gen["empty"] + gen["unchanged"] + gen["duplicates"] + \
        gen["candidates"]
    assert sim["candidates"] == gen["candidates"]
    assert sim["kept_test_set"] <= sim["kept_augmentation"] <= \
        sim["kept_adversarial_augmentation"] <= sim["candidates"]
    assert stats["test_set"]["accepted_candidates"] == sim["kept_test_set"]
    assert stats["human_eval"]["pairs_exported"] == stats["test_set"]["test_pairs"]


def test_report_metrics_and_artifact(runs):
    params, first, _ = runs
    layout = Layout(params)
    text = layout.paraphrase_report.read_text(encoding="utf-8")
    for key, heading in STEPS:
        if key in first.result():
            assert f"## {heading}" in text
    assert "## Example paraphrases" in text and "| kept |" in text
    metrics = json.loads(layout.paraphrase_metrics.read_text(encoding="utf-8"))
    assert metrics["test_set"] == first.result()["test_set"]

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=["paraphrase-report"])))
    assert artifacts and artifacts[0].type == "markdown"
    assert "Similarity filter" in artifacts[0].data


def test_adversarial_branch(runs):
    params, first, _ = runs
    stats = first.result()
    assert stats["adversarial"]["suggestions"] == 1
    assert stats["adversarial_generation"]["inputs"] == 1
    assert stats["adversarial_similarity"]["candidates"] == \
        stats["adversarial_generation"]["candidates"]
    adv = Layout(params).paraphrase_test_sets
    orig = read_squad(adv / "adv_orig.json")
    assert len(orig) == stats["adversarial_set"]["test_pairs"]
    assert all(q.id.startswith("1000") for q in orig.questions())  # the adv id scheme
    assert "## Adversarial suggestions" in Layout(params).paraphrase_report.read_text()


def test_the_report_says_what_the_paraphrases_of_each_set_change(runs):
    from tasks.paraphrase.edits import summarise_edits

    params, first, _ = runs
    stats, sets = first.result(), Layout(params).paraphrase_test_sets
    assert set(stats["edits"]) == {"dev", "adv"}
    assert stats["edits"]["dev"]["pairs"] == stats["test_set"]["test_pairs"]
    assert stats["edits"]["adv"]["pairs"] == stats["adversarial_set"]["test_pairs"]
    assert stats["edits"]["dev"] == summarise_edits(sets / "dev_pairs.parquet",
                                                    sets / "dev_orig.json")
    metrics = json.loads(Layout(params).paraphrase_metrics.read_text(encoding="utf-8"))
    assert metrics["edits"] == stats["edits"]


def test_second_run_is_served_from_the_cache(runs):
    _, first, second = runs
    assert second.is_completed() and second.result() == first.result()
    states = settled_task_states(second.state_details.flow_run_id, CACHED_TASKS)
    for name, runs_of_it in CACHED_TASKS.items():
        assert states[name] == ["Cached"] * (runs_of_it or len(states[name])), (name, states)
    assert len(states["generate paraphrase shard"]) >= 2, states  # more than one shard


def test_ratings_round_trip_through_the_flow(runs):
    from flows.paraphrase import paraphrase

    params, first, _ = runs
    layout = Layout(params)
    form = layout.paraphrase_human_eval / "dev" / "form.csv"
    with open(form, encoding="utf-8", newline="") as handle:
        comment = handle.readline()
        rows = list(csv.DictReader(handle))
    first_pair = rows[0]["pair_id"]
    for row in rows:  # everything accepted but the first pair, which rater B rejects
        bad = row["pair_id"] == first_pair and row["rater"] == "B"
        row["semantic_equivalence"], row["fluency"] = ("2", "5") if bad else ("5", "4")
    filled = params.paths.results / "ratings.csv"
    with open(filled, "w", encoding="utf-8", newline="") as handle:
        handle.write(comment)
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    rated = params.model_copy(update={"paraphrase": params.paraphrase.model_copy(
        update={"ratings_file": "ratings.csv"})})
    with run_settings(rated.paths.state):
        stats = paraphrase(params=rated)
    n = first.result()["test_set"]["test_pairs"]
    assert stats["human_eval"]["rated"] == n and stats["human_eval"]["kept"] == n - 1
    human = read_squad(layout.paraphrase_human_eval / "dev" / "dev_human_para.json")
    assert len(human) == n - 1
    results = json.loads((layout.paraphrase_human_eval / "dev" / "results.json").read_text())
    assert first_pair not in results["kept"]


@pytest.mark.slow
def test_neural_smoke_profile_runs(prefect_api, tmp_path_factory):
    """The smoke profile as configured: tiny neural paraphraser, a few steps."""
    from flows.paraphrase import paraphrase

    params = make_params(tmp_path_factory.mktemp("para_neural"))
    with run_settings(params.paths.state):
        stats = paraphrase(params=params)
    assert stats["paraphraser"]["global_step"] == params.paraphrase.model.max_steps
    assert stats["generation"]["inputs"] == stats["suggestions"]["suggestions"] + 7
    assert (Layout(params).paraphrase_test_sets / "dev_para.json").is_file()
