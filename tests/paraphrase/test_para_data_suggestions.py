"""PPDB suggestions: tokens, the n-grams looked up, hand-checked suggestions, the SQuAD step."""

from __future__ import annotations

import json

import pytest

from tasks.io.errors import DataFormatError
from tasks.io.tables import read_table
from tasks.paraphrase.ppdb_lookup import PPDBTable, build_ppdb_table
from tasks.paraphrase.suggestions import candidate_phrases, suggest, suggest_for_squad
from tasks.paraphrase.text import load_stopwords, tokenize


@pytest.fixture(scope="module")
def ppdb(mini_params, tmp_path_factory):
    path = tmp_path_factory.mktemp("sugg") / "ppdb.sqlite"
    build_ppdb_table(mini_params.raw_path("ppdb"), path)
    with PPDBTable(path) as table:
        yield table


def test_tokenize_ptb_style():
    assert tokenize("Who's born in New-York? Don’t the U.S. and O'Neill's 3.5") == [
        "who", "'s", "born", "in", "new-york", "?", "do", "n't", "the", "u.s.", "and",
        "o'neill", "'s", "3.5"]


def test_stop_list_is_a_data_file():
    stop = load_stopwords()
    assert {"what", "the", "of", "is", "'s", "n't"} <= stop
    assert not {"author", "capital", "born"} & stop


def test_ngrams_looked_up_skip_stopword_unigrams_and_punctuation_edges():
    phrases = [p for _, _, p in candidate_phrases(tokenize("Where was the author born?"))]
    assert phrases == [
        "where was", "where was the", "where was the author", "where was the author born",
        "was the", "was the author", "was the author born",
        "the author", "the author born",
        "author", "author born",
        "born",
    ]


def test_ngrams_stop_at_six_tokens():
    spans = candidate_phrases([f"a{i}" for i in range(8)], max_n=6)
    assert max(end - start for start, end, _ in spans) == 6
    assert len(spans) == 6 + 6 + 6 + 5 + 4 + 3 + 2 + 1


@pytest.mark.parametrize("question, expected", [
    # "author" -> writer (3.2) beats "the author" -> the writer (2.4); born -> birth has
    # exactly 0.25 (dropped), delivered 0.2501 is kept.
    ("Where was the author born?",
     [("author", "writer", 3.2), ("the author", "the writer", 2.4),
      ("born", "delivered", 0.2501)]),
    # "capital" is in the question already, so capital city -> capital is no suggestion;
    # the unigram "what" (a stop word) is never looked up although PPDB has what -> which.
    ("What is the capital city of France?",
     [("capital city", "main city", 2.0), ("france", "french republic", 1.2),
      ("capital", "principal", 1.1)]),
    # "how many" is a bigram of stop words: looked up; city -> city (identical) was dropped.
    ("How many people live in the big city?",
     [("big", "large", 3.6), ("live", "reside", 2.5), ("how many", "what number of", 1.5)]),
    # built -> constructed appears twice in PPDB (3.7 and 1.0): one suggestion, best score.
    ("When was the famous bridge built?",
     [("built", "constructed", 3.7), ("famous", "well-known", 3.3),
      ("famous", "renowned", 2.9), ("built", "erected", 2.2)]),
    ("Which company makes the fast car?",
     [("fast", "quick", 3.1), ("makes", "produces", 2.7)]),  # fast -> rapid (0.2) dropped
    ("Are zebras striped?", []),
])
def test_hand_checked_suggestions(ppdb, question, expected):
    got = [(s.phrase, s.suggestion, s.score) for s in suggest(question, ppdb)]
    assert got == expected


def test_suggestion_spans_and_limit(ppdb):
    top = suggest("Who wrote the novel Moby Dick?", ppdb, limit=2)
    assert [(s.suggestion, s.start, s.end) for s in top] == [("authored", 1, 2), ("book", 3, 4)]


def test_squad_step_writes_one_row_per_suggestion(mini_params, ppdb, tmp_path):
    out = tmp_path / "suggestions.parquet"
    counts = suggest_for_squad(mini_params.raw_path("squad_dev"), ppdb.path, out,
                               per_question=2)
    assert counts == {"questions": 7, "questions_with_suggestions": 6, "suggestions": 12,
                      "squad_skipped": 0}
    rows = read_table(out).to_pylist()
    q6 = [(r["rank"], r["suggestion"]) for r in rows if r["qid"] == "q6"]
    assert q6 == [(1, "writer"), (2, "the writer")]
    q7 = [r for r in rows if r["qid"] == "q7"]
    assert [(r["rank"], r["suggestion"], r["source"]) for r in q7] == [
        (0, None, "are zebras striped?")]


def _squad_with_bad_offset(tmp_path):
    data = {"version": "1.1", "data": [{"title": "T", "paragraphs": [
        {"context": "Paris is the capital of France.", "qas": [
            {"id": "good", "question": "What is the capital of France?",
             "answers": [{"text": "Paris", "answer_start": 0}]},
            {"id": "bad", "question": "Which country?",
             "answers": [{"text": "France", "answer_start": 3}]}]}]}]}
    path = tmp_path / "dev-v1.1.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_squad_answer_start_mismatch_is_a_clear_error(ppdb, tmp_path):
    path = _squad_with_bad_offset(tmp_path)
    with pytest.raises(DataFormatError, match=r"answer_start 3 to point at the answer text") \
            as info:
        suggest_for_squad(path, ppdb.path, tmp_path / "s.parquet")
    assert "question id 'bad'" in str(info.value) and "occurs at 24" in str(info.value)
    assert not (tmp_path / "s.parquet").exists()


def test_squad_answer_start_mismatch_is_counted_in_skip_mode(ppdb, tmp_path):
    path = _squad_with_bad_offset(tmp_path)
    counts = suggest_for_squad(path, ppdb.path, tmp_path / "s.parquet", on_error="skip")
    assert counts["questions"] == 1 and counts["squad_skipped"] == 1
