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


def _pairs_file(tmp_path, rows):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "dev_pairs.parquet"
    pq.write_table(pa.table({"orig_id": [r[0] for r in rows], "squad_id": [r[1] for r in rows]}),
                   path)
    return path


def test_paraphrased_pairs_per_bucket_use_the_dev_cuts(tmp_path):
    from tasks.reading.subject_buckets import paraphrase_bucket_scores, read_pair_sources

    # three pairs: originals of dev q1, q3, q4 (q4 has no subject); ids of the set's own
    orig = read_squad(write_squad(tmp_path / "dev_orig.json", build_squad("1.1", [("T", [(
        CONTEXT, [("o1", "Where was Ada born?", [("London", None)]),
                  ("o2", "Where was Bob born?", [("Leeds", None)]),
                  ("o3", "Who was born in Leeds?", [("Bob Marsh", None)])])])])))
    para = read_squad(write_squad(tmp_path / "dev_para.json", build_squad("1.1", [("T", [(
        CONTEXT, [("p1", "In which city was Ada born?", [("London", None)]),
                  ("p2", "What is Bob's birthplace?", [("Leeds", None)]),
                  ("p3", "Who is a native of Leeds?", [("Bob Marsh", None)])])])])))
    pairs = _pairs_file(tmp_path, [("o3", "q4"), ("o1", "q1"), ("o2", "q3")])
    squad_ids = read_pair_sources(pairs, [q.id for q in orig.questions()])
    assert squad_ids == ["q1", "q3", "q4"]
    buckets = bucket_questions({"q1": "ada", "q2": "ada", "q3": "bob"}, {"ada": 1, "bob": 2}, 2,
                               weight="hyperlinks")
    preds = {"r": ({"o1": "London", "o2": "Leeds", "o3": "Bob Marsh"},
                   {"p1": "Paris", "p2": "Leeds", "p3": "Bob"})}
    out = paraphrase_bucket_scores(orig, para, squad_ids, preds, buckets, 2, n_bootstrap=50)
    assert (out["pairs"], out["linked"], out["unlinked"]) == (3, 2, 1)
    b0, b1 = out["buckets"]["bucket0"], out["buckets"]["bucket1"]
    assert (b0["pairs"], b0["hyperlinks"], b1["pairs"], b1["hyperlinks"]) == (1, [1, 1], 1, [2, 2])
    em0 = b0["readers"]["r"]["exact_match"]
    assert (em0["orig"], em0["para"], em0["drop"]) == (100.0, 0.0, 100.0)
    em1 = b1["readers"]["r"]["exact_match"]
    assert (em1["orig"], em1["para"], em1["drop"]) == (100.0, 100.0, 0.0)
    assert b1["readers"]["r"]["f1"]["drop"] == 0.0
    with pytest.raises(ValueError, match="align by position"):
        paraphrase_bucket_scores(orig, para, squad_ids[:2], preds, buckets, 2)


def test_pairs_table_errors_name_the_file(tmp_path):
    from tasks.reading.subject_buckets import read_pair_sources

    pairs = _pairs_file(tmp_path, [("o1", "q1")])
    with pytest.raises(DataFormatError, match=r"dev_pairs\.parquet.*1 without one: \['o2'\]"):
        read_pair_sources(pairs, ["o1", "o2"])
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"orig_id": ["o1"]}), pairs)
    with pytest.raises(DataFormatError, match="orig_id and squad_id"):
        read_pair_sources(pairs, ["o1"])
