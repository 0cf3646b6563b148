"""Adversarial suggestions (Gan & Ng, 2019): hand-checked examples with stub taggers of fixed
predictions, the batch API, and one run with the trained offline demo taggers."""

from __future__ import annotations

import json

import pytest
from para_data_world import StubTagger

from tasks.io.squad import SquadAnswer, SquadQuestion
from tasks.paraphrase.adversarial import (
    TaggedSpan,
    adversarial_suggestions,
    select_suggestions,
    split_sentences,
    suggest_for_questions,
    tag_spans,
    write_suggestions,
)

CONTEXT = ("Megan Page was born in Lower Hutt, New Zealand. "
           "She studied photography in Dublin. "
           "Her brother Tom Page moved to Upper Hutt in 1990. "
           "The Silent River was her first album.")
NER = StubTagger("ner", {
    "Megan Page": "PERSON", "Lower Hutt": "GPE", "New Zealand": "GPE", "Dublin": "GPE",
    "Tom Page": "PERSON", "Upper Hutt": "GPE", "1990": "DATE", "The Silent River": "WORK_OF_ART",
    "first": "ORDINAL", "The Dark Forest": "WORK_OF_ART", "Ana Lee": "PERSON",
})
CHUNKS = StubTagger("np", {
    "Megan Page": "NP", "was born": "VP", "Lower Hutt": "NP", "New Zealand": "NP", "She": "NP",
    "studied": "VP", "photography": "NP", "Dublin": "NP", "Her brother Tom Page": "NP",
    "moved": "VP", "Upper Hutt": "NP", "1990": "NP", "The Silent River": "NP", "was": "VP",
    "her first album": "NP", "in": "PP", "to": "PP",
})


def _suggest(answer: str, context: str = CONTEXT, occurrence: int = 0):
    start = -1
    for _ in range(occurrence + 1):
        start = context.index(answer, start + 1)
    return adversarial_suggestions(context, answer, start, NER, CHUNKS, question_id="q")


def test_split_sentences_offsets():
    spans = split_sentences(CONTEXT)
    assert [CONTEXT[a:b] for a, b in spans] == [
        "Megan Page was born in Lower Hutt, New Zealand.", "She studied photography in Dublin.",
        "Her brother Tom Page moved to Upper Hutt in 1990.",
        "The Silent River was her first album."]


def test_gpe_answer():
    """Answer "Lower Hutt" (GPE). GPE entities sharing no word with it: New Zealand (same
    sentence as the answer) and Dublin; Upper Hutt shares "hutt", so sentence 2 is no
    distractor. Suggestions: NP/VP chunks of >= 2 words of sentences 0 and 1 that do not
    overlap the answer ("Lower Hutt" itself is dropped; "studied", "photography" are single
    words)."""
    result = _suggest("Lower Hutt")
    assert result.answer_type == "GPE"
    assert result.answer_entity == TaggedSpan(23, 33, "GPE", "Lower Hutt", 2)
    assert [d.text for d in result.distractors] == ["New Zealand", "Dublin"]
    assert result.texts == ["Megan Page", "was born", "New Zealand"]
    assert [(s.label, s.sentence) for s in result.suggestions] == [("NP", 0), ("VP", 0),
                                                                     ("NP", 0)]
    first = result.suggestions[0]
    assert CONTEXT[first.start:first.end] == "Megan Page"
    assert result.reason == "" and result.question_id == "q"


def test_person_answer_and_shared_words():
    """Answer "Megan Page": "Tom Page" shares "page", so no PERSON distractor is left."""
    result = _suggest("Megan Page")
    assert result.answer_type == "PERSON"
    assert result.distractors == () and result.suggestions == ()
    assert result.reason == "no sentence with another PERSON entity"


def test_articles_do_not_count_as_shared_words():
    """"The Silent River" vs "The Dark Forest" share only the article: still a distractor
    (SQuAD normalisation drops articles)."""
    context = CONTEXT + " The Dark Forest was recorded in Dublin by Ana Lee."
    chunks = StubTagger("np", {**CHUNKS.phrases, "The Dark Forest": "NP",
                               "was recorded": "VP", "Ana Lee": "NP", "by": "PP"})
    start = context.index("The Silent River")
    result = adversarial_suggestions(context, "The Silent River", start, NER, chunks)
    assert result.answer_type == "WORK_OF_ART"
    assert [d.text for d in result.distractors] == ["The Dark Forest"]
    assert result.texts == ["The Dark Forest", "was recorded", "Ana Lee"]
    assert result.question_id is None


