"""The facts between the demo world's entities: the relations of people, places,
organisations and works (a mixin of the knowledge-base builder, :mod:`tasks.demo.kb`).

Facts are consistent with each other: a band's country of origin is the country of the city it
was formed in, a book is written in the language of its author's country, a region's capital
lies in the region's country, a child shares a surname with a parent and is born after them.
"""

from __future__ import annotations

import random
from typing import Any

from tasks.demo import inventories as inv
from tasks.demo.rng import WeightedChooser
from tasks.demo.world import Entity, World


class FactsMixin:
    """``attach_*`` steps of the builder: each adds the facts of one class of subjects.

    The builder provides the attributes and object constructors declared here.
    """

    world: World
    people: list[Entity]
    lex: dict[str, Any]
    countries: dict[str, inv.Country]
    by_country: dict[str, list[inv.City]]
    home_countries: list[str]

    def city(self, city: inv.City) -> str:  # pragma: no cover - provided by the builder
        raise NotImplementedError

    def country(self, code: str) -> str:  # pragma: no cover - provided by the builder
        raise NotImplementedError

    def language(self, code: str) -> str | None:  # pragma: no cover - provided by the builder
        raise NotImplementedError

    def obj(self, kind: str, key: str, label: str, description: str,
            aliases: tuple[str, ...] = (), **attrs: Any) -> str:  # pragma: no cover
        raise NotImplementedError

    def simple(self, kind: str, label: str, description: str) -> str:  # pragma: no cover
        raise NotImplementedError

    def pick_city(self, rng: random.Random, country: str | None,
                  abroad: float = 0.0) -> inv.City:  # pragma: no cover - provided by the builder
        raise NotImplementedError

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
        earlier_in_country: dict[str, list[Entity]] = {}  # companies[:index] by country
        for index, company in enumerate(companies):
            draw = rng.random()
            bigger = earlier_in_country.get(company.attrs["country"]) or companies[:index]
            if bigger and draw < 0.35:
                parent = rng.choice(bigger)
                world.add_fact(company.id, "P127", parent.id, min(2022, max(
                    company.attrs["inception"], parent.attrs["inception"]) + rng.randint(1, 30)))
            elif self.people and draw < 0.55:
                world.add_fact(company.id, "P127", founders.choose(rng).id)
            earlier_in_country.setdefault(company.attrs["country"], []).append(company)
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
        owners = [c for c in created.get("company", []) if not c.attrs.get(
            "manufacturer")] or created.get("company", [])
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
