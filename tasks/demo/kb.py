"""The knowledge base of the demo world: entities with ``Q`` ids and facts for the 24 relations.

Subjects (people, organisations, works, places) are generated; the objects they point at are
real (cities, countries, languages, occupations, genres, positions, record labels) or other
subjects (spouses, children, founders, authors, performers, manufacturers, regions). Facts are
consistent with each other: a band's country of origin is the country of the city it was formed
in, a book is written in the language of its author's country, a region's capital lies in the
region's country, a child shares a surname with a parent and is born after them.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tasks.config import DemoWorldConfig
from tasks.demo import inventories as inv
from tasks.demo.lexicon import lexicon
from tasks.demo.names import NameFactory, PersonName, tier_for
from tasks.demo.popularity import hyperlink_counts, quantile, subject_ranks
from tasks.demo.rng import WeightedChooser, stream

PERSON_ROLES = (("writer", 0.18), ("musician", 0.17), ("athlete", 0.15), ("artist", 0.12),
                ("entrepreneur", 0.10), ("politician", 0.09), ("scientist", 0.09),
                ("other", 0.10))
ORG_KINDS = (("company", 0.55), ("band", 0.30), ("institution", 0.15))
WORK_KINDS = (("book", 0.22), ("album", 0.14), ("song", 0.12), ("painting", 0.12),
              ("character", 0.06), ("game", 0.06), ("product", 0.20), ("film", 0.08))
PLACE_KINDS = (("region", 0.30), ("village", 0.30), ("building", 0.20), ("event", 0.20))
BOOK_FORMS = (("novel", 0.55), ("poetry collection", 0.15), ("short story collection", 0.12),
              ("play", 0.10), ("memoir", 0.08))
#: Wikidata-style "instance of" labels written to the entity-label file.
KIND_TYPES = {
    "person": "human", "company": "business", "band": "musical group", "album": "album",
    "song": "single", "painting": "painting", "character": "fictional character",
    "game": "video game", "product": "product model", "film": "film", "region": "province",
    "village": "village", "city": "city", "country": "country", "language": "language",
    "occupation": "occupation", "genre": "music genre", "position": "position",
    "label": "record label", "university": "university",
}
SUBJECT_CLASSES = ("person", "organisation", "work", "place")
_ID_RANGE = (100_000, 99_999_999)


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


class _Builder:
    """Builds a :class:`World` step by step; every step draws from its own stream."""

    def __init__(self, config: DemoWorldConfig):
        self.config = config
        self.world = World(config)
        self.lex = lexicon()
        self.names = NameFactory(stream(config.seed, "names"))
        self.ids_rng = stream(config.seed, "ids")
        self.used_ids: set[int] = set()
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
        if similar and kind in ("book", "album", "song", "film", "band", "game") \
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
        return entity

    def make_person(self, role: str, rank: int, tier: str, people: list[Entity]) -> Entity:
        rng = self.name_rng
        parent = spouse = confusable_of = None
        draw = rng.random()
        if len(people) >= 30 and draw < 0.18:
            candidates = [p for p in people if len(p.attrs.get("children", ())) < 3]
            parent = rng.choice(candidates) if candidates else None
        elif len(people) >= 30 and draw < 0.40:
            candidates = [p for p in people if "spouse" not in p.attrs]
            spouse = rng.choice(candidates) if candidates else None
        elif len(people) >= 30 and draw < 0.48:
            originals = [p for p in people[: len(people) // 2]
                         if p.id not in self.world.confusable]
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
        if parent is not None:
            attrs["parent"] = parent.id
            parent.attrs.setdefault("children", []).append(entity.id)
        if spouse is not None:
            attrs["spouse"] = spouse.id
            spouse.attrs["spouse"] = entity.id
        if confusable_of is not None:
            self.world.confusable[entity.id] = confusable_of.id
        if rng.random() < 0.5:
            entity.aliases.append(f"{name.first[0]}. {name.last}")
        return entity

    # -- people's facts -----------------------------------------------------------------------
    def attach_people(self, rng: random.Random) -> None:
        world = self.world
        occupations = inv.occupations()
        sports = inv.sports()
        genres = inv.music_genres()
        genre_pick = WeightedChooser(genres, [1.0 / (i + 2) for i in range(len(genres))])
        labels = inv.record_labels()
        label_pick = WeightedChooser(labels, [1.0 / (i + 3) for i in range(len(labels))])
        for person in self.people:  # creation order: parents and first spouses come first
            a = person.attrs
            birth = rng.randint(1870, 1998)
            if "parent" in a:
                parent = world.entities[a["parent"]]
                born_after = parent.attrs["birth_year"] + rng.randint(21, 40)
                if born_after <= 2005:
                    birth = born_after
                else:  # the parent is too young: only the surname is shared
                    parent.attrs["children"].remove(person.id)
                    del a["parent"]
            elif "spouse" in a and "birth_year" in world.entities[a["spouse"]].attrs:
                birth = min(2004, world.entities[a["spouse"]].attrs["birth_year"]
                            + rng.randint(-8, 8))
            a["birth_year"] = birth
            a["birth"] = f"{rng.randint(1, 28)} {rng.choice(self.lex['months'])} {birth}"
            dead_p = 1.0 if birth < 1932 else (0.35 if birth < 1960 else 0.04)
            if rng.random() < dead_p:
                death = min(2023, birth + rng.randint(48, 96))
                if death > birth + 20:
                    a["death_year"] = death
                    a["death"] = f"{rng.randint(1, 28)} {rng.choice(self.lex['months'])} {death}"
            home = a["home"]
            a["home_id"] = self.country(home)
            birthplace = self.pick_city(rng, home, abroad=0.05)
            world.add_fact(person.id, "P19", self.city(birthplace))
            a["birth_city"] = birthplace.name
            if "death_year" in a:
                world.add_fact(person.id, "P20", self.city(self.pick_city(rng, home, 0.3)))
            role = a["role"]
            if role == "athlete":
                sport = rng.choice(sorted(sports))
                a["sport"] = sport
                occupation = str(sports[sport]["player"])
                positions = list(sports[sport]["positions"])  # type: ignore[call-overload]
                position = self.simple("position", rng.choice(positions), f"position in {sport}")
                world.add_fact(person.id, "P413", position)
            else:
                occupation = rng.choice(occupations[role])
            a["occupation"] = occupation
            world.add_fact(person.id, "P106", self.simple("occupation", occupation, "occupation"))
            if rng.random() < {"athlete": 0.3, "other": 0.45}.get(role, 0.65):
                city = self.pick_city(rng, home, abroad=0.25)
                name = inv.university_name(city.name, role, rng.randrange(6))
                uni = self.obj("university", name, name, f"university in {city.name}")
                world.add_fact(person.id, "P69", uni, year=birth + rng.randint(18, 24))
            if role == "musician":
                world.add_fact(person.id, "P136", self.simple("genre", genre_pick.choose(rng),
                                                              "music genre"))
                if rng.random() < 0.8:
                    world.add_fact(person.id, "P264", self.simple("label", label_pick.choose(rng),
                                                                  "record label"))
        for person in self.people:
            a = person.attrs
            if "spouse" in a and person.id < a["spouse"]:
                other = world.entities[a["spouse"]]
                adult = max(a["birth_year"], other.attrs["birth_year"]) + 18
                year = min(2022, adult + rng.randint(2, 16))
                if year >= adult:
                    a["marriage_year"] = other.attrs["marriage_year"] = year
                    world.add_fact(person.id, "P26", other.id, year)
                    world.add_fact(other.id, "P26", person.id, year)
        for person in self.people:
            a = person.attrs
            if "parent" in a:
                parent = world.entities[a["parent"]]
                world.add_fact(parent.id, "P40", person.id)
                other_parent = parent.attrs.get("spouse")
                if other_parent and world.entities[other_parent].attrs.get(
                        "marriage_year", 9999) <= a["birth_year"]:
                    world.add_fact(other_parent, "P40", person.id)

    def person_pool(self, rng: random.Random, roles: tuple[str, ...]) -> WeightedChooser:
        """People of ``roles`` (all people when none), popular ones drawn more often."""
        pool = [p for p in self.people if p.attrs["role"] in roles] or self.people
        return WeightedChooser(pool, [1.0 / (p.rank or 1) ** 0.5 for p in pool])

    # -- places -------------------------------------------------------------------------------
    def attach_places(self, rng: random.Random, created: dict[str, list[Entity]]) -> None:
        world = self.world
        used_capitals: set[str] = set()
        for region in created.get("region", []):
            code = rng.choice(self.home_countries)
            region.attrs["population"] = rng.randint(40, 2400) * 1000
            national = self.countries[code].capital
            options = [c for c in self.by_country[code]
                       if c.name != national and c.key not in used_capitals]
            if not options:
                options = list(self.by_country[code])
            capital = rng.choice(options)
            used_capitals.add(capital.key)
            region.attrs["country"] = code
            world.add_fact(region.id, "P36", self.city(capital))
            world.add_fact(region.id, "P17", self.country(code))
        regions = created.get("region", [])
        for village in created.get("village", []):
            if regions:
                region = rng.choice(regions)
                code = region.attrs["country"]
                world.add_fact(village.id, "P131", region.id)
            else:
                code = rng.choice(self.home_countries)
                world.add_fact(village.id, "P131", self.city(self.pick_city(rng, code)))
            village.attrs["country"] = code
            village.attrs["population"] = rng.randint(180, 9000)
            world.add_fact(village.id, "P17", self.country(code))
        people = self.person_pool(rng, ("entrepreneur", "politician"))
        for building in created.get("building", []):
            city = self.pick_city(rng, rng.choice(self.home_countries), abroad=0.3)
            building.attrs["country"] = city.country
            building.attrs["inception"] = rng.randint(1200, 2015)
            world.add_fact(building.id, "P131", self.city(city))
            world.add_fact(building.id, "P17", self.country(city.country))
            if rng.random() < 0.5:
                building.attrs["owner_pending"] = True
        for event in created.get("event", []):
            city = self.pick_city(rng, rng.choice(self.home_countries), abroad=0.4)
            event.attrs["country"] = city.country
            event.attrs["inception"] = rng.randint(1950, 2018)
            world.add_fact(event.id, "P276", self.city(city))
            world.add_fact(event.id, "P17", self.country(city.country))
            if rng.random() < 0.3:
                founder = people.choose(rng)
                world.add_fact(event.id, "P112", founder.id, event.attrs["inception"])

    # -- organisations ------------------------------------------------------------------------
    def attach_organisations(self, rng: random.Random,
                             created: dict[str, list[Entity]]) -> None:
        world = self.world
        genres = inv.music_genres()
        labels = inv.record_labels()
        founders = self.person_pool(rng, ("entrepreneur",))
        musicians = self.person_pool(rng, ("musician",))
        anyone = self.person_pool(rng, ("politician", "writer", "scientist", "entrepreneur"))
        companies = created.get("company", [])
        for company in companies:
            founder = founders.choose(rng) if self.people and rng.random() < 0.85 else None
            home = founder.attrs["home"] if founder is not None and rng.random() < 0.8 \
                else rng.choice(self.home_countries)
            hq = self.pick_city(rng, home)
            if founder is not None:
                start = founder.attrs["birth_year"] + rng.randint(22, 50)
            else:
                start = rng.randint(1850, 2015)
            company.attrs.update(country=home, inception=min(start, 2020))
            if founder is not None:
                world.add_fact(company.id, "P112", founder.id, company.attrs["inception"])
            world.add_fact(company.id, "P159", self.city(hq))
            world.add_fact(company.id, "P17", self.country(home))
            if rng.random() < 0.5:
                world.add_fact(company.id, "P740", self.city(self.pick_city(rng, home)))
        for index, company in enumerate(companies):
            draw = rng.random()
            bigger = [c for c in companies[:index] if c.attrs["country"] == company.attrs[
                "country"]] or companies[:index]
            if bigger and draw < 0.35:
                parent = rng.choice(bigger)
                world.add_fact(company.id, "P127", parent.id, min(2022, max(
                    company.attrs["inception"], parent.attrs["inception"]) + rng.randint(1, 30)))
            elif self.people and draw < 0.55:
                world.add_fact(company.id, "P127", founders.choose(rng).id)
        for band in created.get("band", []):
            founder = musicians.choose(rng) if self.people and rng.random() < 0.5 else None
            home = founder.attrs["home"] if founder is not None else rng.choice(
                self.home_countries)
            city = self.pick_city(rng, home)
            start = (founder.attrs["birth_year"] + rng.randint(16, 30)) if founder \
                else rng.randint(1958, 2018)
            band.attrs.update(country=home, inception=min(start, 2020))
            genre = rng.choice(genres)
            band.attrs["genre"] = genre
            world.add_fact(band.id, "P136", self.simple("genre", genre, "music genre"))
            if rng.random() < 0.85:
                world.add_fact(band.id, "P264", self.simple("label", rng.choice(labels),
                                                            "record label"))
            world.add_fact(band.id, "P740", self.city(city))
            world.add_fact(band.id, "P495", self.country(home))
            if founder is not None:
                world.add_fact(band.id, "P112", founder.id, band.attrs["inception"])
        for inst in created.get("institution", []):
            home = rng.choice(self.home_countries)
            city = self.pick_city(rng, home)
            inst.attrs.update(country=home, inception=rng.randint(1780, 2010))
            world.add_fact(inst.id, "P159", self.city(city))
            world.add_fact(inst.id, "P17", self.country(home))
            formed = city if rng.random() < 0.7 else self.pick_city(rng, home)
            world.add_fact(inst.id, "P740", self.city(formed))
            if self.people and rng.random() < 0.6:
                world.add_fact(inst.id, "P112", anyone.choose(rng).id, inst.attrs["inception"])
            if companies and inst.attrs.get("kind_word") == "newspaper" and rng.random() < 0.7:
                world.add_fact(inst.id, "P127", rng.choice(companies).id)
        for building in created.get("building", []):
            if building.attrs.pop("owner_pending", False):
                if companies and rng.random() < 0.6:
                    world.add_fact(building.id, "P127", rng.choice(companies).id)
                elif self.people:
                    world.add_fact(building.id, "P127", founders.choose(rng).id)

    # -- works --------------------------------------------------------------------------------
    def attach_works(self, rng: random.Random, created: dict[str, list[Entity]]) -> None:
        world = self.world
        writers = self.person_pool(rng, ("writer",))
        artists = self.person_pool(rng, ("artist",))
        creators = self.person_pool(rng, ("writer", "artist"))
        musicians = self.person_pool(rng, ("musician",))
        bands = created.get("band", [])
        manufacturers = [c for c in created.get("company", []) if c.attrs.get("manufacturer")]
        genres = inv.music_genres()
        labels = inv.record_labels()

        def year_for(person: Entity | None, low: int = 20, high: int = 60) -> int:
            if person is None:
                return rng.randint(1900, 2020)
            a = person.attrs
            latest = min(2022, a.get("death_year", 2022))
            return max(a["birth_year"] + low, min(latest, a["birth_year"] + rng.randint(
                low, high)))

        def language_fact(work: Entity, code: str) -> None:
            language = self.language(code)
            if language is not None:
                world.add_fact(work.id, "P407", language)

        for book in created.get("book", []):
            if not self.people:
                break
            author = writers.choose(rng)
            book.attrs.update(year=year_for(author), creator=author.id)
            author.attrs.setdefault("works", []).append(book.id)
            world.add_fact(book.id, "P50", author.id)
            language_fact(book, author.attrs["home"])
            world.add_fact(book.id, "P495", self.country(author.attrs["home"]))
        for kind in ("album", "song"):
            for work in created.get(kind, []):
                use_band = bands and (not self.people or rng.random() < 0.5)
                performer = rng.choice(bands) if use_band else (
                    musicians.choose(rng) if self.people else None)
                if performer is None:
                    break
                home = performer.attrs.get("home") or performer.attrs.get("country")
                if performer.cls == "person":
                    year = year_for(performer, 18, 55)
                    if performer.attrs.get("death_year", 2023) > 1950:
                        year = max(year, 1950)
                else:
                    year = rng.randint(performer.attrs["inception"], 2022)
                work.attrs.update(year=year, creator=performer.id)
                performer.attrs.setdefault("works", []).append(work.id)
                world.add_fact(work.id, "P175", performer.id)
                genre_ids = world.objects(performer.id, "P136")
                if kind == "album" or rng.random() < 0.5:
                    if genre_ids and rng.random() < 0.8:
                        world.add_fact(work.id, "P136", genre_ids[0])
                    else:
                        world.add_fact(work.id, "P136", self.simple(
                            "genre", rng.choice(genres), "music genre"))
                if kind == "album" and rng.random() < 0.8:
                    label_ids = world.objects(performer.id, "P264")
                    world.add_fact(work.id, "P264", label_ids[0] if label_ids else self.simple(
                        "label", rng.choice(labels), "record label"))
                if rng.random() < (0.5 if kind == "album" else 0.7):
                    language_fact(work, home)
                if rng.random() < 0.6:
                    world.add_fact(work.id, "P495", self.country(home))
        designers = [p for p in self.people if p.attrs["role"] == "artist"
                     and p.attrs["birth_year"] >= 1935] or self.people
        game_designers = WeightedChooser(designers, [1.0 / (p.rank or 1) ** 0.5
                                                     for p in designers])
        for kind, pool in (("painting", artists), ("character", creators),
                           ("game", game_designers)):
            for work in created.get(kind, []):
                if not self.people:
                    break
                creator = pool.choose(rng)
                year = year_for(creator)
                if kind == "game" and creator.attrs.get("death_year", 2023) > 1975:
                    year = max(year, 1975)
                work.attrs.update(year=year, creator=creator.id)
                creator.attrs.setdefault("works", []).append(work.id)
                world.add_fact(work.id, "P170", creator.id)
                if kind == "painting":
                    city = self.pick_city(rng, creator.attrs["home"], abroad=0.4)
                    world.add_fact(work.id, "P276", self.city(city))
                else:
                    if rng.random() < 0.6:
                        world.add_fact(work.id, "P495", self.country(creator.attrs["home"]))
                    owners = [c for c in created.get("company", []) if not c.attrs.get(
                        "manufacturer")] or created.get("company", [])
                    if owners and rng.random() < 0.6:
                        world.add_fact(work.id, "P127", rng.choice(owners).id)
        for product in created.get("product", []):
            if not manufacturers:
                break
            maker = rng.choice(manufacturers)
            kinds = self.lex["product_kinds"].get(maker.attrs["industry"], ["machine"])
            product.attrs.update(product_kind=rng.choice(kinds), year=rng.randint(
                maker.attrs["inception"], 2022), creator=maker.id)
            product.type = product.attrs["product_kind"]
            maker.attrs.setdefault("works", []).append(product.id)
            world.add_fact(product.id, "P176", maker.id)
            if rng.random() < 0.7:
                world.add_fact(product.id, "P495", self.country(maker.attrs["country"]))
        for film in created.get("film", []):
            code = rng.choice(self.home_countries)
            film.attrs.update(year=rng.randint(1925, 2022), country=code)
            world.add_fact(film.id, "P495", self.country(code))
            language_fact(film, code)

    def attach_notable_works(self, rng: random.Random) -> None:
        for person in self.people:
            works = person.attrs.get("works", [])
            if works and rng.random() < 0.85:
                self.world.add_fact(person.id, "P800", rng.choice(works))

    # -- descriptions and counts --------------------------------------------------------------
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
