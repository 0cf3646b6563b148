"""Training triples: TextRank, alignment suggestions, distinct inputs, <none> share, bad input."""

from __future__ import annotations

import pytest
from para_data_world import align

from tasks.io.errors import DataFormatError
from tasks.io.wikianswers import WikiAnswersPair
from tasks.paraphrase.text import NONE_TOKEN, load_stopwords, tokenize
from tasks.paraphrase.training_data import (
    Triple,
    alignment_suggestions,
    build_training_triples,
    finalise_triples,
    pagerank,
    quora_suggestion,
    quora_triples,
    read_triples,
    textrank_keyphrases,
    wikianswers_triples,
)

SOURCE = "what is the capital city of the country france ?"


def pair(q1: str, q2: str) -> WikiAnswersPair:
    return WikiAnswersPair(q1, q2, align(q1, q2))


def test_pagerank_star_graph():
    ranks = pagerank({"hub": {"a": 1.0, "b": 1.0}, "a": {"hub": 1.0}, "b": {"hub": 1.0}})
    assert sum(ranks.values()) == pytest.approx(1.0)
    assert ranks["hub"] > ranks["a"] == pytest.approx(ranks["b"])
    # closed form for d = 0.85: hub = (1 - d)/3 + d (a + b), a = (1 - d)/3 + d hub / 2
    assert ranks["hub"] == pytest.approx(0.05 / (1 - 0.85 ** 2) * (1 + 0.85 * 2), rel=1e-6)
    assert pagerank({}) == {}
    assert pagerank({"alone": {}}) == {"alone": pytest.approx(1.0)}


def test_textrank_keyphrases_hand_checked():
    tokens = tokenize("What is the best way to learn Python programming language?")
    # content words form the chain best-way-learn-python-programming-language; inner words
    # rank higher; a keyphrase is a run of adjacent content words scored by its best word.
    phrases = textrank_keyphrases(tokens)
    assert [p for p, _ in phrases] == ["learn python programming language", "best way"]
    split = textrank_keyphrases(tokens, exclude={"learn", "python"})
    assert [p for p, _ in split] == ["best way", "programming language"]  # tie: earlier first


@pytest.mark.parametrize("source, target, expected", [
    ("How do I learn Python quickly?",
     "What is the best way to learn Python programming language?", "best way"),
    ("What is the best way to learn Python programming language?",
     "How do I learn Python quickly?", "quickly"),
    ("What is the capital city of France?", "Which city is the French capital?", "french"),
    ("Who wrote the novel Moby Dick?", "Who is the author of Moby Dick?", "author"),
    ("What is this?", "What is it?", None),  # only stop words are new: no suggestion
    ("Why is the sky blue?", "Why is the sky so blue?", None),  # "so" is a stop word
])
def test_quora_suggestion_hand_checked(source, target, expected):
    assert quora_suggestion(source, target) == expected


def test_quora_suggestions_are_never_stop_words_and_absent_from_the_source():
    stop = load_stopwords()
    pairs = [("How do I learn Python quickly?", "What is the best way to learn Python?"),
             ("Is it good?", "Is this any good at all?"),
             ("Where do you live now?", "Where is your home these days?")]
    for triple in quora_triples(pairs):
        if triple.suggestion == NONE_TOKEN:
            continue
        words = triple.suggestion.split()
        assert not any(w in stop for w in words)
        assert not set(words) & set(tokenize(triple.source))


def test_quora_pairs_give_both_directions():
    counts: dict = {}
    triples = quora_triples([("Why is the sky blue?", "What makes the sky look blue?"),
                             ("Same question?", "same   QUESTION?")], counts=counts)
    assert [(t.source, t.target) for t in triples] == [
        ("why is the sky blue?", "what makes the sky look blue?"),
        ("what makes the sky look blue?", "why is the sky blue?")]
    assert counts["quora_identical"] == 1 and counts["quora_pairs"] == 2


def test_alignment_suggestions_hand_checked():
    # target tokens 3 "seat" and 5 "government" are unaligned and absent from the source
    assert alignment_suggestions(pair(
        SOURCE, "what is the seat of government of the country france ?")) == [
        "seat", "government"]
    # runs are trimmed of stop words / punctuation; longer runs first
    assert alignment_suggestions(pair(
        "who is the author of the novel moby dick ?",
        "who wrote the famous book called moby dick in 1851 ?")) == [
        "famous book called", "wrote", "1851"]
    # a word of the source never counts as new, aligned or not
    assert alignment_suggestions(WikiAnswersPair("a b c", "c b a", ())) == []


def test_wikianswers_distinct_suggestion_per_target():
    targets = [
        "what is the seat of government of the country france ?",      # seat
        "what is the seat of the government of the country france ?",  # seat taken: government
        "what is the seat of the country france ?",                    # only seat: <none>
        "what is the seat of the country france today ?",              # today
        "what is the seat of france ?",                                # nothing left: dropped
    ]
    counts: dict = {}
    triples = wikianswers_triples([pair(SOURCE, t) for t in targets], counts=counts)
    assert [t.suggestion for t in triples] == ["seat", "government", NONE_TOKEN, "today"]
    inputs = [(t.source, t.suggestion) for t in triples]
    assert len(inputs) == len(set(inputs))
    assert counts == {"wikianswers_pairs": 5, "wikianswers_no_suggestion": 1,
                      "wikianswers_no_distinct_suggestion": 1}


