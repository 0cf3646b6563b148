"""The whole construction on the hand-built world (plain steps) and on the smoke demo world:
layout, formats, determinism, DPR training JSON, the table and the summary."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from eq_world import RELATIONS, world_params

from flows.entity_questions import construct
from tasks.evaluation.has_answer import passage_has_answer
from tasks.io.dpr import iter_dpr_examples
from tasks.io.entityquestions import discover_eq_files, read_eq_file
from tasks.io.tables import read_table
from tasks.layout import Layout
from tasks.questions.linking import normalise_tokens
from tasks.questions.overlap import shared_tokens
from tasks.questions.templates import parse_subject

RELEASE_HEAD = re.compile(r'\[\n {4}\{\n {8}"question": ".+",\n {8}"answers": \[\n {12}"')


def _params(root: Path, world: Path, **overrides):
    """Outputs under ``root``; the raw inputs of the shared world by absolute path."""
    params = world_params(root, **overrides)
    raw = world / "data" / "raw"
    sources = params.sources.model_copy(update={
        "trex": str(raw / "trex" / "*.json"),
        "entity_labels": str(raw / "wikidata" / "entity_labels.jsonl"),
        "hyperlink_counts": str(raw / "hyperlinks" / "entity_counts.tsv"),
        "passages": str(raw / "wikipedia" / "psgs_w100.tsv"),
        "nq_train": str(raw / "nq" / "nq-train.json")})
    eq = params.entity_questions.model_copy(update={
        "linker_truth": str(raw / "nq" / "nq-train.entities.jsonl")})
    return params.model_copy(update={"sources": sources, "entity_questions": eq})


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(eq_world, tmp_path_factory):
    world, truth = eq_world
    params = _params(tmp_path_factory.mktemp("eq-a"), world)
    return params, construct(params, plain=True), truth


def test_official_layout_and_release_format(built):
    params, tests, _ = built
    layout = Layout(params)
    dataset = layout.eq_dataset
    assert set(tests) == set(RELATIONS) and all(n == 30 for n in tests.values())
    assert set(discover_eq_files(dataset, "test")) == set(RELATIONS)  # the retrieval contract
    for relation in RELATIONS:
        for collection in ("common-random-buckets", "nq-seen-buckets"):
            names = sorted(p.name for p in (dataset / "one-off" / collection / relation).iterdir())
            assert names == [f"bucket{b}.test.json" for b in range(8)]
        for split in ("train", "dev", "test"):
            assert (dataset / "one-off" / "no-overlap" / relation
                    / f"{relation}_no_overlap.{split}.json").is_file()
    similar = sorted(p.name for p in (dataset / "one-off" / "similar").iterdir())
    assert similar == ["P159", "P170", "P19"]
    for path in (dataset / "one-off" / "similar" / "P19").iterdir():
        for item in read_eq_file(path):
            assert item.question.startswith("What is the birthplace of ")
    text = (dataset / "test" / "P19.test.json").read_text()
    assert RELEASE_HEAD.match(text) and not text.endswith("\n")


def test_questions_parse_back_to_their_subjects_and_answers_cover_all_objects(built):
    params, _, truth = built
    table = read_table(Layout(params).questions_table).to_pylist()
    assert {row["collection"] for row in table} == {
        "entityquestions", "common-random-buckets", "nq-seen-buckets", "no-overlap", "similar"}
    for row in table:
        assert parse_subject(row["template"], row["question"]) == row["subject_label"]
        assert row["bucket"] is not None and 0 <= row["bucket"] < 8
    people = {v: k for k, v in truth["people"].items()}
    two_places = [row for row in table if row["relation"] == "P19"
                  and len(truth["facts"][(people[row["subject_label"]], "P19")]) > 1]
    assert two_places and all(len(row["object_ids"]) == 2 for row in two_places)
    first = two_places[0]["answers"]
    assert any(a.startswith("City of ") for a in first)  # aliases of the objects included


def test_no_subject_in_two_splits_and_no_overlap_sets_are_clean(built):
    params, _, _ = built
    table = read_table(Layout(params).questions_table).to_pylist()
    owner: dict[str, str] = {}
    for row in table:
        if row["collection"] == "entityquestions":
            assert owner.setdefault(row["subject_id"], row["split"]) == row["split"]
    for relation in RELATIONS:
        rows = [r for r in table if r["collection"] == "no-overlap" and r["relation"] == relation]
        test = [r["subject_label"] for r in rows if r["split"] == "test"]
        train = [r["subject_label"] for r in rows if r["split"] != "test"]
        vocabulary = set().union(*(normalise_tokens(s) for s in test))
        assert not any(set(normalise_tokens(s)) & vocabulary for s in train)
        main_test = {r["subject_id"] for r in table if r["collection"] == "entityquestions"
                     and r["relation"] == relation and r["split"] == "test"}
        no_overlap_test = {r["subject_id"] for r in rows if r["split"] == "test"}
        assert no_overlap_test <= main_test and len(no_overlap_test) == 15
        assert not main_test & {r["subject_id"] for r in rows if r["split"] != "test"}
    assert any(r["collection"] == "no-overlap" and r["split"] == "train" for r in table)
    assert shared_tokens([], []) == set()


def test_train_ent_keeps_exactly_the_linked_subjects(built):
    params, _, truth = built
    table = read_table(Layout(params).questions_table).to_pylist()
    linked = {json.loads(line)["entities"][0] for line in
              (Layout(params).eq_work / "nq-train.links.jsonl").read_text().splitlines()}
    seen_rows = [r for r in table if r["collection"] == "nq-seen-buckets"]
    assert seen_rows and all(r["subject_id"] in linked for r in seen_rows)
    p19 = {r["subject_id"] for r in seen_rows if r["relation"] == "P19"}
    assert p19 == linked & {q for q, _ in truth["facts"]}  # every linked person, all buckets
    rand = [r for r in table if r["collection"] == "common-random-buckets"]
    per_bucket: dict[tuple[str, int], int] = {}
    for row in rand:
        key = (row["relation"], row["bucket"])
        per_bucket[key] = per_bucket.get(key, 0) + 1
    assert max(per_bucket.values()) == 15  # per_bucket caps rand-ent


def test_dpr_training_json(built):
    params, _, _ = built
    dpr = Layout(params).eq_dpr
    path = dpr / "train" / "P19.train.json"
    examples = list(iter_dpr_examples(path))
    assert len(examples) == len(read_eq_file(Layout(params).eq_dataset / "train" /
                                             "P19.train.json"))
    for example in examples:
        subject = parse_subject("P19", example.question)
        assert example.positive_ctxs
        for ctx in example.positive_ctxs:
            assert passage_has_answer(example.answers, ctx.text)
            assert " ".join(normalise_tokens(subject)) in " ".join(
                normalise_tokens(f"{ctx.title} {ctx.text}"))
        assert example.positive_ctxs[0].title == subject
    assert (dpr / "one-off" / "no-overlap" / "P19" / "P19_no_overlap.train.json").is_file()


def test_summary_lists_every_relation_and_the_linker_scores(built):
    params, _, _ = built
    text = Layout(params).eq_summary.read_text()
    for relation in RELATIONS:
        assert f"| {relation} |" in text and f"### {relation}" in text
    assert "precision 100.0%" in text and "bucket7" in text


def test_metrics_json_holds_the_counts_and_the_linker_scores(built):
    params, tests, _ = built
    metrics = json.loads(Layout(params).eq_metrics.read_text())
    assert metrics["relations"]["selected"] == len(RELATIONS) == len(metrics["questions"])
    assert {r: c["test"] for r, c in metrics["questions"].items()} == tests
    assert metrics["totals"]["test"] == sum(tests.values())
    assert metrics["totals"]["rand_ent"] == sum(sum(c["rand_ent"])
                                                for c in metrics["questions"].values())
    scores = metrics["linking"]["scores"]
    assert scores["precision"] == 100.0 and scores["questions"] == metrics["linking"]["questions"]
    assert "/" not in json.dumps(metrics)  # counts and scores only: no paths
    # every train/dev question is an example of the DPR training JSON or counted without one
    dpr, layout = metrics["dpr_training"], Layout(params)
    written = [path for path in layout.eq_dpr.rglob("*.json")]
    assert dpr["examples"] == sum(len(list(iter_dpr_examples(path))) for path in written) > 0
    assert dpr["questions"] == dpr["examples"] + dpr["without_positive"]
    assert dpr["passages_skipped"] == 0


def test_questions_without_a_positive_and_bad_passages_are_counted(tmp_path):
    """A question whose subject no passage mentions gets no example, counted; a malformed
    passage record raises, or with on_bad_record=skip is counted."""
    from tasks.io.errors import DataFormatError
    from tasks.questions.dpr_training import dpr_training_step

    passages = tmp_path / "psgs.tsv"
    passages.write_text("id\ttext\ttitle\n1\tAda Lee was born in Paris.\tAda Lee\n"
                        "2\tbroken\n", encoding="utf-8")
    dataset = tmp_path / "dataset" / "train"
    dataset.mkdir(parents=True)
    (dataset / "P19.train.json").write_text(json.dumps([
        {"question": "Where was Ada Lee born?", "answers": ["Paris"]},
        {"question": "Where was Bo Kim born?", "answers": ["Oslo"]}]))
    with pytest.raises(DataFormatError, match=r"psgs\.tsv, line 3: expected 3 tab-separated"):
        dpr_training_step(tmp_path / "dataset", passages, tmp_path / "dpr")
    counts = dpr_training_step(tmp_path / "dataset", passages, tmp_path / "dpr",
                               on_bad_record="skip")
    assert counts == {"files": {"train/P19.train.json": {"questions": 2, "examples": 1,
                                                          "without_positive": 1}},
                      "passages_skipped": 1}


def test_same_seed_gives_byte_identical_files_and_another_seed_does_not(built, eq_world,
                                                                        tmp_path):
    params, _, _ = built
    world, _ = eq_world
    again = _params(tmp_path / "b", world)
    construct(again, plain=True)
    first, second = Layout(params), Layout(again)
    for a, b in ((first.eq_dataset, second.eq_dataset), (first.eq_dpr, second.eq_dpr)):
        assert _files(a) == _files(b)
    assert first.questions_table.read_bytes() == second.questions_table.read_bytes()
    other = _params(tmp_path / "c", world, seed=8)
    construct(other, plain=True)
    assert _files(first.eq_dataset) != _files(Layout(other).eq_dataset)


def test_demo_bucket_files_have_the_shape_of_the_release(smoke_demo_world, shared_data,
                                                         tmp_path):
    params = smoke_demo_world.model_copy(update={"paths": smoke_demo_world.paths.model_copy(
        update={"data": tmp_path / "data", "reports": tmp_path / "reports"})})
    raw = smoke_demo_world.paths.raw
    (tmp_path / "data").mkdir()
    shutil.copytree(raw, tmp_path / "data" / "raw")
    construct(params, plain=True)
    ours = Layout(params).eq_dataset / "one-off"
    release = shared_data / "entityquestions" / "one-off"
    for collection in ("common-random-buckets", "nq-seen-buckets"):
        for reference_dir in sorted((release / collection).iterdir()):
            ours_dir = ours / collection / reference_dir.name
            reference = sorted(p.name for p in reference_dir.iterdir())
            assert sorted(p.name for p in ours_dir.iterdir()) == reference
            for name in reference:
                real = json.loads((reference_dir / name).read_text())
                mine = json.loads((ours_dir / name).read_text())
                assert isinstance(mine, list)
                for item in [*real[:3], *mine]:
                    assert set(item) == {"question", "answers"}
                    assert isinstance(item["question"], str) and item["answers"]
                    assert all(isinstance(a, str) for a in item["answers"])
                if mine:
                    assert RELEASE_HEAD.match((ours_dir / name).read_text())
        assert sum(len(json.loads(p.read_text()))
                   for p in (ours / collection).rglob("*.json")) > 0
