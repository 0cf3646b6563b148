"""Sentences from templates, with every mention and fact located in the text.

Templates (``data/prose.json``) are encyclopedic sentence patterns, never the question templates.
Placeholders: ``{s}``/``{S}`` the subject (a pronoun, surname or "the band" after the first
mention; always the full name for ``{S}``), ``{sposs}`` its possessive, ``{o}``/``{o:P19}`` a
fact's object, ``{a}`` "a"/"an" for the next word, ``{x}`` another entity, and plain values
(``{birth}``, ``{year}``, ``{pop}``, ...). :class:`Renderer` returns a :class:`Sentence` that knows
the character span of each mention, fact and value, which T-REx boundaries, passages, SQuAD
answers and NQ positives are all cut from.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tasks.demo.lexicon import load_data
from tasks.demo.world import Entity, Fact, World

_PLACEHOLDER = re.compile(r"\{([A-Za-z]+)(?::([A-Za-z0-9_]+))?\}")
LINKER = "Wikidata_Spotlight_Entity_Linker"
COREF = "Simple_Coreference"
_AN_EXCEPTIONS = ("uni", "use", "usu", "eu", "one")


def templates() -> dict[str, Any]:
    """The sentence templates of ``data/prose.json``."""
    return load_data("prose")


def article_for(word: str) -> str:
    """"a" or "an" for ``word``."""
    lower = word.lower()
    if lower.startswith(_AN_EXCEPTIONS):
        return "a"
    if lower.startswith(("hour", "honest", "honor", "honour")):
        return "an"
    return "an" if lower[:1] in "aeiou" else "a"


@lru_cache(maxsize=4096)
def _parsed(template: str) -> tuple[tuple[int, int, str, str | None], ...]:
    """``(start, end, name, argument)`` of each placeholder of ``template``, in order.

    Remembered per template: the few hundred templates of ``data/prose.json`` are rendered and
    probed ~850k times for the 51,770-passage world, and parsing each time was ~6 s of it.
    """
    return tuple((m.start(), m.end(), m.group(1), m.group(2))
                 for m in _PLACEHOLDER.finditer(template))


def placeholders(template: str) -> list[tuple[str, str | None]]:
    """The ``(name, argument)`` placeholders of a template, in order."""
    return [(name, arg) for _, _, name, arg in _parsed(template)]


@dataclass
class Mention:
    """An entity mention: ``[start, end)`` in the sentence (later the article)."""

    start: int
    end: int
    entity: str
    surface: str
    annotator: str


@dataclass
class Sentence:
    """A rendered sentence with its mentions, aligned facts and value spans."""

    text: str
    mentions: list[Mention] = field(default_factory=list)
    facts: list[tuple[Fact, int, int]] = field(default_factory=list)
    values: list[tuple[str, str, int, int]] = field(default_factory=list)
    role: str = "fact"

    def shifted(self, offset: int) -> Sentence:
        """The same sentence with all spans moved by ``offset`` characters."""
        return Sentence(
            self.text,
            [Mention(m.start + offset, m.end + offset, m.entity, m.surface, m.annotator)
             for m in self.mentions],
            list(self.facts),
            [(e, name, s + offset, t + offset) for e, name, s, t in self.values],
            self.role,
        )


def kind_noun(entity: Entity) -> str:
    """The common noun for an entity ("band", "novel", "village", "tractor")."""
    if entity.kind in ("company",):
        return "company"
    if entity.kind in ("band", "album", "song", "painting", "character", "game", "film",
                       "village"):
        return {"game": "game"}.get(entity.kind, entity.kind)
    if entity.kind == "product":
        return str(entity.attrs.get("product_kind", "model"))
    return entity.type


@dataclass
class SubjectRef:
    """How one text refers to one entity: full name first, then shorter forms."""

    entity: Entity
    mentioned: bool = False
    connector: str | None = None

    def forms(self, rng: random.Random, at_start: bool, possessive: bool) -> tuple[str, str, str]:
        """``(prefix, surface, annotator)``; the mention is ``surface``, ``prefix`` precedes it."""
        e = self.entity
        if self.connector is not None:
            surface = e.label
            text = f"{self.connector} "
            return text, surface + ("'s" if possessive else ""), LINKER
        if not self.mentioned:
            self.mentioned = True
            return "", e.label + ("'s" if possessive else ""), LINKER
        person = e.cls == "person"
        draw = rng.random()
        if person:
            if draw < (0.25 if at_start else 0.1):
                return "", e.label + ("'s" if possessive else ""), LINKER
            if draw < 0.65:
                return "", (e.short or e.label) + ("'s" if possessive else ""), LINKER
            pronoun = ("his" if possessive else "he") if e.gender == "m" else \
                ("her" if possessive else "she")
            return "", pronoun, COREF
        if draw < 0.45:
            return "", e.label + ("'s" if possessive else ""), LINKER
        if draw < 0.75:
            return "the ", kind_noun(e) + ("'s" if possessive else ""), COREF
        return "", "its" if possessive else "it", COREF


class Renderer:
    """Renders templates about the entities of one world."""

    def __init__(self, world: World, rng: random.Random):
        self.world = world
        self.rng = rng
        self.data = templates()

    # -- template choice ----------------------------------------------------------------------
    def fact_templates(self, relation: str, subject: Entity) -> list[str]:
        """Templates for one fact, the subject kind's own ones first."""
        data = self.data["fact"]
        return data.get(f"{relation}/{subject.kind}") or data.get(relation, [])

    def usable(self, template: str, subject: Entity, facts: dict[str, Fact]) -> bool:
        """Whether every placeholder of ``template`` has a value for ``subject``."""
        for _, _, name, arg in _parsed(template):
            if name == "o" and arg is not None and arg not in facts:
                return False
            if self._value(name, subject, facts, probe=True) is None and name not in (
                    "s", "S", "sposs", "o", "a", "x", "xkind", "pron", "poss"):
                return False
        return True

    # -- values -------------------------------------------------------------------------------
    def _value(self, name: str, e: Entity, facts: dict[str, Fact], probe: bool = False
               ) -> str | None:
        a = e.attrs
        rng = self.rng
        first_fact = next(iter(facts.values()), None)
        if name == "life":
            if "birth" not in a:
                return None
            return f"{a['birth']} – {a['death']}" if "death" in a else f"born {a['birth']}"
        if name in ("birth", "death"):
            return a.get(name)
        if name == "dyear":
            return str(a["death_year"]) if "death_year" in a else None
        if name == "be":
            return "was" if "death_year" in a else "is"
        if name == "year":
            if first_fact is not None and first_fact.year is not None:
                return str(first_fact.year)
            value = a.get("year", a.get("inception"))
            return None if value is None else str(value)
        if name == "inception":
            return str(a["inception"]) if "inception" in a else None
        if name in ("cyear", "decade"):
            start = a.get("birth_year", 1900) + 25 if e.cls == "person" else a.get(
                "year", a.get("inception", 1950))
            end = min(2022, a.get("death_year", 2022))
            year = start if probe else rng.randint(min(start, end), max(start, end))
            return f"{year // 10 * 10}s" if name == "decade" else str(year)
        if name == "age":
            return str(rng.randint(16, 22))
        if name == "n":
            return f"{rng.randint(2, 90) * 100:,}"
        if name == "pop":
            return f"{a['population']:,}" if "population" in a else None
        if name == "kind":
            return kind_noun(e)
        if name == "industry":
            return a.get("industry")
        if name == "ordinal":
            return rng.choice(("debut", "second", "third", "fourth", "fifth"))
        if name == "country":
            return self.world.label(a["home_id"]) if "home_id" in a else None
        if name == "parent":
            return "father" if e.gender == "m" else "mother"
        if name == "childword":
            if first_fact is None:
                return None
            child = self.world.entities[first_fact.object]
            return "son" if child.gender == "m" else "daughter"
        if name == "month":
            return rng.choice(("January", "February", "March", "April", "May", "June", "July",
                               "August", "September", "October", "November", "December"))
        return None

    # -- rendering ----------------------------------------------------------------------------
    def render(self, template: str, ref: SubjectRef, facts: dict[str, Fact] | None = None,
               extra: Entity | None = None, role: str = "fact",
               values: dict[str, str] | None = None) -> Sentence:
        """One sentence. ``facts`` maps relation -> fact (``{o}`` is the only fact's object);
        ``extra`` is the entity behind ``{x}``; ``values`` overrides plain placeholder values."""
        facts = facts or {}
        subject = ref.entity
        pieces: list[list[Any]] = []  # [text, kind, payload]
        pos = 0
        for at, after, name, arg in _parsed(template):
            if at > pos:
                pieces.append([template[pos:at], "text", None])
            pos = after
            at_start = not pieces or (len(pieces) == 1 and pieces[0][0] in ("\"",))
            if name in ("s", "S", "sposs"):
                if name == "S":
                    ref.mentioned = True
                    prefix, surface, annotator = "", subject.label, LINKER
                else:
                    prefix, surface, annotator = ref.forms(self.rng, at_start, name == "sposs")
                if prefix:
                    pieces.append([prefix, "text", None])
                pieces.append([surface, "subject", annotator])
            elif name == "o":
                fact = facts[arg] if arg else next(iter(facts.values()))
                pieces.append([self.world.label(fact.object), "object", fact])
            elif name == "a":
                pieces.append(["a", "article", None])
            elif name == "x":
                assert extra is not None
                pieces.append([extra.label, "extra", extra.id])
            elif name == "xkind":
                assert extra is not None
                pieces.append([kind_noun(extra), "text", None])
            elif name == "pron":
                pieces.append(["it" if subject.cls != "person" else (
                    "he" if subject.gender == "m" else "she"), "text", None])
            elif name == "poss":
                pieces.append(["its" if subject.cls != "person" else (
                    "his" if subject.gender == "m" else "her"), "text", None])
            elif name == "country" and subject.attrs.get("home_id"):
                pieces.append([self.world.label(subject.attrs["home_id"]), "extra",
                               subject.attrs["home_id"]])
            else:
                value = (values or {}).get(name) or self._value(name, subject, facts)
                if value is None:
                    raise ValueError(f"no value for {{{name}}} of {subject.id} in {template!r}")
                kind = "value" if name in ("birth", "death", "year", "inception", "pop",
                                           "dyear") else "text"
                if name == "year" and any(f.year is not None for f in facts.values()):
                    name = "fact_year"  # a fact's own date (marriage, graduation...)
                pieces.append([value, kind, name])
        if pos < len(template):
            pieces.append([template[pos:], "text", None])
        for i, piece in enumerate(pieces):
            if piece[1] == "article":
                following = "".join(p[0] for p in pieces[i + 1:]).lstrip()
                piece[0] = article_for(following)
        first = next(i for i, p in enumerate(pieces) if p[0])
        text0 = pieces[first][0]
        if text0[:1].islower():
            pieces[first][0] = text0[:1].upper() + text0[1:]
        sentence = Sentence("", role=role)
        subject_mention: int | None = None
        out = []
        offset = 0
        for text, kind, payload in pieces:
            start, end = offset, offset + len(text)
            if kind == "subject":
                surface = text[:-2] if text.endswith("'s") else text
                sentence.mentions.append(Mention(start, start + len(surface), subject.id,
                                                 surface, payload))
                if subject_mention is None:
                    subject_mention = len(sentence.mentions) - 1
            elif kind == "object":
                fact = payload
                sentence.mentions.append(Mention(start, end, fact.object, text, LINKER))
                sentence.facts.append((fact, -1, len(sentence.mentions) - 1))
            elif kind == "extra":
                sentence.mentions.append(Mention(start, end, payload, text, LINKER))
            elif kind == "value":
                sentence.values.append((subject.id, payload, start, end))
            out.append(text)
            offset = end
        sentence.text = "".join(out)
        if sentence.facts:
            if subject_mention is None:
                raise ValueError(f"template {template!r} states a fact without its subject")
            sentence.facts = [(f, subject_mention, o) for f, _, o in sentence.facts]
        return sentence
