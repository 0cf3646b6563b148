"""A tiny synthetic SQuAD-style set: short paragraphs about made-up people, three question
types (birthplace, birth year, occupation), two or three people per paragraph so the reader
must find the right one. Seeded; answers are exact spans with their offsets."""

from __future__ import annotations

import random

from models.reader.features import QAExample
from tasks.io.squad import SquadAnswer

SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vo", "gel", "an", "ber", "du", "ix", "or", "sel"]
CITIES = ["Paris", "Lyon", "Oslo", "Lima", "Quito", "Turin", "Porto", "Graz", "Bergen",
          "Nantes", "Kyoto", "Dakar", "Perth", "Cork", "Basel", "Malmö", "Zürich", "Kraków"]
JOBS = ["painter", "chemist", "sailor", "banker", "poet", "surgeon", "architect", "farmer",
        "judge", "pianist", "baker", "geologist"]


def _name(rng: random.Random) -> str:
    def word() -> str:
        return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()

    return f"{word()} {word()}"


def synthetic_examples(n_paragraphs: int, seed: int) -> list[QAExample]:
    """``n_paragraphs`` paragraphs, one question per person in each."""
    rng = random.Random(seed)
    examples = []
    for p in range(n_paragraphs):
        sentences, facts = [], []
        for _ in range(rng.randint(2, 3)):
            name, city, year, job = (_name(rng), rng.choice(CITIES),
                                     str(rng.randint(1700, 1990)), rng.choice(JOBS))
            sentences.append(f"{name} was born in {city} in {year} and worked as a {job}.")
            facts.append((name, city, year, job))
        context = " ".join(sentences)
        for i, (name, city, year, job) in enumerate(facts):
            kind = rng.randrange(3)
            question, answer = [(f"Where was {name} born?", city),
                                (f"In what year was {name} born?", year),
                                (f"What did {name} work as?", job)][kind]
            anchor = context.index(name)
            start = context.index(answer if kind else f" {city} ", anchor) + (0 if kind else 1)
            examples.append(QAExample(f"s{seed}-{p}-{i}", question, context,
                                      (SquadAnswer(answer, start),)))
    return examples
