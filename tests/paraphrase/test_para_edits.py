"""What the paraphrases of a set change (tasks/paraphrase/edits.py): content words, the words
of the answer's sentence, the suggestion."""

from __future__ import annotations

import pytest

from tasks.io.errors import DataFormatError
from tasks.io.squad import SquadAnswer, SquadQuestion
from tasks.io.tables import read_table, write_table
from tasks.paraphrase.edits import (
    answer_sentence,
    content_words,
    pair_edit,
    summarise,
    summarise_edits,
    summarise_release,
)
from tasks.paraphrase.test_sets import ParaphrasePair, write_test_set
from tasks.paraphrase.text import load_stopwords

STOP = load_stopwords()
CONTEXT = ("The Crimson Field is a 2018 album. The album was reissued by Because Music. "
           "The album came out on Arista Records.")


def _question(qid: str, question: str, answer: str) -> SquadQuestion:
    return SquadQuestion(qid, question, (SquadAnswer(answer, CONTEXT.index(answer)),), CONTEXT,
                         "The Crimson Field")


def _two_pairs() -> list[ParaphrasePair]:
    """A what/which rewording (no suggestion) and one that drops words of the answer's
    sentence and holds its suggestion."""
    return [ParaphrasePair(_question("q1", "What label put out The Crimson Field?",
                                     "Arista Records"),
                           "which label put out the crimson field?", None, 0.99),
            ParaphrasePair(_question("q2", "Who reissued the album The Crimson Field?",
                                     "Because Music"),
                           "who re-released the crimson field?", "re-released", 0.96)]


def test_answer_sentence_is_the_sentence_holding_the_answer():
    assert answer_sentence(CONTEXT, CONTEXT.index("Arista")) == \
        "The album came out on Arista Records."
    assert answer_sentence(CONTEXT, 0) == "The Crimson Field is a 2018 album."
    # an offset between two sentences (the space) falls back to the whole context
    assert answer_sentence(CONTEXT, CONTEXT.index(" The album was")) == CONTEXT


def test_pair_edit_counts_changed_words_and_the_cues_a_reader_loses():
    sentence = "The album came out on Arista Records."
    assert content_words("What label put out The Crimson Field?", STOP) >= {"label", "crimson"}
    same = pair_edit("What label put out The Crimson Field?",
                     "which label put out the crimson field?", None,
                     "Arista Records put out The Crimson Field.", STOP)
    assert same.changed == 0 and not same.removes_answer_sentence_word
    assert same.holds_suggestion is None
    # label is not in the sentence; put, crimson, field are
    assert same.overlap_original == same.overlap_paraphrase == pytest.approx(3 / 4)
    # "came out" -> "released": the paraphrase drops the words it shared with the sentence
    reworded = pair_edit("What label did The Crimson Field came out on?",
                         "what label released the crimson field?", "released", sentence, STOP)
    assert reworded.removes_answer_sentence_word
    assert reworded.changed == len({"came", "released"})
    assert reworded.overlap_paraphrase < reworded.overlap_original
    assert reworded.holds_suggestion is True
    missed = pair_edit("What label put out The Crimson Field?",
                       "what label put out the crimson field?", "the album", sentence, STOP)
    assert missed.holds_suggestion is False


def test_pair_edit_finds_an_added_word_of_another_sentence():
    """The adversarial cue: a word the original lacks, held by another sentence of the context
    and not by the answer's."""
    sentence = "The album came out on Arista Records."
    elaborated = pair_edit("What label put out The Crimson Field?",
                           "what label put out the crimson field, reissued by because music?",
                           "because music", sentence, STOP, CONTEXT)
    assert elaborated.adds_context_word and elaborated.holds_suggestion
    assert not elaborated.removes_answer_sentence_word
    # a new word only the answer's sentence holds, or one the context lacks, is no such cue
    for paraphrase in ("what label put out the crimson field on arista?",
                       "what label put out the crimson field, a famous record?"):
        edit = pair_edit("What label put out The Crimson Field?", paraphrase, None, sentence,
                         STOP, CONTEXT)
        assert not edit.adds_context_word, paraphrase
    # without the context no word can be added from it
    assert not pair_edit("What label put out The Crimson Field?",
                         "what label put out the crimson field, reissued by because music?",
                         None, sentence, STOP).adds_context_word


