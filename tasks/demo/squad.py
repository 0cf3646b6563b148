"""A SQuAD v1.1-style reading comprehension set over the demo world's own paragraphs.

Each context is one paragraph about one subject (:mod:`tasks.demo.squad_contexts`: its facts,
often with a same-type distractor next to them; never a retrieval passage). Its questions ask
for facts and values stated once in it. Like SQuAD's crowd workers, who phrase a question with
the words of the sentence they read, the question is mostly the phrasing of the world's question
grammar (:func:`tasks.demo.question_grammar.phrasings`) that shares the most words with the
answer sentence; the other phrasings of the grammar (those a paraphrase can use) share fewer.
Training paragraphs also ask for their distractors, in the distractor sentence's words (crowd
workers ask about every sentence): a reader learns there to tell same-type answers apart by the
words around them. Dev questions ask for facts only, which the grammar can paraphrase. Each
answer is the exact span with its character offset. Subjects go wholly to train or to dev.
"""

from __future__ import annotations

import hashlib
import random
from functools import cache
from typing import Any

from tasks.demo.lexicon import load_data
from tasks.demo.question_grammar import phrasings, question_tokens
from tasks.demo.squad_contexts import Answerable, ContextWriter, SquadContext
from tasks.demo.world import World
from tasks.io.squad import build_squad

VERSION = "1.1"
MAX_QUESTIONS_PER_CONTEXT = 5
#: Share of questions phrased with the most words of the answer sentence (the rest: any
#: phrasing of the grammar), as crowd workers mostly copy the sentence's words.
LEXICAL_COPY_SHARE = 0.8
_DEV_SHARE = 0.3
_STOPWORDS = frozenset((
    "a", "an", "the", "of", "in", "on", "at", "to", "by", "for", "from", "with", "and", "or",
    "is", "are", "was", "were", "be", "been", "did", "does", "do", "has", "have", "had", "what",
    "which", "who", "whom", "whose", "where", "when", "how", "many", "much", "name", "it", "its",
    "his", "her", "their", "there", "this", "that", "as"))


def reader_phrasings() -> dict[str, list[str]]:
    """The reader bank of ``data/questions.json`` (``{X}`` is the subject)."""
    return load_data("questions")["reader"]


