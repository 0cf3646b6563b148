"""Names with a realistic long tail.

Popular subjects get common English-language names; mid-tail ones names from one of many Faker
locales (romanised, Latin script); the rarest are built from rare syllables, so that they split
into unusual word pieces as "Arve Furset" does. Organisations, works and characters mostly take
their distinctive words from the pooled surnames and given names of every locale
(:mod:`tasks.demo.name_pools`) or from rare syllables, so that few subjects share a name token
(the no-overlap sets need that); generic words ("Motors", "Portrait of") stay in a minority of
names. :meth:`NameFactory.confusable_person` and :meth:`NameFactory.confusable_title` derive a
near-identical name from an existing one (shared surname, one letter changed, plural title).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from tasks.demo.inventories import COMMON_LOCALES
from tasks.demo.lexicon import lexicon
from tasks.demo.name_pools import given_pool, surname_pool
from tasks.demo.names_locale import locale_names, usable_locales

TIERS = ("common", "locale", "rare")
_VOWELS = "aeiouy"


@dataclass(frozen=True)
class PersonName:
    """A person's name; ``locale`` is ``None`` for names built from rare syllables."""

    first: str
    last: str
    gender: str
    locale: str | None

    @property
    def full(self) -> str:
        """First name and surname."""
        return f"{self.first} {self.last}"


def tier_for(rng: random.Random, quantile: float) -> str:
    """Name tier of a subject at popularity ``quantile`` (0 = most popular, 1 = rarest)."""
    p_common = 0.75 * (1.0 - quantile) ** 2
    p_rare = 0.65 * quantile ** 1.5
    draw = rng.random()
    if draw < p_common:
        return "common"
    if draw < p_common + p_rare:
        return "rare"
    return "locale"


