"""Facts (subject, relation, object) collected from T-REx and the labels that answer them."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tasks.io.entity_labels import EntityLabel
from tasks.io.errors import SkipCounter
from tasks.io.trex import iter_trex_triples


@dataclass(frozen=True, slots=True)
class Fact:
    """One knowledge-base fact, with the strings a question about it is rendered from.

    ``answers`` is the object's label followed by its aliases (the EntityQuestions answers).
    """

    relation: str
    subject_id: str
    subject_label: str
    object_id: str
    answers: tuple[str, ...]


@dataclass
class FactCollection:
    """Facts per relation, plus counts of what was left out and why."""

    by_relation: dict[str, list[Fact]]
    triples_seen: int
    duplicates: int
    label_fallbacks: int
    skips: SkipCounter


def _answers(entity_id: str, surface: str | None,
             labels: Mapping[str, EntityLabel]) -> tuple[str, ...]:
    entity = labels.get(entity_id)
    if entity is None:
        return (surface,) if surface else ()
    seen: dict[str, None] = {entity.label: None}
    for alias in entity.aliases:
        seen.setdefault(alias, None)
    return tuple(seen)


def collect_facts(trex_paths: Iterable[Path], labels: Mapping[str, EntityLabel],
                  relations: Iterable[str], on_error: str = "raise") -> FactCollection:
    """Stream T-REx triples of ``relations`` into one fact per (relation, subject).

    A subject with several objects for a relation keeps the first one in file order (later ones
    are counted as duplicates). Entities missing from ``labels`` fall back to the surface form
    in the text (counted). Facts come out sorted by subject id, so the result does not depend on
    the order of the T-REx files.
    """
    wanted = set(relations)
    skips = SkipCounter(source="T-REx")
    facts: dict[tuple[str, str], Fact] = {}
    seen = duplicates = fallbacks = 0
    for _document, triple in iter_trex_triples(sorted(trex_paths), relations=wanted,
                                               on_error=on_error, skips=skips):
        seen += 1
        key = (triple.relation, triple.subject_id)
        if key in facts:
            duplicates += 1
            continue
        subject = labels.get(triple.subject_id)
        subject_label = subject.label if subject else (triple.subject.surfaceform or "")
        answers = _answers(triple.object_id, triple.object.surfaceform, labels)
        fallbacks += (subject is None) + (triple.object_id not in labels)
        if not subject_label or not answers:
            continue
        facts[key] = Fact(triple.relation, triple.subject_id, subject_label, triple.object_id,
                          answers)
    by_relation: dict[str, list[Fact]] = {r: [] for r in sorted(wanted, key=_relation_order)}
    for relation, subject in sorted(facts, key=lambda key: (key[0], _qid_order(key[1]))):
        by_relation[relation].append(facts[(relation, subject)])
    return FactCollection(by_relation, seen, duplicates, fallbacks, skips)


def _relation_order(relation: str) -> tuple[int, str]:
    head = relation[1:].split("_")[0]
    return (int(head) if head.isdigit() else 0, relation)


def _qid_order(entity_id: str) -> tuple[int, str]:
    return (int(entity_id[1:]) if entity_id[1:].isdigit() else 0, entity_id)


def relation_rng(seed: int, relation: str, purpose: str) -> random.Random:
    """A generator seeded by (seed, relation, purpose), stable across processes and versions."""
    digest = hashlib.sha256(f"{seed}:{relation}:{purpose}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sample_facts(facts: list[Fact], n: int, seed: int, relation: str) -> list[Fact]:
    """Up to ``n`` facts drawn without replacement, seeded, kept in subject-id order."""
    if len(facts) <= n:
        return list(facts)
    chosen = relation_rng(seed, relation, "test").sample(range(len(facts)), n)
    return [facts[i] for i in sorted(chosen)]
