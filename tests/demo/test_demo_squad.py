"""The demo world's SQuAD set: its own paragraphs, same-type distractors, crowd-like phrasings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tasks.demo.kb import build_world
from tasks.demo.prose import kind_noun
from tasks.demo.question_grammar import phrasings, question_tokens
from tasks.demo.rng import stream
from tasks.demo.squad import (
    LEXICAL_COPY_SHARE,
    build_squad_sets,
    choose_phrasing,
    content_stems,
    distractor_questions,
    overlap,
    unambiguous_phrasings,
)
from tasks.demo.squad_contexts import VALUE_KINDS, ContextWriter, distractor_templates
from tasks.io.squad import read_squad, write_squad
from tasks.params_loading import load_params

ROOT = Path(__file__).resolve().parents[2]
N_TRAIN, N_DEV, WORDS = 200, 60, 100
_VALUE_PATTERNS = {"date": r"\d{1,2} [A-Z][a-z]+ \d{4}", "year": r"\d{4}",
                   "count": r"\d{1,3}(,\d{3})*"}


@pytest.fixture(scope="module")
def config():
    return load_params(ROOT / "params.yaml", profile="smoke").demo_world


@pytest.fixture(scope="module")
def world(config):
    return build_world(config)


@pytest.fixture(scope="module")
def contexts(world, config):
    writer = ContextWriter(world, stream(config.seed, "squad-test"))
    return [writer.context(e, WORDS) for e in world.subjects()]


@pytest.fixture(scope="module")
def sets(world, config):
    return build_squad_sets(world, N_TRAIN, N_DEV, WORDS, stream(config.seed, "squad"),
                            config.seed)


def test_answers_and_distractors_point_at_their_text(contexts):
    for context in contexts:
        assert len(context.text.split(" ")) <= WORDS or len(context.answerable) <= 2
        for item in context.answerable:
            assert context.text[item.start:item.start + len(item.text)] == item.text
            assert item.sentence in context.text
        for d in context.distractors:
            assert context.text[d.start:d.start + len(d.text)] == d.text


def test_distractors_are_of_the_answers_type_and_answer_nothing(world, contexts):
    by_label: dict[str, set[str]] = {}
    for e in world.entities.values():
        by_label.setdefault(e.label, set()).add(e.kind)
    with_distractor = 0
    for context in contexts:
        facts = world.by_subject.get(context.subject, [])
        kinds = {f.relation: world.entities[f.object].kind for f in facts}
        kinds.update({name: kind for name, kind in VALUE_KINDS.items()})
        answers = {item.text for item in context.answerable}
        with_distractor += bool(context.distractors)
        for d in context.distractors:
            assert d.kind == kinds[d.next_to], (context.title, d)
            if d.kind in _VALUE_PATTERNS:
                assert re.fullmatch(_VALUE_PATTERNS[d.kind], d.text), d
            else:
                assert d.kind in by_label[d.text], d
            # a distractor is never the true answer of the fact it stands next to
            true = [item.text for item in context.answerable if item.key == d.next_to]
            assert d.text not in true, (context.title, d)
            assert d.text not in answers or d.kind in ("year", "count"), (context.title, d)
    assert with_distractor > len(contexts) / 2


def test_every_answer_kind_with_templates_gets_distractors(contexts):
    seen = {(c.title, d.kind) for c in contexts for d in c.distractors}
    kinds = {kind for _, kind in seen}
    templates = distractor_templates()
    assert {"city", "person", "date", "year", "country"} <= kinds
    assert kinds <= {k for by_kind in templates.values() for k in by_kind}


def test_distractor_sentences_share_no_word_with_the_questions_they_distract(world, contexts):
    """Other relation words than every phrasing of the fact the distractor stands next to
    (else the original question would be ambiguous); the subject's own name and noun aside."""
    checked = 0
    for context in contexts:
        subject = world.entities[context.subject]
        own = content_stems(f"{context.title} {kind_noun(subject)} {subject.type}")
        for d in context.distractors:
            sentence = next(s for s in re.split(r"(?<=\.) ", context.text) if d.text in s)
            words = content_stems(sentence.replace(d.text, " ")) - own
            for phrasing in unambiguous_phrasings()[d.next_to]:
                assert not content_stems(phrasing) & words, (d.next_to, phrasing, sentence)
            checked += 1
    assert checked > 100


