"""Augmented reader training data and the before/after tables (Gan & Ng, 2019, Tables 3-6):
only candidates above the bar enter, at most ``per_question`` per question and ``n`` in all,
every skip is counted; the augmented file is valid SQuAD v1.1 with matching answer offsets;
gains and their CIs; clear errors for bad input."""

from __future__ import annotations

import json

import pytest

from tasks.io.squad import build_squad, read_squad, write_squad
from tasks.io.squad_predictions import write_predictions
from tasks.io.tables import read_table, write_table
from tasks.reading.augmentation import (
    ADDED_FILE,
    TRAIN_FILE,
    augmented_squad,
    build_augmented_training,
    select_augmentation,
)
from tasks.reading.augmentation_tables import compare_file, write_augmentation_tables
from tasks.reading.scoring import read_squad_v11

CONTEXT_A = "Ada Park was born in Lyon. She moved to Oslo in 1990."
CONTEXT_B = "The Blue Hour is an album by Tom Reed, released in 2001."


def _train() -> dict:
    return build_squad("1.1", [
        ("Ada Park", [(CONTEXT_A, [("a1", "Where was Ada Park born?", [("Lyon", None)]),
                                   ("a2", "When did Ada Park move to Oslo?", [("1990", None)])])]),
        ("The Blue Hour", [(CONTEXT_B, [("b1", "Who made The Blue Hour?", [("Tom Reed", None)])])]),
    ])


def _row(qid: str, paraphrase: str, keep: bool, similarity: float = 0.95) -> dict:
    return {"qid": qid, "paraphrase": paraphrase, "suggestion": "s", "similarity": similarity,
            "keep_augmentation": keep}


def test_only_rows_above_the_bar_enter_and_every_skip_is_counted():
    rows = [_row("a1", "where is ada park from?", True), _row("a1", "ada park birthplace?", False),
            _row("a2", "when did ada park go to oslo?", True),
            _row("a2", "what year did ada park move?", True),
            _row("b1", "who recorded the blue hour?", False, 0.5)]
    chosen, counts = select_augmentation(rows, "keep_augmentation", n=10, per_question=1, seed=1)
    assert all(r["keep_augmentation"] for r in chosen)
    assert sorted(r["qid"] for r in chosen) == ["a1", "a2"]  # one per question
    assert counts == {"candidates": 5, "skipped_below_bar": 2, "above_bar": 3,
                      "skipped_per_question": 1, "skipped_over_n": 0, "requested": 10,
                      "added": 2, "shortfall": 8}
    chosen2, counts2 = select_augmentation(rows, "keep_augmentation", n=10, per_question=2)
    assert len(chosen2) == 3 and counts2["skipped_per_question"] == 0


def test_rows_the_raters_reject_are_skipped_and_counted():
    rows = [{**_row("a1", "where is ada park from?", True), "world_accepted": False},
            {**_row("a1", "where was ada park born ?", True), "world_accepted": True},
            {**_row("a2", "when did ada park go to oslo?", True), "world_accepted": False},
            {**_row("b1", "who recorded the blue hour?", False, 0.5), "world_accepted": False}]
    chosen, counts = select_augmentation(rows, "keep_augmentation", n=10, per_question=2,
                                         rated_column="world_accepted")
    assert [r["paraphrase"] for r in chosen] == ["where was ada park born ?"]
    assert counts["skipped_below_bar"] == 1 and counts["above_bar"] == 3
    assert counts["skipped_by_raters"] == 2 and counts["added"] == 1
    assert "skipped_by_raters" not in select_augmentation(rows, "keep_augmentation", n=10)[1]
    with pytest.raises(ValueError, match="row 0 .* no 'rated' flag"):
        select_augmentation(rows, "keep_augmentation", n=10, rated_column="rated")


def test_n_is_respected_and_the_sample_is_seeded():
    rows = [_row(f"q{i}", f"paraphrase {i}", True) for i in range(50)]
    chosen, counts = select_augmentation(rows, "keep_augmentation", n=7, seed=3)
    assert len(chosen) == 7 and counts["skipped_over_n"] == 43 and counts["shortfall"] == 0
    assert [r["qid"] for r in chosen] == [r["qid"] for r in
                                           select_augmentation(rows, "keep_augmentation", 7,
                                                               seed=3)[0]]
    order = [int(r["qid"][1:]) for r in chosen]
    assert order == sorted(order)  # kept in input order
    other = select_augmentation(rows, "keep_augmentation", n=7, seed=4)[0]
    assert {r["qid"] for r in other} != {r["qid"] for r in chosen}


def test_bad_selection_input_is_an_error():
    with pytest.raises(ValueError, match="n >= 1"):
        select_augmentation([], "keep_augmentation", n=0)
    with pytest.raises(ValueError, match="no 'keep_adversarial_augmentation' flag"):
        select_augmentation([_row("a1", "x", True)], "keep_adversarial_augmentation", n=1)


