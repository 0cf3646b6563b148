"""The demo world's question grammar (``tasks/demo/question_grammar.py``,
``data/question_grammar.json``): its patterns, its languages, the relative clauses of the
contexts' distractor sentences, the subject classes per key, and the questions the SQuAD-style
training paragraphs ask about distractor sentences with their rephrasings."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.demo.kb import build_world
from tasks.demo.lexicon import load_data
from tasks.demo.question_grammar import (
    clauses,
    elaborate,
    expand,
    phrasings,
    subject_classes,
)
from tasks.demo.question_pairs import VALUE_KEYS
from tasks.demo.question_parser import QuestionGrammar
from tasks.demo.rng import stream
from tasks.demo.squad_contexts import distractor_templates
from tasks.params_loading import load_params
from tasks.paraphrase.text import is_content, load_stopwords, tokenize

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world():
    config = load_params(ROOT / "params.yaml", profile="smoke").demo_world
    return build_world(config)


def test_expand_alternations_nested_and_synonym_sets():
    got = expand("(where|in <wh> <city>) was {X} born (in|)?",
                 {"wh": ["which", "what"], "city": ["city", "town"]})
    assert got[:3] == ["where was {X} born in?", "where was {X} born?",
                       "in which city was {X} born in?"]
    assert len(got) == 10 and len(set(got)) == 10
    with pytest.raises(ValueError, match="unknown synonym set <nope>"):
        expand("<nope> {X}?", {})


def test_every_key_has_several_phrasings_and_the_reader_bank_is_in_them():
    languages = phrasings()
    reader = load_data("questions")["reader"]
    assert set(reader) <= set(languages)
    for key, items in reader.items():
        assert set(items) <= set(languages[key]), key
    assert all(len(items) >= 5 for key, items in languages.items()), \
        {k: len(v) for k, v in languages.items() if len(v) < 5}


def test_elaborate_puts_the_clause_after_the_subject():
    clause = "who moved abroad"
    assert elaborate("Where was {X} born?", clause) == "Where was {X}, who moved abroad, born?"
    assert elaborate("What is the hometown of {X}?", clause) == \
        "What is the hometown of {X}, who moved abroad?"
    assert elaborate("What is {X}'s hometown?", clause) is None
    assert elaborate("Where was it born?", clause) is None


def test_each_clause_is_in_its_distractor_sentence_words():
    """A clause says what its distractor sentence says of the subject, in the sentence's own
    content words and without the distractor: the words an adversarial suggestion brings."""
    stopwords = load_stopwords()
    found = 0
    for cls, kinds in distractor_templates().items():
        for items in kinds.values():
            for item in items:
                if len(item) < 3:
                    continue
                found += 1
                sentence = set(tokenize(item[0].replace("{poss}", "its")))
                words = [w for w in tokenize(item[2]) if is_content(w, stopwords)]
                assert words and set(words) <= sentence, item
                assert item[2].split()[0] == ("who" if cls == "person" else "which"), item
                assert item[2] in clauses()[cls]
    assert found >= 20


def test_subject_classes_are_the_world_s(world):
    """The grammar's classes per key are those of the built world's subjects."""
    built: dict[str, set[str]] = {}
    for fact in world.facts:
        built.setdefault(fact.relation, set()).add(world.entities[fact.subject].cls)
    for key, (cls, _) in VALUE_KEYS.items():
        built.setdefault(key, set()).add(cls)
    declared = subject_classes()
    for key, classes in built.items():
        assert classes <= set(declared[key]), (key, classes, declared[key])


def test_the_training_grammar_reads_every_distractor_question_of_a_built_world(world):
    """Every question the SQuAD-style training set asks parses with the training grammar (the
    distractor questions under their own keys); the test sets' grammar reads none of those."""
    from tasks.demo.question_grammar import DISTRACTOR_PREFIX, distractor_questions
    from tasks.demo.question_parser import training_grammar
    from tasks.demo.squad import build_squad_sets_with_subjects

    training, plain = training_grammar(), QuestionGrammar()
    _, _, subjects = build_squad_sets_with_subjects(world, 300, 10, 150, stream(3, "squad"), 3)
    questions = [question for _, question, _ in subjects["train"]]
    parses = {q: training.parse(q) for q in questions}
    assert all(parses.values()), [q for q, p in parses.items() if not p][:5]
    distractor = [q for q, p in parses.items()
                  if all(x.key.startswith(DISTRACTOR_PREFIX) for x in p)]
    assert distractor and not any(plain.parse(q) for q in distractor)
    keys = distractor_questions()
    assert len(keys) == 74 and {cls for _, cls in keys.values()} == {
        "person", "work", "organisation", "place"}
    # a distractor key is elaborated by the clauses of its subject's class only
    person = next(k for k, (_, cls) in keys.items() if cls == "person")
    assert training.clauses[person] and all(c[0] == "who" for c in training.clauses[person])


def test_distractor_questions_have_rephrasings_that_ask_nothing_else():
    """Each distractor question keeps the phrasing the world asks first and gains the other
    fluent phrasings of ``question_grammar.json`` ``distractor``; none of them is a phrasing of
    a question of the test sets' grammar or of another distractor question."""
    from tasks.demo.question_grammar import (
        distractor_phrasings,
        distractor_questions,
        phrasings,
        question_tokens,
    )

    asked, every = distractor_questions(), distractor_phrasings()
    assert all(every[key][0] == phrasing for key, (phrasing, _) in asked.items())
    assert all(len(every[key]) > 1 for key in asked)  # every question has a rephrasing
    world = {tuple(question_tokens(p)) for items in phrasings().values() for p in items}
    owner: dict[tuple[str, ...], str] = {}
    for key, items in every.items():
        for phrasing in items:
            tokens = tuple(question_tokens(phrasing))
            assert tokens not in world, phrasing
            assert owner.setdefault(tokens, asked[key][0]) == asked[key][0], phrasing


def test_a_rephrasing_of_a_question_no_distractor_asks_is_an_error(monkeypatch):
    """A typo in ``question_grammar.json`` ``distractor`` would leave the question it meant
    with one phrasing: it is an error naming the question instead."""
    import tasks.demo.question_grammar as qg

    data = load_data("question_grammar")
    broken = {**data, "distractor": {**data["distractor"], "Where did {X} setle?": ["x {X}?"]}}
    monkeypatch.setattr(qg, "load_data",
                        lambda name: broken if name == "question_grammar" else load_data(name))
    qg.distractor_rephrasings.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"no distractor sentence .*'Where did \{X\} setle\?'"):
            qg.distractor_rephrasings()
    finally:
        qg.distractor_rephrasings.cache_clear()
