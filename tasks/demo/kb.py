"""The knowledge base of the demo world: entities with ``Q`` ids and facts for the 24 relations.

Subjects (people, organisations, works, places) are generated; the objects they point at are
real (cities, countries, languages, occupations, genres, positions, record labels) or other
subjects (spouses, children, founders, authors, performers, manufacturers, regions). This
module creates the entities; their facts are attached by :mod:`tasks.demo.kb_facts`; the data
model is :mod:`tasks.demo.world`.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from tasks.config import DemoWorldConfig
from tasks.demo import inventories as inv
from tasks.demo.kb_facts import FactsMixin
from tasks.demo.lexicon import lexicon
from tasks.demo.names import NameFactory, PersonName, tier_for
from tasks.demo.popularity import hyperlink_counts, quantile, subject_ranks
from tasks.demo.rng import WeightedChooser, stream
from tasks.demo.world import SUBJECT_CLASSES, Entity, Fact, World

__all__ = ["SUBJECT_CLASSES", "Entity", "Fact", "World", "allocate", "build_world"]

PERSON_ROLES = (("writer", 0.17), ("musician", 0.17), ("athlete", 0.19), ("artist", 0.12),
                ("entrepreneur", 0.10), ("politician", 0.08), ("scientist", 0.08),
                ("other", 0.09))
ORG_KINDS = (("company", 0.60), ("band", 0.25), ("institution", 0.15))
WORK_KINDS = (("book", 0.21), ("album", 0.12), ("song", 0.10), ("painting", 0.15),
              ("character", 0.09), ("game", 0.09), ("product", 0.21), ("film", 0.03))
PLACE_KINDS = (("region", 0.40), ("village", 0.25), ("building", 0.15), ("event", 0.20))
BOOK_FORMS = (("novel", 0.55), ("poetry collection", 0.15), ("short story collection", 0.12),
              ("play", 0.10), ("memoir", 0.08))
#: Kinds of non-person subjects that get near-identical namesakes ("Vrokstad" / "Vrakstad").
CONFUSABLE_KINDS = ("book", "album", "song", "film", "band", "game", "company", "painting",
                    "character")
#: Wikidata-style "instance of" labels written to the entity-label file.
KIND_TYPES = {
    "person": "human", "company": "business", "band": "musical group", "album": "album",
    "song": "single", "painting": "painting", "character": "fictional character",
    "game": "video game", "product": "product model", "film": "film", "region": "province",
    "village": "village", "city": "city", "country": "country", "language": "language",
    "occupation": "occupation", "genre": "music genre", "position": "position",
    "label": "record label", "university": "university",
}
_ID_RANGE = (100_000, 99_999_999)


def allocate(total: int, shares: tuple[tuple[str, float], ...]) -> list[str]:
    """``total`` kinds in proportion to ``shares`` (largest remainder), each kind at least once
    when ``total`` allows it."""
    raw = [(kind, total * share) for kind, share in shares]
    counts = {kind: int(value) for kind, value in raw}
    if total >= len(shares):
        for kind in counts:
            counts[kind] = max(1, counts[kind])
    rest = total - sum(counts.values())
    by_remainder = sorted(raw, key=lambda item: -(item[1] - int(item[1])))
    i = 0
    while rest > 0:
        counts[by_remainder[i % len(by_remainder)][0]] += 1
        rest -= 1
        i += 1
    while rest < 0:
        kind = max(counts, key=lambda k: counts[k])
        counts[kind] -= 1
        rest += 1
    return [kind for kind, _ in shares for _ in range(counts[kind])]


def _remove_same(items: list[Entity], entity: Entity) -> None:
    """Remove ``entity`` itself from ``items``: what ``list.remove`` does here (no two entities
    are equal), without comparing every entity before it field by field (the dataclass
    ``__eq__``: 6 s of the demo-large world's ~80 s)."""
    index = next((i for i, item in enumerate(items) if item is entity), None)
    if index is None:
        raise ValueError(f"entity {entity.id} is not in the list")
    del items[index]


class _Builder(FactsMixin):
    """Builds a :class:`World` step by step; every step draws from its own stream."""

    def __init__(self, config: DemoWorldConfig):
        self.config = config
        self.world = World(config)
        self.lex = lexicon()
        self.names = NameFactory(stream(config.seed, "names"))
        self.ids_rng = stream(config.seed, "ids")
        self.used_ids: set[int] = set()
        # The people who may still get a child / a spouse, in creation order: what
        # ``make_person`` draws from (a scan of every person per draw was quadratic).
        self.may_parent: list[Entity] = []
        self.may_marry: list[Entity] = []
        # The people of the first half of those made so far who are no namesakes: what a
        # namesake is drawn from, kept up to date (a filter of that half per draw was quadratic).
        self.originals: list[Entity] = []
        self.originals_seen = 0
        self.object_keys: dict[tuple[str, str], str] = {}
        self.countries = inv.countries()
        self.by_country = inv.cities_by_country()
        self.home_countries = [code for code, items in self.by_country.items()
                               if len(items) >= 3 and code in self.countries]
        for city in inv.cities():
            self.names.claim(city.name)
        for country in self.countries.values():
            self.names.claim(country.name)
        for name in (*inv.music_genres(), *inv.record_labels()):
            self.names.claim(name)

    # -- ids and objects ----------------------------------------------------------------------
    def new_id(self) -> str:
        while True:
            number = self.ids_rng.randint(*_ID_RANGE)
            if number not in self.used_ids:
                self.used_ids.add(number)
                return f"Q{number}"

    def add_entity(self, **fields: Any) -> Entity:
        entity = Entity(id=self.new_id(), **fields)
        self.world.entities[entity.id] = entity
        return entity

    def obj(self, kind: str, key: str, label: str, description: str,
            aliases: tuple[str, ...] = (), **attrs: Any) -> str:
        """The id of a real object, created the first time it is referenced."""
        existing = self.object_keys.get((kind, key))
        if existing is not None:
            return existing
        entity = self.add_entity(label=label, cls="object", kind=kind, type=KIND_TYPES[kind],
                                 description=description, aliases=list(aliases), attrs=attrs)
        self.object_keys[(kind, key)] = entity.id
        return entity.id

    def city(self, city: inv.City) -> str:
        country = self.countries[city.country]
        return self.obj("city", city.key, city.name, f"city in {country.name}",
                        inv.city_aliases(city),
                        population=city.population, country=city.country,
                        home_id=self.country(city.country))

    def country(self, code: str) -> str:
        country = self.countries[code]
        aliases = (country.official_name,) if country.official_name and \
            country.official_name != country.name else ()
        continent = _CONTINENTS.get(country.continent, "the world")
        return self.obj("country", code, country.name, f"country in {continent}", aliases,
                        code=code)

    def language(self, code: str) -> str | None:
        name = self.countries[code].language
        if not name:
            return None
        return self.obj("language", name, name, "language", ())

    def simple(self, kind: str, label: str, description: str) -> str:
        return self.obj(kind, label, label, description)

    def pick_city(self, rng: random.Random, country: str | None, abroad: float = 0.0) -> inv.City:
        """A city of ``country`` (weighted by population ** 0.5), or a big city abroad."""
        if country is None or country not in self.by_country or rng.random() < abroad:
            pool = inv.world_cities()
        else:
            pool = self.by_country[country]
        return WeightedChooser(pool, [c.population ** 0.5 for c in pool]).choose(rng)

    # -- subjects -----------------------------------------------------------------------------
    def build(self) -> World:
        cfg = self.config
        slots: list[tuple[str, str]] = []
        for cls, total, shares in (("person", cfg.n_people, PERSON_ROLES),
                                   ("organisation", cfg.n_organisations, ORG_KINDS),
                                   ("work", cfg.n_works, WORK_KINDS),
                                   ("place", cfg.n_places, PLACE_KINDS)):
            slots.extend((cls, kind) for kind in allocate(total, shares))
        keys = [f"{cls}:{kind}:{i}" for i, (cls, kind) in enumerate(slots)]
        ranks = subject_ranks(stream(cfg.seed, "popularity"), keys)
        ordered = sorted(range(len(slots)), key=lambda i: ranks[keys[i]])
        self.total = len(slots)
        self.name_rng = stream(cfg.seed, "name-tiers")
        # Entities are created in popularity order so confusables derive from popular ones.
        created: dict[str, list[Entity]] = {}
        for i in ordered:
            cls, kind = slots[i]
            entity = self.make_subject(cls, kind, ranks[keys[i]], created)
            created.setdefault(kind if cls != "person" else "person", []).append(entity)
        self.people = created.get("person", [])
        self.attach_people(stream(cfg.seed, "people"))
        self.attach_places(stream(cfg.seed, "places"), created)
        self.attach_organisations(stream(cfg.seed, "organisations"), created)
        self.attach_works(stream(cfg.seed, "works"), created)
        self.attach_notable_works(stream(cfg.seed, "notable"))
        self.describe()
        self.count_links()
        return self.world

    def make_subject(self, cls: str, kind: str, rank: int,
                     created: dict[str, list[Entity]]) -> Entity:
        rng = self.name_rng
        q = quantile(rank, self.total)
        tier = tier_for(rng, q)
        lex = self.lex
        attrs: dict[str, Any] = {"tier": tier}
        if cls == "person":
            return self.make_person(kind, rank, tier, created.get("person", []))
        similar = created.get(kind, [])
        label: str
        type_ = KIND_TYPES.get(kind, kind)
        confusable_of = None
        if similar and kind in CONFUSABLE_KINDS \
                and rng.random() < 0.10:
            confusable_of = rng.choice(similar[: max(1, len(similar) // 2)])
            label = self.names.confusable_title(confusable_of.label)
        elif kind == "company":
            attrs["manufacturer"] = not created.get("company") or rng.random() < 0.35
            group = "manufacturer" if attrs["manufacturer"] else "other"
            attrs["industry"] = rng.choice(lex["industries"][group])
            label = self.names.company(tier, attrs["manufacturer"])
        elif kind == "band":
            label = self.names.band(tier)
        elif kind == "institution":
            word, type_ = rng.choice(lex["institution_kinds"])
            attrs["kind_word"] = type_
            label = self.names.institution(tier, word)
        elif kind in ("book", "album", "song", "film"):
            label = self.names.title(tier)
            if kind == "book":
                type_ = WeightedChooser([f for f, _ in BOOK_FORMS],
                                        [w for _, w in BOOK_FORMS]).choose(rng)
        elif kind == "painting":
            label = self.names.painting(tier)
        elif kind == "character":
            label = self.names.character(tier)
        elif kind == "game":
            label = self.names.game(tier)
        elif kind == "product":
            label = self.names.product(tier)
        elif kind == "region":
            label = self.names.region(tier)
            type_ = label.rsplit(" ", 1)[1].lower()
        elif kind == "village":
            label = self.names.village(tier)
        elif kind == "building":
            word, type_ = rng.choice(lex["building_kinds"])
            label = self.names.named_thing(tier, word)
        elif kind == "event":
            word, type_ = rng.choice(lex["event_kinds"])
            label = self.names.named_thing(tier, word)
        else:  # pragma: no cover - kinds are fixed above
            raise ValueError(kind)
        entity = self.add_entity(label=label, cls=cls, kind=kind, type=type_, rank=rank,
                                 attrs=attrs)
        if confusable_of is not None:
            self.world.confusable[entity.id] = confusable_of.id
            entity.attrs["kind_word"] = confusable_of.attrs.get("kind_word")
            for key in ("manufacturer", "industry"):  # a namesake company in the same trade
                if key in confusable_of.attrs:
                    entity.attrs[key] = confusable_of.attrs[key]
        return entity

    def originals_among(self, people: list[Entity]) -> list[Entity]:
        """The people of ``people[: len(people) // 2]`` that are not namesakes, in order.

        ``people`` only grows (by appending), and whether a person is a namesake is settled when
        it is made, so the list is extended to the new half rather than filtered again.
        """
        half = len(people) // 2
        self.originals.extend(p for p in people[self.originals_seen:half]
                              if p.id not in self.world.confusable)
        self.originals_seen = half
        return self.originals

    def make_person(self, role: str, rank: int, tier: str, people: list[Entity]) -> Entity:
        rng = self.name_rng
        parent = spouse = confusable_of = None
        draw = rng.random()
        if len(people) >= 30 and draw < 0.26:
            parent = rng.choice(self.may_parent) if self.may_parent else None
        elif len(people) >= 30 and draw < 0.46:
            spouse = rng.choice(self.may_marry) if self.may_marry else None
        elif len(people) >= 30 and draw < 0.54:
            originals = self.originals_among(people)
            confusable_of = rng.choice(originals) if originals else None
        gender = None
        if spouse is not None:
            gender = "f" if spouse.gender == "m" else "m"
        name: PersonName
        if parent is not None:
            name = self.names.person("locale" if parent.attrs["locale"] else "rare",
                                     surname=parent.short, locale=parent.attrs["locale"])
        elif spouse is not None and rng.random() < 0.4:
            name = self.names.person("locale" if spouse.attrs["locale"] else "rare",
                                     gender=gender, surname=spouse.short,
                                     locale=spouse.attrs["locale"])
        elif spouse is not None:
            name = self.names.person(tier, gender=gender, locale=spouse.attrs["locale"]
                                     if spouse.attrs["locale"] and tier != "rare" else None)
        elif confusable_of is not None:
            name = self.names.confusable_person(PersonName(
                confusable_of.attrs["first"], confusable_of.short or "", confusable_of.gender
                or "m", confusable_of.attrs["locale"]))
        else:
            name = self.names.person(tier)
        if parent is not None:
            home = parent.attrs["home"]
        elif spouse is not None and rng.random() < 0.7:
            home = spouse.attrs["home"]
        elif name.locale and inv.LOCALE_COUNTRIES.get(name.locale) in self.by_country:
            home = inv.LOCALE_COUNTRIES[name.locale]
        else:
            home = rng.choice(self.home_countries)
        attrs: dict[str, Any] = {"tier": tier, "role": role, "locale": name.locale,
                                 "first": name.first, "home": home}
        entity = self.add_entity(label=name.full, cls="person", kind="person", type="human",
                                 gender=name.gender, short=name.last, rank=rank, attrs=attrs)
        self.may_parent.append(entity)
        if parent is not None:
            attrs["parent"] = parent.id
            parent.attrs.setdefault("children", []).append(entity.id)
            if len(parent.attrs["children"]) >= 3:
                _remove_same(self.may_parent, parent)
        if spouse is not None:
            attrs["spouse"] = spouse.id
            spouse.attrs["spouse"] = entity.id
            _remove_same(self.may_marry, spouse)
        else:
            self.may_marry.append(entity)
        if confusable_of is not None:
            self.world.confusable[entity.id] = confusable_of.id
        if rng.random() < 0.5:
            entity.aliases.append(f"{name.first[0]}. {name.last}")
        return entity

    def describe(self) -> None:
        world = self.world
        for entity in world.entities.values():
            if not entity.is_subject:
                continue
            a = entity.attrs
            if entity.cls == "person":
                country = self.countries[a["home"]].name
                life = f"{a['birth_year']}–{a['death_year']}" if "death_year" in a \
                    else f"born {a['birth_year']}"
                entity.description = f"{a['occupation']} from {country} ({life})"
            elif entity.kind in ("company", "band", "institution"):
                what = {"company": f"{a.get('industry', '')} company",
                        "band": f"{a.get('genre', '')} band"}.get(entity.kind, entity.type)
                entity.description = f"{what} from {self.countries[a['country']].name}".strip()
            elif entity.cls == "work":
                creator = a.get("creator")
                by = f" by {world.label(creator)}" if creator else ""
                entity.description = f"{a.get('year', '')} {entity.type}{by}".strip()
            else:
                country = a.get("country")
                where = f" in {self.countries[country].name}" if country else ""
                entity.description = f"{entity.type}{where}"

    def count_links(self) -> None:
        world = self.world
        indegree: Counter[str] = Counter({e.id: 0 for e in world.entities.values()
                                          if not e.is_subject})
        indegree.update(f.object for f in world.facts if not world.entities[f.object].is_subject)
        ranks = {e.id: e.rank for e in world.entities.values() if e.rank is not None}
        counts = hyperlink_counts(ranks, indegree, self.config.max_hyperlinks,
                                  self.config.zipf_exponent)
        for entity in world.entities.values():
            entity.count = counts.get(entity.id, 1)


_CONTINENTS = {"AF": "Africa", "AS": "Asia", "EU": "Europe", "NA": "North America",
               "OC": "Oceania", "SA": "South America", "AN": "Antarctica"}


MINIMUM_SIZES = {"n_people": len(PERSON_ROLES), "n_organisations": len(ORG_KINDS),
                 "n_works": len(WORK_KINDS), "n_places": len(PLACE_KINDS)}


def build_world(config: DemoWorldConfig) -> World:
    """The knowledge base of the demo world for ``config`` (deterministic in its seed).

    Raises ``ValueError`` when a size is too small to hold one subject of every kind (then some
    relation would have no facts).
    """
    small = {k: getattr(config, k) for k, n in MINIMUM_SIZES.items() if getattr(config, k) < n}
    if small:
        raise ValueError(f"demo_world sizes too small for one subject of every kind: {small} "
                         f"(minimum {MINIMUM_SIZES})")
    return _Builder(config).build()