def test_answer_inside_a_longer_phrase_and_repeated_answer_text():
    """Phrases overlapping the answer span, or another occurrence of the answer text, are no
    suggestions: "Her brother Tom Page" holds the answer "Tom Page"."""
    context = ("Tom Page lives in Oslo. Her brother Tom Page met Megan Page in Dublin. "
               "Ana Lee was born in Lower Hutt.")
    chunks = StubTagger("np", {**CHUNKS.phrases, "Tom Page": "NP", "lives": "VP", "Oslo": "NP",
                               "met": "VP", "Ana Lee": "NP"})
    result = adversarial_suggestions(context, "Tom Page", context.index("Her") + 12, NER, chunks)
    assert result.answer_type == "PERSON"
    assert [d.text for d in result.distractors] == ["Ana Lee"]
    # Sentence 1 holds no distractor (Megan Page shares "page"); sentence 2 does.
    assert result.texts == ["Ana Lee", "was born", "Lower Hutt"]


def test_answer_without_entity_in_context_is_tagged_alone():
    """"photography" is no entity anywhere: no type, no suggestions. An answer that the
    context's tagging misses but that is an entity on its own gets the type of the answer
    text tagged alone."""
    result = _suggest("photography")
    assert result.answer_type is None and result.reason == "the answer has no entity type"
    ner = StubTagger("ner", {"New Zealand": "GPE", "Dublin": "GPE"}, whole={"Lower Hutt": "GPE"})
    result = adversarial_suggestions(CONTEXT, "Lower Hutt", 23, ner, CHUNKS)
    assert result.answer_entity is None and result.answer_type == "GPE"
    assert result.texts == ["Megan Page", "was born", "New Zealand"]
    assert ner.calls[-1] == ["Lower Hutt"]


def test_min_words_and_phrase_labels():
    result = _suggest("Dublin")
    assert result.texts == ["Megan Page", "was born", "Lower Hutt", "New Zealand",
                            "Her brother Tom Page", "Upper Hutt"]
    assert [s.sentence for s in result.suggestions] == [0, 0, 0, 0, 2, 2]
    assert all(CONTEXT[s.start:s.end] == s.text for s in result.suggestions)
    assert all(CONTEXT[d.start:d.end] == d.text for d in result.distractors)
    one_word = adversarial_suggestions(CONTEXT, "Dublin", CONTEXT.index("Dublin"), NER, CHUNKS,
                                       min_words=1)
    assert "moved" in one_word.texts and "1990" in one_word.texts and "in" not in one_word.texts
    verbs = adversarial_suggestions(CONTEXT, "Dublin", CONTEXT.index("Dublin"), NER, CHUNKS,
                                    phrase_labels=("VP",))
    assert verbs.texts == ["was born"]


def test_tag_spans_offsets_and_word_counts():
    tagger = StubTagger("np", {"Page's": "NP", "Page's album": "NP", "did n't": "VP"})
    [spans] = tag_spans(tagger, ["Page's album sold."], offsets=[100])
    assert sorted((s.start, s.end, s.text, s.words) for s in spans) == [
        (100, 106, "Page's", 1), (100, 112, "Page's album", 2)]
    assert tag_spans(tagger, ["", "   "]) == [[], []]


def test_bad_answer_start():
    with pytest.raises(ValueError, match="answer_start 3 does not point at 'Dublin'"):
        adversarial_suggestions(CONTEXT, "Dublin", 3, NER, CHUNKS)


def test_select_suggestions_is_pure():
    context = "Ana Lee met Tom Hale in Oslo. Tom Hale sang in Oslo."
    sentences = split_sentences(context)
    entities = [TaggedSpan(0, 7, "PERSON", "Ana Lee", 2), TaggedSpan(12, 20, "PERSON",
                                                                     "Tom Hale", 2),
                TaggedSpan(30, 38, "PERSON", "Tom Hale", 2)]
    chunks = {1: [TaggedSpan(30, 38, "NP", "Tom Hale", 2), TaggedSpan(39, 43, "VP", "sang", 1)],
              0: [TaggedSpan(0, 7, "NP", "Ana Lee", 2), TaggedSpan(12, 20, "NP", "Tom Hale", 2)]}
    result = select_suggestions(context, "Ana Lee", 0, sentences, entities, chunks, "PERSON")
    assert result.texts == ["Tom Hale"]  # once, though both sentences hold it
    assert [s.sentence for s in result.suggestions] == [0]