class NameFactory:
    """Draws unique labels of every kind of subject from one random stream."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.taken: set[str] = set()
        self.lex = lexicon()
        self.locales = usable_locales()

    # -- uniqueness ---------------------------------------------------------------------------
    def unique(self, make: Callable[[], str], attempts: int = 40) -> str:
        """A label from ``make`` that no other entity has; a roman numeral settles ties."""
        label = make()
        for _ in range(attempts):
            if label not in self.taken:
                break
            label = make()
        base, n = label, 2
        while label in self.taken:
            label = f"{base} {_roman(n)}"
            n += 1
        self.taken.add(label)
        return label

    def claim(self, label: str) -> bool:
        """Reserve ``label`` (a real object's name); False when it is already used."""
        if label in self.taken:
            return False
        self.taken.add(label)
        return True

    # -- words --------------------------------------------------------------------------------
    def rare_word(self, syllables: int | None = None) -> str:
        """A pronounceable word built from rare onsets, nuclei and codas ("Kvaelvik")."""
        parts = self.lex["rare_syllables"]
        count = syllables or self.rng.choice((2, 2, 2, 3))
        text = ""
        for index in range(count):
            onset = "" if index == 0 and self.rng.random() < 0.2 else self.rng.choice(
                parts["onsets"])
            coda = self.rng.choice(parts["codas"]) if index == count - 1 else ""
            text += onset + self.rng.choice(parts["nuclei"]) + coda
        return text[:1].upper() + text[1:]

    def locale_pick(self, common: bool = False) -> str:
        """A Faker locale: an English-language one for ``common``, else any usable one."""
        return self.rng.choice(COMMON_LOCALES if common else self.locales)

    def pooled_surname(self) -> str:
        """A surname from the pool of every locale (thousands of distinct tokens)."""
        return self.rng.choice(surname_pool())

    def given(self) -> str:
        """A given name from the pool of every locale."""
        return self.rng.choice(given_pool())

    def distinct_word(self, tier: str) -> str:
        """A token few other subjects share: a pooled surname, or a rare word for ``rare``."""
        return self.rare_word() if tier == "rare" else self.pooled_surname()

    def surname(self, tier: str) -> str:
        """A surname of the tier (used inside company, band and place names)."""
        if tier == "rare":
            return self.rare_word()
        names = locale_names(self.locale_pick(tier == "common"), 300 if tier == "common" else None)
        assert names is not None
        return self.rng.choice(names.last)

    # -- people -------------------------------------------------------------------------------
    def person(self, tier: str, gender: str | None = None, surname: str | None = None,
               locale: str | None = None) -> PersonName:
        """A unique person name of the tier; ``surname`` and ``locale`` may be imposed."""
        gender = gender or self.rng.choice("mf")
        if tier == "rare" and locale is None:
            def make_rare() -> str:
                return f"{self.rare_word()} {surname or self.rare_word()}"
            full = self.unique(make_rare)
            first, _, last = full.partition(" ")
            return PersonName(first, last, gender, None)
        if locale is None:
            locale = self.locale_pick(tier == "common")
        names = locale_names(locale, 150 if tier == "common" else None)
        if names is None:
            names = locale_names(locale)
        assert names is not None
        pool = names.male if gender == "m" else names.female
        # Popular people get common given names but any surname of their locale; one in ten of
        # the others has a surname from another locale (the long tail of name tokens).
        lasts = (locale_names(locale) or names).last if tier == "common" else names.last
        mixed = tier != "common" and self.rng.random() < 0.1

        def make() -> str:
            last = surname or (self.pooled_surname() if mixed else self.rng.choice(lasts))
            return f"{self.rng.choice(pool)} {last}"

        full = self.unique(make)
        first, _, last = full.partition(" ")
        return PersonName(first, last, gender, locale)

    def confusable_person(self, other: PersonName) -> PersonName:
        """A near-namesake of ``other``: shared surname, or one letter of the surname changed."""
        if self.rng.random() < 0.7:
            return self.person("locale" if other.locale else "rare", surname=other.last,
                               locale=other.locale)
        last = self.unique(lambda: f"{other.first} {_mutate(self.rng, other.last)}")
        return PersonName(other.first, last.partition(" ")[2], other.gender, other.locale)

    # -- organisations ------------------------------------------------------------------------
    def company(self, tier: str, manufacturer: bool) -> str:
        """A company name ("Northwind Motors", "Kowalski Holdings", "Vrokstad AS")."""
        suffixes = self.lex["company_suffixes"]["manufacturer" if manufacturer else "other"]

        def make() -> str:
            if tier == "common":
                return f"{self.rng.choice(self.lex['company_words'])} {self.rng.choice(suffixes)}"
            form = self.rng.random()
            if tier == "locale":
                if form < 0.4:
                    return f"{self.surname('locale')} {self.rng.choice(suffixes)}"
                if form < 0.7:
                    return f"{self.pooled_surname()} & {self.pooled_surname()}"
                return self.pooled_surname()
            if form < 0.35:
                return f"{self.rare_word()} {self.rng.choice(self.lex['company_suffixes']['rare'])}"
            return self.rare_word() if form < 0.75 else f"{self.rare_word()} {self.rare_word(2)}"

        return self.unique(make)

    def band(self, tier: str) -> str:
        """A band name ("The Restless Owls", "Kvaelmor")."""
        def make() -> str:
            if tier == "common":
                return (f"The {self.rng.choice(self.lex['title_adjectives'])} "
                        f"{self.rng.choice(self.lex['band_nouns'])}")
            if tier == "locale":
                if self.rng.random() < 0.5:
                    return f"{self.pooled_surname()} {self.rng.choice(('Quartet', 'Trio', 'Band'))}"
                return f"{self.given()} {self.pooled_surname()}"  # named like a person
            return self.rare_word(self.rng.choice((2, 3)))

        return self.unique(make)

    def institution(self, tier: str, kind_word: str) -> str:
        """A newspaper, foundation, museum... ("Northwind Gazette")."""
        def make() -> str:
            if tier == "common":
                head = self.rng.choice(self.lex["company_words"])
            else:
                head = self.surname(tier)
            return f"{head} {kind_word}"

        return self.unique(make)

    # -- works --------------------------------------------------------------------------------
    def title(self, tier: str) -> str:
        """A title for a book, album, song or film."""
        lex = self.lex

        def make() -> str:
            adj = self.rng.choice(lex["title_adjectives"])
            noun = self.rng.choice(lex["title_nouns"])
            abstract = self.rng.choice(lex["abstract_nouns"])
            if tier == "common":
                return self.rng.choice((f"The {adj} {noun}", f"{adj} {noun}",
                                        f"{noun} of {abstract}", f"The {noun} and the {abstract}"))
            if tier == "locale":
                surname = self.pooled_surname()
                return self.rng.choice((f"The {surname} {noun}", f"{surname}'s {noun}",
                                        f"{adj} {surname}", f"The {surname} Letters",
                                        f"{self.given()} {surname}"))
            rare = self.rare_word()
            return self.rng.choice((rare, f"The {rare} {noun}", f"{rare} {abstract}",
                                    f"{rare} {self.rare_word(2)}"))

        return self.unique(make)

    def painting(self, tier: str) -> str:
        """A painting's title ("Portrait of Ilse Brandt", "Still Life with Lantern")."""
        def make() -> str:
            noun = self.rng.choice(self.lex["title_nouns"])
            if tier == "common":
                return self.rng.choice((f"Still Life with {noun}", f"The {noun} at Dusk",
                                        f"Study of a {noun}"))
            form = self.rng.random()
            if form < 0.3:
                return f"Portrait of {self.person(tier).full}"
            if form < 0.65:
                return self.place_word(tier)  # a view named after a place ("Kvaelvikheim")
            return f"{self.given()} {self.distinct_word(tier)}"

        return self.unique(make)

    def character(self, tier: str) -> str:
        """A fictional character's name ("Captain Tlorn")."""
        def make() -> str:
            if tier == "common":
                return f"{self.rng.choice(('Captain', 'Doctor', 'Agent', 'Lady'))} " \
                       f"{self.rng.choice(self.lex['company_words'])}"
            form = self.rng.random()
            if form < 0.3:
                return f"{self.rng.choice(('Captain', 'Doctor', 'Agent', 'Lady', 'Sir'))} " \
                       f"{self.rare_word()}"
            if form < 0.65:
                return f"{self.given()} {self.distinct_word(tier)}"
            return self.rare_word(self.rng.choice((2, 3)))

        return self.unique(make)

    def game(self, tier: str) -> str:
        """A video game title ("Hollow Tide Quest", "Zhoarn: Iron Harbour")."""
        def make() -> str:
            adj, noun = self.rng.choice(self.lex["title_adjectives"]), self.rng.choice(
                self.lex["title_nouns"])
            if tier == "common":
                return self.rng.choice((f"{adj} {noun} Quest", f"{noun} Tactics",
                                        f"Legends of the {noun}"))
            form = self.rng.random()
            if form < 0.3:
                return f"{self.rare_word()}: {adj} {noun}"
            if form < 0.65:
                return self.rare_word(3)
            return f"{self.rare_word()} {self.distinct_word(tier)}"

        return self.unique(make)

    def product(self, tier: str) -> str:
        """A product model ("Orion X2", "Kvaelmo 340")."""
        def make() -> str:
            head = self.rng.choice(self.lex["company_words"]) if tier == "common" \
                else self.rare_word(2)
            model = self.rng.choice((f"{self.rng.randint(1, 9)}00", f"X{self.rng.randint(1, 9)}",
                                     f"Mark {_roman(self.rng.randint(2, 5))}",
                                     f"{self.rng.choice('ACGRST')}-{self.rng.randint(2, 99)}"))
            return f"{head} {model}"

        return self.unique(make)

    # -- places -------------------------------------------------------------------------------
    def place_word(self, tier: str) -> str:
        """A place-like word ("Ashby", "Novakovo", "Kvaelvik")."""
        suffix = self.rng.choice(self.lex["village_suffixes"])
        if tier == "common":
            return self.rng.choice(self.lex["place_prefixes_common"]) + suffix
        if tier == "locale":
            return self.surname("locale") + suffix
        return self.rare_word(2) + suffix

    def village(self, tier: str) -> str:
        """A village name."""
        return self.unique(lambda: self.place_word(tier))

    def region(self, tier: str) -> str:
        """A region name ("Ashton Province")."""
        return self.unique(lambda: f"{self.place_word(tier)} "
                                   f"{self.rng.choice(self.lex['region_kinds'])}")

    def named_thing(self, tier: str, kind_word: str) -> str:
        """A building or event ("Kvaelvik Tower", "Ashby Film Festival")."""
        return self.unique(lambda: f"{self.place_word(tier)} {kind_word}")

    # -- confusables --------------------------------------------------------------------------
    def confusable_title(self, label: str) -> str:
        """A near-identical title: plural, article added or dropped, a sequel number."""
        def make() -> str:
            choice = self.rng.randrange(4)
            if choice == 0 and not label.endswith("s"):
                return label + "s"
            if choice == 1:
                return label[4:] if label.startswith("The ") else f"The {label}"
            if choice == 2:
                return f"{label} {_roman(self.rng.randint(2, 3))}"
            return _mutate(self.rng, label)

        return self.unique(make)


def _roman(n: int) -> str:
    return {1: "I", 2: "II", 3: "III", 4: "IV", 5: "V", 6: "VI", 7: "VII", 8: "VIII", 9: "IX"}.get(
        n, str(n))


def _mutate(rng: random.Random, word: str) -> str:
    """``word`` with one vowel changed or doubled ("Furset" -> "Fursett", "Forset")."""
    positions = [i for i, ch in enumerate(word) if ch.lower() in _VOWELS and i > 0]
    if not positions:
        return word + "e"
    i = rng.choice(positions)
    if rng.random() < 0.5:
        replacement = rng.choice([v for v in "aeiou" if v != word[i].lower()])
        return word[:i] + replacement + word[i + 1:]
    return word[:i + 1] + word[i + 1:i + 2] + word[i + 1:] if i + 1 < len(word) else word + "e"
