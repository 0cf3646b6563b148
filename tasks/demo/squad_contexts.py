"""The SQuAD-style contexts of the demo world: one short paragraph per subject, with distractors.

SQuAD paragraphs are not the retrieval passages (``psgs_w100.tsv``): they are written here, from
their own random stream, so that nothing the retrievers see changes with them. A paragraph opens
with the subject's lead sentence and states the subject's facts; next to a fact it often puts a
*same-type distractor*: another entity (or value) of the answer's kind in a sentence with other
relation words ("Lopez was born in Lyon. She moved to Porto in 1971."). A reader that finds the
answer by the words the question shares with the answer sentence picks the right one; a
paraphrase that uses other words leaves it the distractor to confuse the answer with (Gan & Ng,
2019). Each distractor comes with a question about it in its own sentence's words (SQuAD's crowd
workers ask about every sentence), which the training set uses. Templates:
``data/squad_prose.json``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tasks.demo.articles import Article, ArticleWriter, _facts_by_relation
from tasks.demo.lexicon import load_data
from tasks.demo.prose import Sentence, SubjectRef, placeholders
from tasks.demo.world import Entity, World

#: Share of stated facts (and values) that get a same-type distractor sentence next to them.
DISTRACTOR_SHARE = 0.75
#: The kind of a value answer (``data/questions.json`` keys) for its distractor.
VALUE_KINDS = {"birth": "date", "death": "date", "dyear": "year", "year": "year",
               "inception": "year", "pop": "count"}
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


@dataclass(frozen=True)
class Answerable:
    """A fact or value the paragraph states: what a question can ask for."""

    key: str        # relation (P19) or value name (birth)
    subject: str    # entity id
    text: str       # the answer span
    start: int      # its character offset in the paragraph
    sentence: str   # the sentence that states it


@dataclass(frozen=True)
class Distractor:
    """A same-type distractor: an entity or value of ``kind`` that answers no question."""

    kind: str       # entity kind (city, person, ...) or value kind (date, year, count)
    text: str
    start: int
    next_to: str    # the key of the fact it was written next to
    question: str   # what asks for it (the subject's name in it), in its sentence's words


@dataclass
class SquadContext:
    """One paragraph about one subject."""

    title: str
    subject: str
    text: str
    answerable: list[Answerable] = field(default_factory=list)
    distractors: list[Distractor] = field(default_factory=list)


def distractor_templates() -> dict[str, dict[str, list[list[str]]]]:
    """Subject class -> answer kind -> ``[sentence template, question]`` or ``[sentence template,
    question, relative clause]`` items (the clause: :func:`tasks.demo.question_grammar.clauses`)."""
    return load_data("squad_prose")["distractor"]


def _words(sentences: list[Sentence]) -> int:
    return sum(len(s.text.split(" ")) for s in sentences)


class ContextWriter:
    """Writes the SQuAD paragraphs of one world (its own random stream)."""

    def __init__(self, world: World, rng: random.Random):
        self.world = world
        self.rng = rng
        self.articles = ArticleWriter(world, rng)
        self.renderer = self.articles.renderer
        self.templates = distractor_templates()
        self.pools: dict[str, list[Entity]] = {}
        for entity in world.entities.values():
            self.pools.setdefault(entity.kind, []).append(entity)

    def context(self, e: Entity, max_words: int) -> SquadContext:
        """A paragraph about ``e`` of at most ``max_words`` words (the lead always)."""
        rng, render = self.rng, self.renderer
        facts = list(self.world.by_subject.get(e.id, []))
        first = _facts_by_relation(facts)
        ref = SubjectRef(e)
        options = [t for t in self.articles.lead_templates(e) if render.usable(t, e, first)]
        template = rng.choice(options)
        relations = [arg for name, arg in placeholders(template) if name == "o" and arg]
        lead = render.render(template, ref, {r: first[r] for r in relations}, role="lead")
        covered = {id(first[r]) for r in relations}
        taken = {f.object for f in facts} | {e.id}
        notes: dict[int, tuple[str, str, int, int, str]] = {}  # id(sentence) -> distractor
        units: list[list[Sentence]] = []
        for key, kind in self._lead_keys(lead):
            sentence = self._distractor(e, ref, key, kind, taken, notes)
            if sentence is not None:
                units.append([sentence])
        for fact in facts:
            if id(fact) in covered:
                continue
            unit = [self.articles.fact_sentence(ref, fact)]
            kind = self.world.entities[fact.object].kind
            distractor = self._distractor(e, ref, fact.relation, kind, taken, notes)
            if distractor is not None:
                unit.insert(rng.randrange(2), distractor)
            units.append(unit)
        rng.shuffle(units)
        sentences, words = [lead], _words([lead])
        for unit in units:
            if words + _words(unit) <= max_words:
                sentences += unit
                words += _words(unit)
        fill_class = "band" if e.kind == "band" else e.cls
        filler = render.render(rng.choice(self.articles.data["filler"][fill_class]), ref,
                               role="filler")
        if words + _words([filler]) <= max_words:
            sentences.insert(1 + rng.randrange(len(sentences)), filler)
        return self._assemble(e, sentences, notes)

    def _lead_keys(self, lead: Sentence) -> list[tuple[str, str]]:
        keys = [(fact.relation, self.world.entities[fact.object].kind)
                for fact, _, _ in lead.facts]
        keys += [(name, VALUE_KINDS[name]) for _, name, _, _ in lead.values
                 if name in VALUE_KINDS]
        return keys

    def _distractor(self, e: Entity, ref: SubjectRef, key: str, kind: str, taken: set[str],
                    notes: dict[int, tuple[str, str, int, int, str]]) -> Sentence | None:
        """A sentence with a same-type distractor for ``key`` (``None`` when the draw says no
        or the world has none of that kind for ``e``'s class)."""
        rng = self.rng
        templates = self.templates.get(e.cls, {}).get(kind)
        if not templates or rng.random() >= DISTRACTOR_SHARE:
            return None
        template, question, *_ = rng.choice(templates)
        question = question.replace("{X}", e.label)
        if "{x}" in template:
            pool = self.pools.get(kind, [])
            other = None
            for _ in range(10):
                candidate = rng.choice(pool) if pool else None
                if candidate is not None and candidate.id not in taken:
                    other = candidate
                    break
            if other is None:
                return None
            sentence = self.renderer.render(template, ref, extra=other, role="distractor")
            mention = next(m for m in reversed(sentence.mentions) if m.entity == other.id)
            notes[id(sentence)] = (kind, key, mention.start, mention.end, question)
            return sentence
        value = self._value(e, key, kind)
        if value is None:
            return None
        sentence = self.renderer.render(template, ref, values={"d": value}, role="distractor")
        start = sentence.text.index(value)
        notes[id(sentence)] = (kind, key, start, start + len(value), question)
        return sentence

    def _value(self, e: Entity, key: str, kind: str) -> str | None:
        """A value of ``kind`` for ``e`` that differs from the true one of ``key``."""
        rng, a = self.rng, e.attrs
        if e.cls == "person":
            low = a.get("birth_year", 1900) + 18
            high = max(low, min(2022, a.get("death_year", 2022)))
        else:
            low = int(a.get("year", a.get("inception", 1950))) + 1
            high = max(low, 2022)
        true = {"birth": a.get("birth"), "death": a.get("death"),
                "dyear": str(a.get("death_year")), "year": str(a.get("year")),
                "inception": str(a.get("inception")),
                "pop": f"{a['population']:,}" if "population" in a else None}.get(key)
        for _ in range(10):
            if kind == "date":
                value = f"{rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(low, high)}"
            elif kind == "year":
                value = str(rng.randint(low, high))
            elif kind == "count":
                value = f"{rng.randint(2, 900) * 100:,}"
            else:
                return None
            if value != true:
                return value
        return None

    def _assemble(self, e: Entity, sentences: list[Sentence],
                  notes: dict[int, tuple[str, str, int, int, str]]) -> SquadContext:
        article = Article.assemble(e.label, e.id, "squad", sentences)
        context = SquadContext(e.label, e.id, article.text)
        offset = 0
        for original, placed in zip(sentences, article.sentences, strict=True):
            if id(original) in notes:
                kind, key, s, t, question = notes[id(original)]
                context.distractors.append(
                    Distractor(kind, original.text[s:t], offset + s, key, question))
            for fact, _subject, obj in placed.facts:
                m = placed.mentions[obj]
                context.answerable.append(
                    Answerable(fact.relation, fact.subject, m.surface, m.start, placed.text))
            for entity, name, s, t in placed.values:
                context.answerable.append(
                    Answerable(name, entity, article.text[s:t], s, placed.text))
            offset += len(original.text) + 1
        return context