def test_summarise_counts_and_means():
    sentence = "The album came out on Arista Records."
    edits = [pair_edit("What label put out The Crimson Field?",
                       "which label put out the crimson field?", None, sentence, STOP),
             pair_edit("What label did The Crimson Field came out on?",
                       "what label released the crimson field?", "released", sentence, STOP)]
    summary = summarise(edits)
    assert summary["pairs"] == 2 and summary["no_content_word_changed"] == 1
    assert summary["changed_content_words"] == pytest.approx(1.0)
    assert summary["removes_answer_sentence_word"] == 1
    assert summary["with_suggestion"] == summary["holds_suggestion"] == 1
    assert summary["adds_context_word"] == 0
    empty = summarise([])
    assert empty["pairs"] == 0 and empty["changed_content_words"] is None


def test_summarise_edits_reads_a_written_set(tmp_path):
    pairs = _two_pairs()
    paths = write_test_set(pairs, tmp_path, name="dev")
    summary = summarise_edits(paths["pairs"], paths["orig"])
    assert summary["pairs"] == 2
    # q2 loses "reissued" and "album", both in "The album was reissued by Because Music."
    assert summary["removes_answer_sentence_word"] == 1
    assert summary["holds_suggestion"] == 1 and summary["with_suggestion"] == 1


def test_summarise_edits_names_a_pair_the_file_lacks(tmp_path):
    pairs = _two_pairs()[:1]
    paths = write_test_set(pairs, tmp_path, name="dev")
    rows = read_table(paths["pairs"]).to_pylist()
    rows[0]["orig_id"] = "nope"
    write_table(paths["pairs"], rows, schema=read_table(paths["pairs"]).schema)
    with pytest.raises(DataFormatError, match="row 0.*'nope'"):
        summarise_edits(paths["pairs"], paths["orig"])


def test_summarise_release_aligns_the_files_by_position(tmp_path):
    pairs = _two_pairs()
    paths = write_test_set(pairs, tmp_path, name="dev")
    summary = summarise_release(paths["orig"], paths["para"])
    # the same numbers as from the pairs table, but no suggestions are known
    from_pairs = summarise_edits(paths["pairs"], paths["orig"])
    assert summary == {**from_pairs, "with_suggestion": 0, "holds_suggestion": 0}
    # a released file of another length, or another context at a position, is refused
    short = write_test_set(pairs[:1], tmp_path / "short", name="dev")
    with pytest.raises(DataFormatError, match="2 questions"):
        summarise_release(paths["orig"], short["para"])
    other = _question("q3", "Who reissued the album?", "Because Music")
    moved = write_test_set([pairs[0], ParaphrasePair(
        SquadQuestion("q3", other.question, other.answers, CONTEXT + " More.", "t"),
        "who re-released it?")], tmp_path / "moved", name="dev")
    with pytest.raises(DataFormatError, match="question 1"):
        summarise_release(paths["orig"], moved["para"])


def test_the_released_sets_change_more_words_than_none(shared_data):
    release = shared_data / "paraphrasing-squad"
    dev = summarise_release(release / "dev_orig.json", release / "dev_para.json")
    adv = summarise_release(release / "adv_orig.json", release / "adv_para.json")
    assert dev["pairs"] == 1062 and adv["pairs"] == 56
    # every adversarial paraphrase adds or swaps content words; most dev ones do too
    assert adv["no_content_word_changed"] == 0
    # the adversarial ones add words of the context's other sentences more often
    assert adv["adds_context_word"] / adv["pairs"] > dev["adds_context_word"] / dev["pairs"]
    assert dev["no_content_word_changed"] < dev["pairs"] / 2
    assert adv["changed_content_words"] > dev["changed_content_words"] > 1.0