def stem(word: str) -> str:
    """A crude stem, so that "died" meets "die", "moved" "move" and "founded" "founder"."""
    for suffix in ("ing", "ed", "er", "es", "s", "d"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def content_stems(text: str) -> frozenset[str]:
    """Stems of the content words of ``text`` (lower-cased, stopwords and ``{X}`` out)."""
    return frozenset(stem(t) for t in question_tokens(text.replace("{X}", " "))
                     if t not in _STOPWORDS and t.isalpha())


@cache
def unambiguous_phrasings() -> dict[str, tuple[str, ...]]:
    """Key -> the phrasings of its language that no other key's language holds."""
    languages = phrasings()
    owners: dict[tuple[str, ...], set[str]] = {}
    for key, items in languages.items():
        for item in items:
            owners.setdefault(tuple(question_tokens(item)), set()).add(key)
    return {key: tuple(p for p in items if len(owners[tuple(question_tokens(p))]) == 1)
            for key, items in languages.items()}


def overlap(phrasing: str, sentence: str, subject: str) -> int:
    """Content-word stems ``phrasing`` shares with ``sentence`` (the subject's words aside)."""
    return len(content_stems(phrasing) & (content_stems(sentence) - content_stems(subject)))


def choose_phrasing(key: str, sentence: str, subject: str, rng: random.Random) -> str | None:
    """A phrasing of ``key`` (``{X}`` = subject): mostly one sharing the most words with the
    answer ``sentence``, otherwise any unambiguous one; ``None`` when the key has none."""
    options = unambiguous_phrasings().get(key, ())
    if not options:
        return None
    if rng.random() < LEXICAL_COPY_SHARE:
        scores = [overlap(p, sentence, subject) for p in options]
        options = tuple(p for p, s in zip(options, scores, strict=True) if s == max(scores))
    return rng.choice(options)


def _qid(seed: int, subject: str, index: int) -> str:
    return hashlib.sha1(f"squad:{seed}:{subject}:{index}".encode()).hexdigest()[:24]


def context_questions(world: World, answerable: list[Answerable],
                      rng: random.Random) -> list[tuple[str, str, int, str]]:
    """``(question, answer text, answer_start, subject id)`` for what a paragraph states once
    (the subject is the entity the question asks about)."""
    seen: dict[tuple[str, str], int] = {}
    for item in answerable:
        seen[(item.key, item.subject)] = seen.get((item.key, item.subject), 0) + 1
    questions = []
    for item in answerable:
        if seen[(item.key, item.subject)] != 1:
            continue
        label = world.label(item.subject)
        phrasing = choose_phrasing(item.key, item.sentence, label, rng)
        if phrasing is not None:
            questions.append((phrasing.replace("{X}", label), item.text, item.start,
                              item.subject))
    rng.shuffle(questions)
    return questions[:MAX_QUESTIONS_PER_CONTEXT]


def distractor_questions(context: SquadContext) -> list[tuple[str, str, int, str]]:
    """``(question, answer, start, subject id)`` for the distractors whose question is asked
    once (their subject: the paragraph's)."""
    asked: dict[str, int] = {}
    for d in context.distractors:
        asked[d.question] = asked.get(d.question, 0) + 1
    return [(d.question, d.text, d.start, context.subject) for d in context.distractors
            if asked[d.question] == 1]


def build_squad_sets(world: World, n_train: int, n_dev: int, max_words: int,
                     rng: random.Random, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(train, dev)`` SQuAD v1.1 JSON contents over paragraphs of ``max_words`` words."""
    train, dev, _ = build_squad_sets_with_subjects(world, n_train, n_dev, max_words, rng, seed)
    return train, dev


def build_squad_sets_with_subjects(world: World, n_train: int, n_dev: int, max_words: int,
                                   rng: random.Random, seed: int
                                   ) -> tuple[dict[str, Any], dict[str, Any],
                                              dict[str, list[tuple[str, str, str]]]]:
    """``(train, dev, subjects)``: the SQuAD v1.1 JSON contents and, per split, the gold
    ``(question id, question, subject entity id)`` of every question, in file order."""
    subjects = list(world.subjects())
    rng.shuffle(subjects)
    dev_ids = {e.id for e in subjects[: int(len(subjects) * _DEV_SHARE)]}
    # one stream per split: the dev set does not change with the size of the train set
    rngs = {split: random.Random(rng.getrandbits(64)) for split in ("train", "dev")}
    writers = {split: ContextWriter(world, r) for split, r in rngs.items()}
    grouped: dict[str, dict[str, list[Any]]] = {"train": {}, "dev": {}}
    links: dict[str, dict[str, list[tuple[str, str, str]]]] = {"train": {}, "dev": {}}
    counts = {"train": 0, "dev": 0}
    limits = {"train": n_train, "dev": n_dev}
    for subject in subjects:
        split = "dev" if subject.id in dev_ids else "train"
        if counts[split] >= limits[split]:
            if all(counts[s] >= limits[s] for s in counts):
                break
            continue
        context = writers[split].context(subject, max_words)
        questions = context_questions(world, context.answerable, rngs[split])
        if split == "train":
            questions += distractor_questions(context)
            rngs[split].shuffle(questions)
        qas, linked = [], []
        for index, (question, answer, start, about) in enumerate(questions):
            if counts[split] >= limits[split]:
                break
            answers: list[tuple[str, int | None]] = [(answer, start)]
            if split == "dev":
                answers.append((answer, start))
                if answer[-4:].isdigit() and len(answer) > 4:
                    answers.append((answer[-4:], start + len(answer) - 4))
            qas.append((_qid(seed, subject.id, index), question, answers))
            linked.append((qas[-1][0], question, about))
            counts[split] += 1
        if qas:
            grouped[split].setdefault(context.title, []).append((context.text, qas))
            links[split].setdefault(context.title, []).extend(linked)
    train = build_squad(VERSION, list(grouped["train"].items()))
    dev = build_squad(VERSION, list(grouped["dev"].items()))
    in_order = {split: [link for title in grouped[split] for link in links[split][title]]
                for split in grouped}
    return train, dev, in_order