def test_augmented_file_is_valid_squad_with_matching_offsets(tmp_path):
    write_squad(tmp_path / "train.json", _train())
    write_table(tmp_path / "scored.parquet", [
        _row("a1", "where is ada park from?", True), _row("a1", "ada park's birthplace?", True),
        _row("b1", "who recorded the blue hour?", True, 0.93),
        _row("a2", "ada park oslo?", False, 0.4)])
    counts = build_augmented_training(tmp_path / "train.json", tmp_path / "scored.parquet",
                                      tmp_path / "aug", "keep_augmentation", n=5,
                                      per_question=2)
    data = read_squad_v11(tmp_path / "aug" / TRAIN_FILE)  # validates offsets and ids
    questions = list(data.questions())
    assert [q.id for q in questions] == ["a1", "a1_para1", "a1_para2", "a2", "b1", "b1_para1"]
    for q in questions:
        for answer in q.answers:
            assert q.context[answer.answer_start:answer.answer_start + len(answer.text)] == \
                answer.text
    by_id = {q.id: q for q in questions}
    assert by_id["b1_para1"].question == "who recorded the blue hour?"
    assert by_id["b1_para1"].answers == by_id["b1"].answers
    assert json.loads((tmp_path / "aug" / TRAIN_FILE).read_text())["version"] == "1.1"
    assert counts["added"] == 3 and counts["shortfall"] == 2
    assert counts["skipped_below_bar"] == 1 and counts["total_training_questions"] == 6
    assert counts["training_questions"] == 3 and counts["questions_augmented"] == 2
    added = read_table(tmp_path / "aug" / ADDED_FILE).to_pylist()
    assert [r["id"] for r in added] == ["a1_para1", "a1_para2", "b1_para1"]
    assert all(r["similarity"] > 0.9 for r in added)
    assert len(list(read_squad(tmp_path / "train.json").questions())) == 3  # input untouched


def test_candidates_of_another_file_and_bad_tables_are_errors(tmp_path):
    with pytest.raises(ValueError, match=r"not in the training file \(ids \['zz'\]\)"):
        augmented_squad(_train(), [{"qid": "zz", "paraphrase": "x"}])
    write_squad(tmp_path / "train.json", _train())
    write_table(tmp_path / "scored.parquet", [{"qid": "a1", "paraphrase": "x"}])
    with pytest.raises(ValueError, match="scored.parquet: no column 'keep_augmentation'"):
        build_augmented_training(tmp_path / "train.json", tmp_path / "scored.parquet",
                                 tmp_path / "aug", "keep_augmentation", n=1)


def test_gains_and_cis_before_vs_after(tmp_path):
    write_squad(tmp_path / "dev.json", _train())
    before = {"a1": "Oslo", "a2": "1990", "b1": "nobody"}
    after = {"a1": "Lyon", "a2": "1990", "b1": "Tom Reed"}
    block = compare_file(tmp_path / "dev.json", before, after, n_bootstrap=200, seed=0)
    assert block["questions"] == 3
    assert block["before"]["exact_match"] == pytest.approx(33.33)
    assert block["after"]["exact_match"] == 100.0
    gain = block["exact_match_gain"]
    assert gain["difference"] == pytest.approx(66.67)
    assert gain["ci_low"] <= gain["difference"] <= gain["ci_high"]
    assert compare_file(tmp_path / "dev.json", after, after)["f1_gain"]["difference"] == 0.0
    write_squad(tmp_path / "empty.json", {"version": "1.1", "data": []})
    assert compare_file(tmp_path / "empty.json", {}, {}) == {"questions": 0}


def test_tables_report_counts_gains_and_examples(tmp_path):
    write_squad(tmp_path / "dev.json", _train())
    write_predictions(tmp_path / "b.json", {"a1": "Oslo"})
    block = compare_file(tmp_path / "dev.json", {"a1": "Oslo"}, {"a1": "Lyon"}, n_bootstrap=50)
    write_table(tmp_path / "added.parquet", [
        {"id": "a1_para1", "orig_id": "a1", "original": "Where was Ada Park born?",
         "paraphrase": "where is ada park from?", "suggestion": "from", "similarity": 0.93}])
    metrics = {"n_bootstrap": 50, "seed": 0, "confidence": 0.95, "files": {}, "kinds": {
        "non_adversarial": {"augmentation": {"threshold": 0.9, "added": 1, "requested": 5,
                                             "skipped_below_bar": 4},
                            "sets": {"dev_para": block}}}}
    write_augmentation_tables(metrics, tmp_path / "m.json", tmp_path / "r.md",
                              {"non_adversarial": tmp_path / "added.parquet"})
    text = (tmp_path / "r.md").read_text()
    assert "| non_adversarial | 0.9 |" in text and "where is ada park from?" in text
    assert f"| non_adversarial | dev_para | 3 | {block['before']['exact_match']} |" in text
    assert json.loads((tmp_path / "m.json").read_text()) == metrics
