"""Reader EM/F1 per subject-frequency bucket: EntityQuestions' cumulative-frequency cut over the
dev questions' subjects, per-bucket scores, the sidecar's errors, the demo world's sidecar."""

from __future__ import annotations

import json

import pytest

from tasks.io.errors import DataFormatError
from tasks.io.linking import LinkedQuestion, iter_linked_questions, write_linked_questions
from tasks.io.squad import build_squad, read_squad, write_squad
from tasks.reading.subject_buckets import bucket_questions, bucket_scores, read_subjects

CONTEXT = "Ada Lovelace was born in London in 1815. Bob Marsh was born in Leeds."
QAS = [("q1", "Where was Ada born?", "London"), ("q2", "When was Ada born?", "1815"),
       ("q3", "Where was Bob born?", "Leeds"), ("q4", "Who was born in Leeds?", "Bob Marsh")]


def _dataset(tmp_path):
    raw = build_squad("1.1", [("T", [(CONTEXT, [(qid, q, [(a, None)]) for qid, q, a in QAS])])])
    return read_squad(write_squad(tmp_path / "dev.json", raw))


def test_buckets_cut_cumulative_frequency_like_entity_questions():
    subjects = {"q1": "a", "q2": "b", "q3": "c", "q4": "d"}
    counts = {"a": 1, "b": 1, "c": 2, "d": 4}  # total 8: {a, b, c} = 4 | {d} = 4
    assert bucket_questions(subjects, counts, 2, weight="hyperlinks") == {
        "q1": (0, 1), "q2": (0, 1), "q3": (0, 2), "q4": (1, 4)}
    assert bucket_questions(subjects, counts, 2, "descending", "hyperlinks")["q4"] == (0, 4)
    # equal numbers of questions: the two rarest | the two most frequent subjects
    assert bucket_questions(subjects, counts, 2) == {"q1": (0, 1), "q2": (0, 1), "q3": (1, 2),
                                                     "q4": (1, 4)}
    assert bucket_questions({"q1": "unknown"}, counts, 2)["q1"][1] == 0  # no count: 0
    with pytest.raises(ValueError, match="weight"):
        bucket_questions(subjects, counts, 2, weight="facts")


def test_scores_per_bucket_and_reader(tmp_path):
    dataset = _dataset(tmp_path)
    subjects = {"q1": "ada", "q2": "ada", "q3": "bob"}  # q4 unlinked
    preds = {"good": {"q1": "London", "q2": "1815", "q3": "Leeds", "q4": "Bob"},
             "half": {"q1": "the London", "q2": "born", "q3": "Leeds Bob Marsh"}}
    out = bucket_scores(dataset, preds, subjects, {"ada": 1, "bob": 2}, n_buckets=2,
                        weight="hyperlinks")
    assert (out["questions"], out["linked"], out["unlinked"]) == (4, 3, 1)
    b0, b1 = out["buckets"]["bucket0"], out["buckets"]["bucket1"]
    assert b0["questions"] == 2 and b0["hyperlinks"] == [1, 1]  # ada: 1 + 1 = bob's 2
    assert b0["readers"]["good"] == {"exact_match": 100.0, "f1": 100.0}
    assert b0["readers"]["half"] == {"exact_match": 50.0, "f1": 50.0}  # "the London" = London
    assert b1["questions"] == 1 and b1["hyperlinks"] == [2, 2]
    assert b1["readers"]["half"]["exact_match"] == 0.0
    assert b1["readers"]["half"]["f1"] == pytest.approx(50.0)  # 1 of 3 tokens, all of gold
    # a subject carrying more than an equal share gets a bucket of its own; one stays empty
    out = bucket_scores(dataset, preds, subjects, {"ada": 1, "bob": 50}, n_buckets=4,
                        weight="hyperlinks")
    assert out["buckets"]["bucket0"] == {"questions": 0, "hyperlinks": None,
                                         "readers": {"good": None, "half": None}}
    assert [out["buckets"][f"bucket{i}"]["questions"] for i in range(4)] == [0, 1, 1, 1]
    equal = bucket_scores(dataset, preds, subjects, {"ada": 1, "bob": 50}, n_buckets=3)
    assert equal["weight"] == "questions"
    assert [equal["buckets"][f"bucket{i}"]["questions"] for i in range(3)] == [1, 1, 1]


def test_sidecar_errors_name_file_and_line(tmp_path):
    path = tmp_path / "dev.entities.jsonl"
    write_linked_questions(path, [LinkedQuestion("Where was Ada born?", ("ada",), "q1"),
                                  LinkedQuestion("Who?", ("x",), "q9")])
    with pytest.raises(DataFormatError, match=r"dev\.entities\.jsonl, line 2.*'q9'"):
        read_subjects(path, {"q1", "q2"})
    path.write_text(json.dumps({"question": "Where?", "entities": ["ada"]}) + "\n")
    with pytest.raises(DataFormatError, match="line 1"):
        read_subjects(path, {"q1"})
    path.write_text(json.dumps({"id": 3, "question": "Where?", "entities": ["ada"]}) + "\n")
    with pytest.raises(DataFormatError, match='"id"'):
        read_subjects(path, {"q1"})


def test_demo_world_writes_the_subject_of_every_dev_question(smoke_world):
    from tasks.io.entity_labels import read_entity_labels

    dev = read_squad(smoke_world.raw_path("squad_dev"))
    links = list(iter_linked_questions(smoke_world.raw_path("squad_dev_entities")))
    questions = {q.id: q.question for q in dev.questions()}
    assert [link.id for link in links] == list(questions)  # one line per question, in order
    labels = read_entity_labels(smoke_world.raw_path("entity_labels"))
    for link in links:
        assert link.question == questions[link.id]
        assert len(link.entities) == 1 and labels[link.entities[0]].label in link.question
