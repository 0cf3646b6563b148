"""Articles of the demo encyclopedia: one per subject, plus city and news-like co-mention pages.

A subject's article opens with a lead sentence, then states every fact of the subject in varying
order, mixed with filler, links to other (mostly popular) entities and a distractor fact about
another entity, often a confusable neighbour. Popular subjects get longer articles (a biography
can span several passages); rare ones a few sentences. City pages list notable people born there
and organisations based there; news pages ("1987 in music") co-mention several entities drawn in
proportion to their hyperlink counts, so popular subjects appear in many passages and rare ones
only in their own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tasks.demo.popularity import quantile
from tasks.demo.prose import LINKER, Mention, Renderer, Sentence, SubjectRef, placeholders
from tasks.demo.rng import WeightedChooser, weighted_sample
from tasks.demo.world import Entity, Fact, World

_PRONOUN_PLACEHOLDERS = ("sposs", "pron", "poss")


@dataclass
class Article:
    """An article: ``text`` is its sentences joined by single spaces; spans are absolute."""

    title: str
    entity: str | None
    kind: str
    sentences: list[Sentence]
    text: str

    @staticmethod
    def assemble(title: str, entity: str | None, kind: str,
                 sentences: list[Sentence]) -> Article:
        """Join ``sentences`` and shift their spans to article offsets."""
        placed, offset = [], 0
        for sentence in sentences:
            placed.append(sentence.shifted(offset))
            offset += len(sentence.text) + 1
        return Article(title, entity, kind, placed, " ".join(s.text for s in sentences))


def _facts_by_relation(facts: list[Fact]) -> dict[str, Fact]:
    first: dict[str, Fact] = {}
    for fact in facts:
        first.setdefault(fact.relation, fact)
    return first


class ArticleWriter:
    """Writes all articles of a world."""

    def __init__(self, world: World, rng: random.Random):
        self.world = world
        self.rng = rng
        self.renderer = Renderer(world, rng)
        self.data = self.renderer.data
        subjects = world.subjects()
        self.total = len(subjects)
        self.popular = WeightedChooser(subjects, [float(e.count) for e in subjects])
        self.by_class = {cls: WeightedChooser(items, [float(e.count) for e in items])
                         for cls in ("person", "organisation", "work", "place")
                         if (items := [e for e in subjects if e.cls == cls])}
        self.by_kind = {kind: WeightedChooser(items, [float(e.count) for e in items])
                        for kind in sorted({e.kind for e in subjects})
                        if len(items := [e for e in subjects if e.kind == kind]) > 1}
        self.pointing: dict[str, list[Fact]] = {}
        for fact in world.facts:
            self.pointing.setdefault(fact.object, []).append(fact)
        self._plain: dict[tuple[str, str], list[str]] = {}
        self.confusable: dict[str, str] = {}
        for a, b in world.confusable.items():
            self.confusable.setdefault(a, b)
            self.confusable.setdefault(b, a)

    # -- subject articles ---------------------------------------------------------------------
    def lead_templates(self, e: Entity) -> list[str]:
        lead = self.data["lead"]
        if e.cls == "person":
            alive = "person+dead" if "death_year" in e.attrs else "person+alive"
            return [*lead.get(f"person/{e.attrs['role']}", []), *lead["person"], *lead[alive]]
        return list(lead.get(e.kind, []))

    def subject_article(self, e: Entity) -> Article:
        rng, render = self.rng, self.renderer
        facts = list(self.world.by_subject.get(e.id, []))
        first = _facts_by_relation(facts)
        ref = SubjectRef(e)
        options = [t for t in self.lead_templates(e) if render.usable(t, e, first)]
        lead_template = rng.choice(options)
        lead_relations = [arg for name, arg in placeholders(lead_template)
                          if name == "o" and arg]
        lead = render.render(lead_template, ref, {r: first[r] for r in lead_relations},
                             role="lead")
        covered = {id(first[r]) for r in lead_relations}
        remaining = [f for f in facts if id(f) not in covered]
        body: list[Sentence] = []
        for combo, combo_templates in self.data["multi"].items():
            relations = combo.split("+")
            chosen = {r: next((f for f in remaining if f.relation == r), None) for r in relations}
            if all(chosen.values()) and rng.random() < 0.35:
                bound = {r: f for r, f in chosen.items() if f is not None}
                usable = [t for t in combo_templates if render.usable(t, e, bound)]
                if usable:
                    body.append(render.render(rng.choice(usable), ref, bound))
                    remaining = [f for f in remaining if all(f is not g for g in bound.values())]
        for fact in remaining:
            body.append(self.fact_sentence(ref, fact))
        q = quantile(e.rank or self.total, self.total)
        fill_class = "band" if e.kind == "band" else e.cls
        n_fill = round(rng.random() * 1.2 + 6 * (1 - q) ** 3)
        fillers = rng.sample(self.data["filler"][fill_class],
                             min(n_fill, len(self.data["filler"][fill_class])))
        for template in fillers:
            body.append(render.render(template, ref, role="filler"))
        n_links = round(rng.random() * 0.7 + 4 * (1 - q) ** 4)
        linked = self.by_class.get("person" if e.cls == "place" else e.cls)
        for _ in range(n_links if linked is not None else 0):
            other = linked.choose(rng)
            if other.id != e.id:
                template = rng.choice(self.data["link"][e.cls])
                body.append(render.render(template, ref, extra=other, role="link"))
        distractor = self.distractor(e)
        if distractor is not None:
            body.append(distractor)
        rng.shuffle(body)
        return Article.assemble(e.label, e.id, "subject", [lead, *body])

    def fact_sentence(self, ref: SubjectRef, fact: Fact, plain: bool = False) -> Sentence:
        """A sentence stating ``fact`` about ``ref``'s entity."""
        e = ref.entity
        bound = {fact.relation: fact}
        templates = self.plain_templates(fact.relation, e) if plain \
            else self.renderer.fact_templates(fact.relation, e)
        options = [t for t in templates if self.renderer.usable(t, e, bound)]
        if not options:
            raise ValueError(f"no usable template for {fact} of {e.kind}")
        return self.renderer.render(self.rng.choice(options), ref, bound)

    def distractor(self, e: Entity) -> Sentence | None:
        """A true fact about another entity (a confusable neighbour when there is one)."""
        rng = self.rng
        other_id = self.confusable.get(e.id)
        if other_id is None and rng.random() > 0.6:
            return None
        if other_id is not None:
            other = self.world.entities[other_id]
        else:
            chooser = self.by_kind.get(e.kind) or self.by_class[e.cls]
            other = chooser.choose(rng)
            if other.id == e.id:
                return None
        own = {f.relation for f in self.world.by_subject.get(e.id, [])}
        candidates = [f for f in self.world.by_subject.get(other.id, [])
                      if self.has_plain_template(f, other)]
        if not candidates:
            return None
        same = [f for f in candidates if f.relation in own]
        fact = rng.choice(same or candidates)
        key = e.cls + ("/confusable" if other_id is not None else "")
        connectors = self.data["connectors"].get(key) or self.data["connectors"][e.cls]
        poss = "its" if e.cls != "person" else ("his" if e.gender == "m" else "her")
        connector = rng.choice(connectors).replace("{poss}", poss).replace(
            "{xkind}", self._kind(other))
        sentence = self.fact_sentence(SubjectRef(other, connector=connector), fact, plain=True)
        sentence.role = "distractor"
        return sentence

    def plain_templates(self, relation: str, e: Entity) -> list[str]:
        """Templates that open with the subject and use no pronoun of it."""
        key = (relation, e.kind)
        if key not in self._plain:
            self._plain[key] = [t for t in self.renderer.fact_templates(relation, e)
                                if t.startswith("{s} ") and t.count("{s}") == 1
                                and not any(p in t for p in _PRONOUN_PLACEHOLDERS)]
        return self._plain[key]

    def has_plain_template(self, fact: Fact, e: Entity) -> bool:
        bound = {fact.relation: fact}
        return any(self.renderer.usable(t, e, bound)
                   for t in self.plain_templates(fact.relation, e))

    @staticmethod
    def _kind(e: Entity) -> str:
        from tasks.demo.prose import kind_noun

        return kind_noun(e)

    # -- city pages ---------------------------------------------------------------------------
    def city_article(self, city: Entity, max_words: int) -> Article:
        """A page about a real city: population, notable people born there, organisations."""
        rng, render = self.rng, self.renderer
        ref = SubjectRef(city)
        city_data = self.data["city"]
        sentences = [render.render(rng.choice(city_data["lead"]).replace("{city}", "{S}"), ref,
                                   role="lead")]
        pointing = self.pointing.get(city.id, [])
        born = sorted(dict.fromkeys(f.subject for f in pointing if f.relation == "P19"),
                      key=lambda s: (-self.world.entities[s].count, s))[:4]
        if born:
            sentences.append(self._list_sentence(
                f"Notable people born in {city.label} include ", born, "P19", city))
        others = [f for f in pointing if f.relation in ("P159", "P740", "P276", "P131")]
        others.sort(key=lambda f: (-self.world.entities[f.subject].count, f.subject))
        for fact in others[:4]:
            subject = self.world.entities[fact.subject]
            sentences.append(self.fact_sentence(SubjectRef(subject), fact, plain=True))
        fillers = list(city_data["filler"])
        rng.shuffle(fillers)
        for template in fillers:
            sentences.append(render.render(template.replace("{city}", "{S}"), ref,
                                           role="filler"))
        return Article.assemble(city.label, city.id, "city", _cap(sentences, max_words))

    def _list_sentence(self, opening: str, subjects: list[str], relation: str,
                       obj: Entity) -> Sentence:
        """"Notable people born in Lyon include A, B and C." with one P19 fact per name."""
        text = opening
        sentence = Sentence("", role="list")
        city_start = opening.index(obj.label)
        sentence.mentions.append(Mention(city_start, city_start + len(obj.label), obj.id,
                                         obj.label, LINKER))
        for i, subject_id in enumerate(subjects):
            if i:
                text += " and " if i == len(subjects) - 1 else ", "
            label = self.world.label(subject_id)
            sentence.mentions.append(Mention(len(text), len(text) + len(label), subject_id, label,
                                             LINKER))
            fact = next(f for f in self.world.by_subject[subject_id]
                        if f.relation == relation and f.object == obj.id)
            sentence.facts.append((fact, len(sentence.mentions) - 1, 0))
            text += label
        sentence.text = text + "."
        return sentence

    # -- news pages ---------------------------------------------------------------------------
    def news_article(self, title: str, candidates: list[Entity], max_words: int) -> Article:
        """A co-mention page: short news items about entities drawn by hyperlink count."""
        rng, render = self.rng, self.renderer
        picked = weighted_sample(rng, candidates, [float(e.count) for e in candidates], 7)
        sentences: list[Sentence] = []
        news = self.data["news"]
        for entity in picked:
            if entity.cls == "person":
                group = {"musician": "musician", "athlete": "athlete"}.get(
                    entity.attrs["role"], "person")
            elif entity.kind == "band":
                group = "band"
            else:
                group = entity.cls
            ref = SubjectRef(entity, mentioned=True)
            sentences.append(render.render(rng.choice(news[group]), ref, extra=entity,
                                           role="news"))
            facts = [f for f in self.world.by_subject.get(entity.id, [])
                     if self.has_plain_template(f, entity)]
            if facts and rng.random() < 0.6:
                sentences.append(self.fact_sentence(ref, rng.choice(facts)))
        return Article.assemble(title, None, "news", _cap(sentences, max_words))


def _cap(sentences: list[Sentence], max_words: int) -> list[Sentence]:
    """The leading sentences that fit in ``max_words`` words (at least one)."""
    kept, words = [], 0
    for sentence in sentences:
        n = len(sentence.text.split(" "))
        if kept and words + n > max_words:
            break
        kept.append(sentence)
        words += n
    return kept
