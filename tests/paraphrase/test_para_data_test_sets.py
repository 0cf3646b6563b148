"""The non-adversarial test set: one paraphrase per original at most, the release's layout."""

from __future__ import annotations

import json

import pytest

from tasks.io.squad import read_squad
from tasks.io.tables import write_table
from tasks.paraphrase.test_sets import (
    ParaphrasePair,
    build_test_set,
    choose_pairs,
    read_test_pairs,
    release_ids,
    write_test_set,
)

RELEASED = {"dev": (1062, None, True), "adv": (56, 100 * (10000 + 56), False)}


def scored(path, rows):
    write_table(path, [{"qid": q, "paraphrase": p, "suggestion": s, "similarity": sim,
                        "keep_test_set": sim > 0.95} for q, p, s, sim in rows])
    return path


ROWS = [
    ("q1", "what is the main city of france?", "main city", 0.97),
    ("q1", "what is the principal city of france?", "principal", 0.96),
    ("q1", "what is the capital city of french republic?", "french republic", 0.91),
    ("q2", "who authored the novel moby dick?", "authored", 0.98),
    ("q3", "when was the famous bridge erected?", "erected", 0.94),   # below: no q3 pair
    ("q6", "where was the writer born?", "writer", 0.951),
]


def test_release_ids_follow_the_released_numbering():
    assert release_ids(1062)[:2] == [("106201", "106200"), ("106202", "106201")]
    assert release_ids(1062)[-1] == ("107262", "107261")
    assert release_ids(56, 100 * (10000 + 56))[0] == ("1005601", "1005600")
    assert release_ids(56, scheme="adv")[-1] == ("1005656", "1005655")
    with pytest.raises(ValueError, match="id scheme"):
        release_ids(3, scheme="other")


def test_at_most_one_paraphrase_per_original(mini_params, tmp_path):
    counts = build_test_set(mini_params.raw_path("squad_dev"), scored(tmp_path / "s.parquet",
                            ROWS), tmp_path / "out", seed=5)
    assert counts == {"questions": 7, "accepted_candidates": 4, "questions_with_accepted": 3,
                      "test_pairs": 3, "squad_skipped": 0}
    orig = list(read_squad(tmp_path / "out" / "dev_orig.json").questions())
    para = list(read_squad(tmp_path / "out" / "dev_para.json").questions())
    assert [q.id for q in orig] == ["301", "302", "303"]
    assert [q.id for q in para] == ["300", "301", "302"]
    assert [q.title for q in orig] == [q.title for q in para] == ["Title_0", "Title_1", "Title_2"]
    assert [q.question for q in orig] == ["what is the capital city of france?",
                                          "who wrote the novel moby dick?",
                                          "where was the author born?"]
    assert para[0].question in {"what is the main city of france?",
                                "what is the principal city of france?"}
    assert [q.question for q in para[1:]] == [
        "who authored the novel moby dick?", "where was the writer born?"]
    for o, p in zip(orig, para, strict=True):
        assert (o.context, o.answers) == (p.context, p.answers)
    pairs = read_test_pairs(tmp_path / "out")
    assert [(r["squad_id"], r["orig_id"], r["para_id"]) for r in pairs] == [
        ("q1", "301", "300"), ("q2", "302", "301"), ("q6", "303", "302")]


def test_choice_is_seeded_and_per_question(mini_params):
    questions = list(read_squad(mini_params.raw_path("squad_dev")).questions())
    options = [{"qid": "q1", "paraphrase": f"paraphrase {i}"} for i in range(20)]
    picks = {choose_pairs(questions, options, seed)[0].paraphrase for seed in range(30)}
    assert len(picks) > 5  # the seed changes the choice
    first = choose_pairs(questions, options, seed=11)
    assert first == choose_pairs(questions, list(reversed(options)), seed=11)
    more = options + [{"qid": "q2", "paraphrase": "other"}]
    assert choose_pairs(questions, more, seed=11)[0] == first[0]  # unaffected by other rows


def test_layout_key_order_is_the_dev_release(mini_params, tmp_path):
    build_test_set(mini_params.raw_path("squad_dev"), scored(tmp_path / "s.parquet", ROWS),
                   tmp_path / "out")
    raw = json.loads((tmp_path / "out" / "dev_para.json").read_text(encoding="utf-8"))
    article = raw["data"][0]
    assert list(raw) == ["version", "data"] and raw["version"] == "1.1"
    assert list(article) == ["title", "paragraphs"] and len(article["paragraphs"]) == 1
    assert list(article["paragraphs"][0]) == ["qas", "context"]
    qa = article["paragraphs"][0]["qas"]
    assert len(qa) == 1 and list(qa[0]) == ["answers", "question", "id"]
    assert list(qa[0]["answers"][0]) == ["text", "answer_start"]


def test_no_accepted_paraphrase_writes_empty_files(mini_params, tmp_path):
    counts = build_test_set(mini_params.raw_path("squad_dev"),
                            scored(tmp_path / "s.parquet", [("q1", "x?", "x", 0.5)]),
                            tmp_path / "out")
    assert counts["test_pairs"] == 0
    assert len(read_squad(tmp_path / "out" / "dev_orig.json")) == 0


def test_missing_keep_column(mini_params, tmp_path):
    with pytest.raises(ValueError, match="no column 'keep_other'"):
        build_test_set(mini_params.raw_path("squad_dev"), scored(tmp_path / "s.parquet", ROWS),
                       tmp_path / "out", keep_column="keep_other")


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_writer_reproduces_the_released_sets(shared_data, tmp_path, name):
    """Pairs read from a release and written back give the release's JSON, key order included
    for the dev layout (the adversarial file orders its keys differently)."""
    folder = shared_data / "paraphrasing-squad"
    n, id_base, lowercase = RELEASED[name]
    orig = list(read_squad(folder / f"{name}_orig.json").questions())
    para = list(read_squad(folder / f"{name}_para.json").questions())
    assert len(orig) == len(para) == n
    pairs = [ParaphrasePair(o, p.question) for o, p in zip(orig, para, strict=True)]
    paths = write_test_set(pairs, tmp_path, name, id_base, lowercase)
    for side in ("orig", "para"):
        released = (folder / f"{name}_{side}.json").read_text(encoding="utf-8")
        ours = json.loads(paths[side].read_text(encoding="utf-8"))
        assert ours == json.loads(released)
        if name == "dev":
            assert json.dumps(ours) == released


def test_released_sets_round_trip_through_the_squad_reader(shared_data, tmp_path):
    from tasks.io.squad import write_squad

    for path in sorted((shared_data / "paraphrasing-squad").glob("*.json")):
        out = write_squad(tmp_path / path.name, read_squad(path))
        assert json.dumps(json.loads(out.read_text("utf-8"))) == path.read_text("utf-8")