def test_wikianswers_length_filter_is_seven_tokens():
    six = "one two three four five six"
    seven = six + " seven"
    counts: dict = {}
    kept = wikianswers_triples([pair(six, seven + " eight"), pair(seven, seven + " extra"),
                                pair(seven + " extra", six)], counts=counts)
    assert [t.suggestion for t in kept] == ["extra"]
    assert counts["wikianswers_too_short"] == 2


def test_none_share_is_seeded_and_never_repeats_an_input():
    triples = [Triple(f"source {i % 50}", f"hint {i}", f"target {i}") for i in range(200)]
    counts: dict = {}
    first = finalise_triples(triples, 0.3, seed=1, counts=counts)
    assert first == finalise_triples(triples, 0.3, seed=1)
    assert first != finalise_triples(triples, 0.3, seed=2)
    nones = [t for t in first if t.suggestion == NONE_TOKEN]
    # at most one <none> per source (50 sources), about 30% of the draws
    assert len({t.source for t in nones}) == len(nones) <= 50
    assert 30 <= len(nones) <= 50 and counts["none_replaced"] == len(nones)
    inputs = [(t.source, t.suggestion) for t in first]
    assert len(inputs) == len(set(inputs))
    assert finalise_triples(triples, 0.0, seed=1) == triples


def test_repeated_inputs_are_dropped_and_counted():
    triples = [Triple("s", "x", "t1"), Triple("s", "x", "t1"), Triple("s", "x", "t2"),
               Triple("s", "y", "t2")]
    counts: dict = {}
    out = finalise_triples(triples, 0.0, seed=0, counts=counts)
    assert out == [Triple("s", "x", "t1"), Triple("s", "y", "t2")]
    assert counts["duplicate_triples"] == 1 and counts["conflicting_inputs"] == 1
    with pytest.raises(ValueError, match="none_share"):
        finalise_triples(triples, 1.5, seed=0)


def test_build_on_the_mini_world(mini_params, tmp_path):
    out = tmp_path / "triples.parquet"
    counts = build_training_triples(mini_params.raw_path("wikianswers"),
                                    mini_params.raw_path("quora"), out, none_share=0.0)
    triples = read_triples(out)
    assert counts["wikianswers_pairs"] == 7 and counts["wikianswers_too_short"] == 1
    assert counts["quora_pairs"] == 6  # duplicates only: the non-duplicate row is not read
    assert len(triples) == counts["triples"] == 6 + 2 * 6
    assert all(t.source == t.source.lower() and t.target == t.target.lower() for t in triples)
    assert {t.origin for t in triples} == {"wikianswers", "quora"}


def _quora_with_missing_question(tmp_path):
    path = tmp_path / "quora_duplicate_questions.tsv"
    path.write_text("id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
                    "0\t1\t2\tWhy is the sky blue?\tWhat makes the sky blue?\t1\n"
                    "1\t3\t4\tHow do I cook rice?\t\t1\n", encoding="utf-8")
    return path


def test_quora_row_with_missing_question_is_a_clear_error(tmp_path):
    path = _quora_with_missing_question(tmp_path)
    with pytest.raises(DataFormatError, match="a non-empty question2") as info:
        build_training_triples(None, path, tmp_path / "t.parquet")
    assert info.value.where == "line 3" and info.value.path == str(path)
    assert not (tmp_path / "t.parquet").exists()


def test_quora_row_with_missing_question_is_counted_in_skip_mode(tmp_path):
    path = _quora_with_missing_question(tmp_path)
    counts = build_training_triples(None, path, tmp_path / "t.parquet", on_error="skip",
                                    none_share=0.0)
    assert counts["quora_skipped"] == 1 and counts["triples"] == 2


def test_wikianswers_bad_line_is_a_clear_error_or_a_counted_skip(tmp_path):
    path = tmp_path / "word_alignments.tsv"
    good = "what is the capital city of france ?\twhich city is the french capital ?\t0-2"
    path.write_text(good + "\nonly one field here\n" + good.replace("0-2", "0-99") + "\n",
                    encoding="utf-8")
    with pytest.raises(DataFormatError, match="3 tab-separated fields") as info:
        build_training_triples(path, None, tmp_path / "t.parquet")
    assert info.value.where == "line 2"
    counts = build_training_triples(path, None, tmp_path / "t.parquet", on_error="skip")
    assert counts["wikianswers_skipped"] == 2 and counts["triples"] == 1


def test_no_triples_at_all_is_an_error(tmp_path):
    path = tmp_path / "wa.tsv"
    path.write_text("too short ?\tway too short ?\t0-0\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no training triples"):
        build_training_triples(path, None, tmp_path / "t.parquet")