def test_batch_api_tags_each_context_once(tmp_path):
    ner = StubTagger("ner", NER.phrases)
    chunks = StubTagger("np", CHUNKS.phrases)

    def question(qid, answer, context=CONTEXT):
        return SquadQuestion(qid, "?", (SquadAnswer(answer, context.index(answer)),), context,
                             "T")

    other = "Ana Lee was born in Oslo. Her brother Tom Page moved to Dublin."
    questions = [question("a", "Lower Hutt"), question("b", "Megan Page"),
                 question("c", "Dublin"), question("d", "Ana Lee", other)]
    results = suggest_for_questions(questions, ner, chunks)
    assert [r.question_id for r in results] == ["a", "b", "c", "d"]
    assert results[0].texts == ["Megan Page", "was born", "New Zealand"]
    assert results[1].texts == []
    assert results[3].texts == ["Her brother Tom Page"]
    ner_sentences = [s for call in ner.calls for s in call]
    assert len(ner_sentences) == len(split_sentences(CONTEXT)) + len(split_sentences(other))
    chunk_sentences = [s for call in chunks.calls for s in call]
    assert len(chunk_sentences) == len(set(chunk_sentences))  # each sentence chunked once
    assert len(ner.calls) == 1 and len(chunks.calls) == 1

    assert write_suggestions(results, tmp_path / "s.jsonl") == 4
    rows = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert rows[0]["question_id"] == "a" and rows[0]["answer_type"] == "GPE"
    assert [s["text"] for s in rows[0]["suggestions"]] == results[0].texts


def test_with_trained_demo_taggers(quick_demo_taggers):
    """The offline demo taggers end to end, on sentences written like the demo's templates
    (names unseen in training)."""
    from models.flair_taggers import load_tagger

    taggers = quick_demo_taggers
    ner, chunker = load_tagger(taggers.ner.model_path), load_tagger(taggers.chunk.model_path)
    context = ("Ana Lee was born in Dublin, Ireland on 3 May 1950. "
               "Ana Lee studied at University of Oslo. "
               "Tom Hale was born in Lisbon, Portugal on 9 June 1961.")
    result = adversarial_suggestions(context, "Dublin", context.index("Dublin"), ner, chunker)
    assert result.answer_type == "GPE"
    distractors = {d.text for d in result.distractors}
    # same-type (GPE) mentions other than the answer; the quick tagger trained on the scaled
    # world finds "Lisbon" and "Ireland" but may miss "Portugal"
    assert "Lisbon" in distractors and len(distractors) >= 2
    assert distractors <= {"Ireland", "Lisbon", "Portugal"}
    assert "Tom Hale" in result.texts and "was born" in result.texts
    for suggestion in result.suggestions:
        assert suggestion.label in ("NP", "VP") and len(suggestion.text.split()) >= 2
        assert "Dublin" not in suggestion.text


def test_batch_on_the_smoke_worlds_squad_dev(smoke_world, quick_demo_taggers):
    """The batch API over the demo world's own SQuAD file (its prose, not our templates)."""
    from models.flair_taggers import load_tagger
    from tasks.io.squad import read_squad

    taggers = quick_demo_taggers
    ner, chunker = load_tagger(taggers.ner.model_path), load_tagger(taggers.chunk.model_path)
    questions = list(read_squad(smoke_world.raw_path("squad_dev")).questions())
    results = suggest_for_questions(questions, ner, chunker)
    assert [r.question_id for r in results] == [q.id for q in questions]
    with_suggestions = 0
    for question, result in zip(questions, results, strict=True):
        answer = question.answers[0]
        end = answer.answer_start + len(answer.text)
        for s in result.suggestions:
            assert question.context[s.start:s.end] == s.text
            assert s.label in ("NP", "VP") and len(s.text.split()) >= 2
            assert s.end <= answer.answer_start or s.start >= end
        for d in result.distractors:
            assert d.label == result.answer_type
        with_suggestions += bool(result.suggestions)
        assert bool(result.suggestions) != bool(result.reason)
    assert with_suggestions >= len(questions) // 4
