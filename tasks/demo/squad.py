"""A SQuAD v1.1-style reading comprehension set over the demo passages.

Each context is one passage; its questions ask for facts and dates stated inside it, phrased
with the reader question bank (``data/questions.json``), and each answer is the exact span with
its character offset. Articles go wholly to train or to dev, so no context is shared.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from tasks.demo.lexicon import load_data
from tasks.demo.passages import PassageRecord
from tasks.demo.world import World
from tasks.io.squad import build_squad

VERSION = "1.1"
MAX_QUESTIONS_PER_CONTEXT = 3
_DEV_SHARE = 0.3


def reader_phrasings() -> dict[str, list[str]]:
    """SQuAD-style phrasings per relation or value (``{X}`` is the subject)."""
    return load_data("questions")["reader"]


def _qid(seed: int, passage_id: int, index: int) -> str:
    return hashlib.sha1(f"squad:{seed}:{passage_id}:{index}".encode()).hexdigest()[:24]


def passage_questions(world: World, passage: PassageRecord,
                      rng: random.Random) -> list[tuple[str, str, int, str]]:
    """``(question, answer text, answer_start, subject id)`` for what ``passage`` states,
    unambiguously (the subject is the entity the question asks about)."""
    bank = reader_phrasings()
    items: list[tuple[str, str, str, int]] = []  # (key, subject, answer, start)
    for fact, _subject, obj in passage.facts:
        items.append((fact.relation, fact.subject, obj.surface, obj.start))
    for entity_id, name, start, end in passage.values:
        if name in bank:
            items.append((name, entity_id, passage.text[start:end], start))
    seen: dict[tuple[str, str], int] = {}
    for key, subject, _, _ in items:
        seen[(key, subject)] = seen.get((key, subject), 0) + 1
    questions = []
    for key, subject, answer, start in items:
        if seen[(key, subject)] != 1 or key not in bank:
            continue
        phrasing = rng.choice(bank[key])
        questions.append((phrasing.replace("{X}", world.label(subject)), answer, start, subject))
    rng.shuffle(questions)
    return questions[:MAX_QUESTIONS_PER_CONTEXT]


def build_squad_sets(world: World, passages: list[PassageRecord], n_train: int, n_dev: int,
                     rng: random.Random, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(train, dev)`` SQuAD v1.1 JSON contents."""
    train, dev, _ = build_squad_sets_with_subjects(world, passages, n_train, n_dev, rng, seed)
    return train, dev


def build_squad_sets_with_subjects(world: World, passages: list[PassageRecord], n_train: int,
                                   n_dev: int, rng: random.Random, seed: int
                                   ) -> tuple[dict[str, Any], dict[str, Any],
                                              dict[str, list[tuple[str, str, str]]]]:
    """``(train, dev, subjects)``: the SQuAD v1.1 JSON contents and, per split, the gold
    ``(question id, question, subject entity id)`` of every question, in file order."""
    titles = sorted({p.title for p in passages})
    rng.shuffle(titles)
    dev_titles = set(titles[: int(len(titles) * _DEV_SHARE)])
    order = list(passages)
    rng.shuffle(order)
    grouped: dict[str, dict[str, list[Any]]] = {"train": {}, "dev": {}}
    subjects: dict[str, dict[str, list[tuple[str, str, str]]]] = {"train": {}, "dev": {}}
    counts = {"train": 0, "dev": 0}
    limits = {"train": n_train, "dev": n_dev}
    for passage in order:
        split = "dev" if passage.title in dev_titles else "train"
        if counts[split] >= limits[split]:
            if all(counts[s] >= limits[s] for s in counts):
                break
            continue
        qas, links = [], []
        for index, (question, answer, start, subject) in enumerate(
                passage_questions(world, passage, rng)):
            if counts[split] >= limits[split]:
                break
            answers: list[tuple[str, int | None]] = [(answer, start)]
            if split == "dev":
                answers.append((answer, start))
                if answer[-4:].isdigit() and len(answer) > 4:
                    answers.append((answer[-4:], start + len(answer) - 4))
            qas.append((_qid(seed, passage.id, index), question, answers))
            links.append((qas[-1][0], question, subject))
            counts[split] += 1
        if qas:
            grouped[split].setdefault(passage.title, []).append((passage.text, qas))
            subjects[split].setdefault(passage.title, []).extend(links)
    train = build_squad(VERSION, list(grouped["train"].items()))
    dev = build_squad(VERSION, list(grouped["dev"].items()))
    in_order = {split: [link for title in grouped[split] for link in subjects[split][title]]
                for split in grouped}
    return train, dev, in_order
