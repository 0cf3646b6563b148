"""An NQ-like retriever training set over question patterns the EntityQuestions templates do
not use: dates of birth and death, populations, founding and release years, "which company makes
the ...", "who wrote the novel ...", "who sings ...".

Questions are lower-cased without a question mark, as in Natural Questions, and drawn with a
preference for popular subjects (NQ asks about what people search for). Each example has the
passage stating the answer as its positive, BM25's best passages without the answer as hard
negatives and random passages as negatives, like DPR's ``biencoder-nq-*.json``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tasks.demo.lexical import BM25, AnswerMatcher
from tasks.demo.lexicon import load_data
from tasks.demo.passages import PassageRecord
from tasks.demo.rng import weighted_sample
from tasks.demo.world import World
from tasks.io.dpr import DprCtx, DprExample

N_HARD_NEGATIVES = 5
N_NEGATIVES = 2
_BM25_DEPTH = 40


@dataclass
class NqCandidate:
    """One question with its answers and the passages that state the answer."""

    question: str
    answers: list[str]
    subject: str
    positives: list[int] = field(default_factory=list)


def patterns() -> dict[str, list[str]]:
    """The NQ question patterns (``{X}`` is the subject), keyed by value or relation[/kind]."""
    return load_data("questions")["nq"]


def _patterns_for(key: str, kind: str, book_form: str | None) -> list[str]:
    table = patterns()
    for candidate in (f"{key}/{book_form}" if book_form else None, f"{key}/{kind}", key):
        if candidate and candidate in table:
            return table[candidate]
    return []


def nq_candidates(world: World, passages: list[PassageRecord]) -> list[NqCandidate]:
    """Every NQ question the passages can answer, in passage order (questions unique)."""
    found: dict[str, NqCandidate] = {}
    for passage in passages:
        items: list[tuple[str, str, list[str]]] = []
        for entity_id, name, start, end in passage.values:
            entity = world.entities[entity_id]
            key = "death" if name == "dyear" else name
            if key == "year" and entity.cls != "work":
                continue
            if key == "inception" and entity.cls != "organisation":
                continue
            text = passage.text[start:end]
            answers = [text] if key in ("pop", "year", "inception") else [text, text[-4:]]
            if text[-4:] == text:
                answers = [text]
            for pattern in _patterns_for(key, entity.kind, None):
                year_only = pattern.startswith("what year") and key in ("birth", "death")
                items.append((pattern, entity_id, [text[-4:]] if year_only else answers))
        for fact, _subject, obj in passage.facts:
            entity = world.entities[fact.subject]
            form = entity.type if entity.kind == "book" else None
            for pattern in _patterns_for(fact.relation, entity.kind, form):
                items.append((pattern, fact.subject, [obj.surface]))
        for pattern, entity_id, answers in items:
            subject = world.entities[entity_id]
            question = pattern.replace("{X}", subject.label).lower()
            candidate = found.get(question)
            if candidate is None:
                candidate = found[question] = NqCandidate(question, answers, entity_id)
            if candidate.answers[0] == answers[0] and passage.id not in candidate.positives:
                candidate.positives.append(passage.id)
    return list(found.values())


def _ctx(passage: PassageRecord, score: float, title_score: float) -> DprCtx:
    return DprCtx(title=passage.title, text=passage.text, score=round(score, 4),
                  title_score=title_score, passage_id=str(passage.id))


def build_nq(world: World, passages: list[PassageRecord], sizes: tuple[int, int, int],
             rng: random.Random, bm25: BM25 | None = None
             ) -> tuple[list[DprExample], list[DprExample], list[tuple[str, list[str]]],
                        list[tuple[str, str]]]:
    """``(train, dev, test rows, train truth)`` of the NQ-like set; disjoint questions.

    The truth is ``(question, subject id)`` of each training question: the entity a perfect
    linker finds, which the demo world knows and real NQ does not.
    """
    candidates = nq_candidates(world, passages)
    weights = [world.entities[c.subject].count ** 0.5 for c in candidates]
    chosen = weighted_sample(rng, candidates, weights, sum(sizes))
    n_train, n_dev, _ = sizes
    bm25 = bm25 or BM25([f"{p.title} {p.text}" for p in passages])
    by_id = {p.id: p for p in passages}
    matcher = AnswerMatcher()

    def contains(answers: list[str], passage: PassageRecord) -> bool:
        return matcher(answers, passage.id, passage.text)

    def example(candidate: NqCandidate, dataset: str) -> DprExample:
        subject = world.entities[candidate.subject]
        names = [n for n in (subject.label, subject.short) if n]
        naming = [i for i in candidate.positives if any(n in by_id[i].text for n in names)]
        positives = [_ctx(by_id[i], 1000.0, 1.0) for i in (naming or candidate.positives)[:3]]
        hard = []
        for index, score in bm25.top(candidate.question, _BM25_DEPTH):
            passage = passages[index]
            if passage.id in candidate.positives or contains(candidate.answers, passage):
                continue
            hard.append(_ctx(passage, score, 0.0))
            if len(hard) == N_HARD_NEGATIVES:
                break
        negatives = []
        for passage in rng.sample(passages, min(len(passages), N_NEGATIVES + 3)):
            if len(negatives) < N_NEGATIVES and passage.id not in candidate.positives \
                    and not contains(candidate.answers, passage):
                negatives.append(_ctx(passage, 0.0, 0.0))
        return DprExample(dataset, candidate.question, tuple(candidate.answers),
                          tuple(positives), tuple(negatives), tuple(hard))

    train = [example(c, "nq_train_psgs_w100") for c in chosen[:n_train]]
    dev = [example(c, "nq_dev_psgs_w100") for c in chosen[n_train:n_train + n_dev]]
    test = [(c.question, list(c.answers)) for c in chosen[n_train + n_dev:]]
    truth = [(c.question, c.subject) for c in chosen[:n_train]]
    return train, dev, test, truth
