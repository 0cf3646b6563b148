"""The data model of the demo knowledge base: entities with ``Q`` ids, facts, and the world.

:func:`tasks.demo.kb.build_world` fills a :class:`World`; the writers of the demo world (articles,
passages, T-REx, NQ, SQuAD, paraphrase resources) read it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tasks.config import DemoWorldConfig

#: Classes of generated subjects (everything else is a real ``object``).
SUBJECT_CLASSES = ("person", "organisation", "work", "place")


@dataclass
class Entity:
    """One entity of the world. ``cls`` is person/organisation/work/place/object."""

    id: str
    label: str
    cls: str
    kind: str
    type: str
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    gender: str | None = None
    short: str | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    rank: int | None = None
    count: int = 0

    @property
    def is_subject(self) -> bool:
        """True for generated subjects (they have an article), False for real objects."""
        return self.cls != "object"


@dataclass(frozen=True)
class Fact:
    """A triple ``subject relation object``; ``year`` qualifies it when the prose dates it."""

    subject: str
    relation: str
    object: str
    year: int | None = None


@dataclass
class World:
    """Entities (insertion order = creation order) and facts, with indexes."""

    config: DemoWorldConfig
    entities: dict[str, Entity] = field(default_factory=dict)
    facts: list[Fact] = field(default_factory=list)
    by_subject: dict[str, list[Fact]] = field(default_factory=dict)
    confusable: dict[str, str] = field(default_factory=dict)

    def add_fact(self, subject: str, relation: str, obj: str, year: int | None = None) -> None:
        """Record a fact (duplicates are ignored)."""
        fact = Fact(subject, relation, obj, year)
        facts = self.by_subject.setdefault(subject, [])
        if any(f.relation == relation and f.object == obj for f in facts):
            return
        facts.append(fact)
        self.facts.append(fact)

    def objects(self, subject: str, relation: str) -> list[str]:
        """Object ids of ``subject``'s facts for ``relation``."""
        return [f.object for f in self.by_subject.get(subject, ()) if f.relation == relation]

    def first(self, subject: str, relation: str) -> str | None:
        """The first object of ``subject`` for ``relation``, or ``None``."""
        found = self.objects(subject, relation)
        return found[0] if found else None

    def subjects(self, cls: str | None = None, kind: str | None = None) -> list[Entity]:
        """Generated subjects, optionally of one class or kind, in creation order."""
        return [e for e in self.entities.values() if e.is_subject
                and (cls is None or e.cls == cls) and (kind is None or e.kind == kind)]

    def label(self, entity_id: str) -> str:
        """The label of an entity."""
        return self.entities[entity_id].label

    def relation_counts(self) -> Counter[str]:
        """Number of facts per relation."""
        return Counter(f.relation for f in self.facts)