def test_questions_copy_words_of_the_answer_sentence_more_than_the_grammar_does(world, config):
    rng, copied, grammar = stream(config.seed, "t"), [], []
    writer = ContextWriter(world, stream(config.seed, "squad-test"))
    for e in world.subjects()[:300]:
        for item in writer.context(e, WORDS).answerable:
            label = world.label(item.subject)
            chosen = choose_phrasing(item.key, item.sentence, label, rng)
            options = unambiguous_phrasings().get(item.key, ())
            if chosen is None or len(options) < 2:
                continue
            copied.append(overlap(chosen, item.sentence, label))
            grammar.append(sum(overlap(p, item.sentence, label) for p in options) / len(options))
    assert len(copied) > 100
    # the copied phrasings share more words; the grammar keeps lower-overlap ones to paraphrase
    assert sum(copied) / len(copied) > sum(grammar) / len(grammar) + 0.2
    lower = sum(c > g for c, g in zip(copied, grammar, strict=True))
    assert lower > 0.4 * len(copied) * LEXICAL_COPY_SHARE


def test_phrasings_are_unambiguous_and_of_the_grammar():
    languages = phrasings()
    for key, items in unambiguous_phrasings().items():
        for item in items:
            assert item in languages[key]
            assert all(tuple(question_tokens(item)) not in
                       {tuple(question_tokens(p)) for p in languages[other]}
                       for other in languages if other != key)


def test_squad_sets_are_valid_sized_and_split_by_subject(sets, tmp_path):
    train, dev = sets
    paths = {}
    for name, raw in (("train", train), ("dev", dev)):
        paths[name] = write_squad(tmp_path / f"{name}.json", raw)
    train_set, dev_set = read_squad(paths["train"]), read_squad(paths["dev"])  # validates
    assert len(train_set) == N_TRAIN and len(dev_set) == N_DEV
    assert not {a["title"] for a in train["data"]} & {a["title"] for a in dev["data"]}
    for question in [*train_set.questions(), *dev_set.questions()]:
        for answer in question.answers:
            start = answer.answer_start
            assert question.context[start:start + len(answer.text)] == answer.text
    per_context = [len(p["qas"]) for a in train["data"] for p in a["paragraphs"]]
    assert max(per_context) > 3  # more questions per context than one passage held before


def test_squad_contexts_are_not_retrieval_passages(world, config):
    from tasks.demo.generate import write_articles

    articles = write_articles(world, config)
    text = "\n".join(a.text for a in articles)
    train, _ = build_squad_sets(world, 40, 10, WORDS, stream(config.seed, "squad"), config.seed)
    for article in train["data"]:
        for paragraph in article["paragraphs"]:
            assert paragraph["context"] not in text


def test_same_seed_same_sets_other_seed_other_sets(world, config, sets):
    again = build_squad_sets(world, N_TRAIN, N_DEV, WORDS, stream(config.seed, "squad"),
                             config.seed)
    assert json.dumps(again) == json.dumps(sets)
    other = build_squad_sets(world, N_TRAIN, N_DEV, WORDS, stream(config.seed + 1, "squad"),
                             config.seed + 1)
    assert json.dumps(other[0]) != json.dumps(sets[0])
    bigger = build_squad_sets(world, 2 * N_TRAIN, N_DEV, WORDS, stream(config.seed, "squad"),
                              config.seed)
    assert json.dumps(bigger[1]) == json.dumps(sets[1])  # dev does not depend on n_train


def _grammar_question(question: str, title: str) -> bool:
    return any(p.replace("{X}", title) == question for items in phrasings().values()
               for p in items)


def test_training_also_asks_for_distractors_dev_only_for_facts(sets, contexts):
    train, dev = sets
    for article in dev["data"]:
        for paragraph in article["paragraphs"]:
            assert all(_grammar_question(qa["question"], article["title"])
                       for qa in paragraph["qas"])
    kinds = {"grammar": 0, "distractor": 0}
    for article in train["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                grammar = _grammar_question(qa["question"], article["title"])
                kinds["grammar" if grammar else "distractor"] += 1
    assert kinds["grammar"] > N_TRAIN / 3 and kinds["distractor"] > N_TRAIN / 5
    # a distractor question is (mostly) asked in its sentence's words, once per paragraph
    copying, total = 0, 0
    for context in contexts:
        questions = [d.question for d in context.distractors]
        for d in context.distractors:
            assert context.title in d.question
            sentence = next(s for s in re.split(r"(?<=\.) ", context.text) if d.text in s)
            copying += bool(content_stems(d.question.replace(context.title, " "))
                            & content_stems(sentence))
            total += 1
        asked = [q for q, _, _, _ in distractor_questions(context)]
        assert len(set(asked)) == len(asked)
        assert set(asked) == {q for q in questions if questions.count(q) == 1}
    assert copying > 0.9 * total
