"""Gold NER and chunk sentences over the demo knowledge base, for the offline Flair taggers.

Gan & Ng (2019) label answers with Flair's OntoNotes NER model and chunk context sentences with
Flair's chunker. Both come from a model hub this machine cannot reach, so the demo trains small
Flair taggers instead, on sentences whose labels are known because we write them.

Every fact of the demo world (:func:`tasks.demo.kb.build_world`, the same seeded KB the demo
passages describe) is realised by one of a few hand-written templates per relation
(:func:`tasks.paraphrase.tagging_corpus.render_template`). A template marks its phrase chunks
with brackets and its entity slots with braces::

    [NP {s}] [VP was born] [PP in] [NP {o}] , [NP {o_country}] [PP on] [NP {birth}] .

- **NER** (OntoNotes classes): a slot's class comes from what fills it: the entity's kind in the
  KB (:data:`KIND_CLASSES`: people and fictional characters PERSON; companies, bands,
  institutions, record labels, universities ORG; books, albums, songs, paintings, films, games
  WORK_OF_ART; products PRODUCT; cities, countries, regions, villages GPE; buildings FAC; events
  EVENT; languages LANGUAGE), or the slot's meaning (years and dates DATE, counts CARDINAL,
  ordinals ORDINAL, nationality adjectives NORP). Occupations, genres and positions are not
  names: they stay ``O``. Template words are always ``O``.
- **Chunks** (CoNLL-2000 style, BIO): the brackets give the chunks; words outside brackets are
  ``O`` (noun phrases are split by the base-NP rules of :mod:`tasks.paraphrase.tagging_corpus`).

:func:`build_demo_tagging_corpus` writes the corpus; splits are by the subject entity (all
sentences about one subject go to one split), so held-out sentences name people, works and
organisations the tagger has not seen.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tasks.demo import inventories as inv
from tasks.demo.kb import build_world
from tasks.paraphrase.tagging_corpus import (
    AnnotatedSentence,
    render_template,
    split_by_group,
    template_slots,
    write_column_corpus,
)

#: OntoNotes class of a KB entity by its kind (``None``: not a name, tagged ``O``).
KIND_CLASSES: dict[str, str | None] = {
    "person": "PERSON", "character": "PERSON",
    "company": "ORG", "band": "ORG", "institution": "ORG", "label": "ORG", "university": "ORG",
    "book": "WORK_OF_ART", "album": "WORK_OF_ART", "song": "WORK_OF_ART",
    "painting": "WORK_OF_ART", "film": "WORK_OF_ART", "game": "WORK_OF_ART",
    "product": "PRODUCT",
    "city": "GPE", "country": "GPE", "region": "GPE", "village": "GPE",
    "building": "FAC", "event": "EVENT", "language": "LANGUAGE",
    "occupation": None, "genre": None, "position": None,
}

#: Nationality adjectives (NORP) of the countries the demo's people mostly come from.
DEMONYMS: dict[str, str] = {
    "AL": "Albanian", "AR": "Argentine", "AT": "Austrian", "AU": "Australian", "AZ": "Azerbaijani",
    "BE": "Belgian", "BR": "Brazilian", "CA": "Canadian", "CH": "Swiss", "CL": "Chilean",
    "CN": "Chinese", "CO": "Colombian", "CZ": "Czech", "DE": "German", "DK": "Danish",
    "EE": "Estonian", "ES": "Spanish", "FI": "Finnish", "FR": "French", "GB": "British",
    "GH": "Ghanaian", "GR": "Greek", "HR": "Croatian", "HU": "Hungarian", "ID": "Indonesian",
    "IE": "Irish", "IN": "Indian", "IS": "Icelandic", "IT": "Italian", "JP": "Japanese",
    "KE": "Kenyan", "LT": "Lithuanian", "LV": "Latvian", "MX": "Mexican", "NG": "Nigerian",
    "NL": "Dutch", "NO": "Norwegian", "NZ": "New Zealand", "PE": "Peruvian", "PH": "Filipino",
    "PL": "Polish", "PT": "Portuguese", "RO": "Romanian", "RU": "Russian", "SE": "Swedish",
    "SI": "Slovenian", "SK": "Slovak", "TR": "Turkish", "US": "American", "UZ": "Uzbek",
    "VN": "Vietnamese", "ZA": "South African", "EG": "Egyptian", "KR": "South Korean",
}

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                 "eleven", "twelve")

#: Templates per relation (``{s}`` subject, ``{o}`` object, other slots see :class:`_Slots`).
RELATION_TEMPLATES: dict[str, tuple[str, ...]] = {
    "P17": ("[NP {s}] [VP is] [NP a {s_type}] [PP in] [NP {o}] .",
            "[NP {s}] [VP is located] [PP in] [NP {o}] .",
            "[NP The {s_type}] [NP {s}] [VP was established] [PP in] [NP {o}] [PP in] "
            "[NP {s_year}] ."),
    "P19": ("[NP {s}] [VP was born] [PP in] [NP {o}] , [NP {o_country}] [PP on] [NP {birth}] .",
            "[NP {s}] , [NP a {s_demonym} {s_occ}] , [VP was born] [PP in] [NP {o}] [PP in] "
            "[NP {birth_year}] .",
            "[VP Born] [PP in] [NP {o}] [PP on] [NP {birth}] , [NP {s}] [VP grew up] [PP in] "
            "[NP {o_country}] ."),
    "P20": ("[NP {s}] [VP died] [PP in] [NP {o}] [PP on] [NP {death}] .",
            "[NP {s_pron}] [VP died] [PP in] [NP {o}] [PP in] [NP {death_year}] .",
            "[PP After] [NP a long career] [PP as] [NP a {s_occ}] , [NP {s}] [VP died] [PP in] "
            "[NP {o}] , [NP {o_country}] [PP in] [NP {death_year}] ."),
    "P26": ("[NP {s}] [VP married] [NP {o}] [PP in] [NP {year}] .",
            "[PP In] [NP {year}] , [NP {s}] [VP married] [NP the {o_occ}] [NP {o}] .",
            "[NP {s}] [VP was married] [PP to] [NP {o}] , [NP a {o_demonym} {o_occ}] ."),
    "P36": ("[NP The capital] [PP of] [NP {s}] [VP is] [NP {o}] .",
            "[NP {o}] [VP serves] [PP as] [NP the capital] [PP of] [NP {s}] , [NP a {s_type}] "
            "[PP of] [NP {s_country}] ."),
    "P40": ("[NP {s}] [VP had] [NP a child] , [NP {o}] , [VP born] [PP in] [NP {o_birth_year}] .",
            "[NP {o}] [VP is] [NP the child] [PP of] [NP {s}] ."),
    "P50": ("[NP {s}] [VP is] [NP a {s_year} {s_type}] [VP written] [PP by] [NP {o}] .",
            "[NP {o}] [VP wrote] [NP the {s_type}] [NP {s}] [PP in] [NP {s_year}] .",
            "[NP The {o_demonym} {o_occ}] [NP {o}] [VP published] [NP {s}] [PP in] "
            "[NP {s_year}] ."),
    "P69": ("[NP {s}] [VP studied] [PP at] [NP {o}] .",
            "[NP {s}] [VP graduated] [PP from] [NP {o}] [PP in] [NP {year}] .",
            "[PP After] [VP studying] [PP at] [NP {o}] , [NP {s}] [VP became] [NP a {s_occ}] ."),
    "P106": ("[NP {s}] [VP is] [NP a {s_demonym} {o}] .",
             "[NP {s}] [VP worked] [PP as] [NP a {o}] [PP in] [NP {s_country}] .",
             "[NP {s}] , [VP born] [NP {birth}] , [VP is] [NP a {o}] ."),
    "P112": ("[NP {s}] [VP was founded] [PP by] [NP {o}] [PP in] [NP {year}] .",
             "[PP In] [NP {year}] , [NP {o}] [VP founded] [NP {s}] .",
             "[NP {o}] , [NP the {o_occ}] , [VP founded] [NP the {s_type}] [NP {s}] ."),
    "P127": ("[NP {s}] [VP is owned] [PP by] [NP {o}] .",
             "[NP {o}] [VP acquired] [NP {s}] [PP in] [NP {year}] .",
             "[NP {s}] [VP has been] [NP a subsidiary] [PP of] [NP {o}] [PP since] [NP {year}] ."),
    "P131": ("[NP {s}] [VP is] [NP a {s_type}] [PP in] [NP {o}] .",
             "[NP {s}] [VP lies] [PP in] [NP {o}] , [NP {o_country}] .",
             "[NP The {s_type}] [PP of] [NP {s}] [VP has] [NP {population} inhabitants] ."),
    "P136": ("[NP {s}] [VP plays] [NP {o}] .",
             "[NP {s}] [VP is] [NP a {o} {s_type}] [PP from] [NP {s_country}] .",
             "[NP The music] [PP of] [NP {s}] [VP is described] [PP as] [NP {o}] ."),
    "P159": ("[NP {s}] [VP is headquartered] [PP in] [NP {o}] .",
             "[NP The headquarters] [PP of] [NP {s}] [VP are] [PP in] [NP {o}] , "
             "[NP {o_country}] ."),
    "P170": ("[NP {s}] [VP was created] [PP by] [NP {o}] [PP in] [NP {s_year}] .",
             "[NP {o}] [VP created] [NP the {s_type}] [NP {s}] ."),
    "P175": ("[NP {s}] [VP is] [NP a {s_type}] [PP by] [NP {o}] .",
             "[NP {o}] [VP released] [NP the {s_type}] [NP {s}] [PP in] [NP {s_year}] .",
             "[NP {s}] [VP is] [NP the {ordinal} {s_type}] [PP by] [NP {o}] ."),
    "P176": ("[NP The {s}] [VP is] [NP a {s_type}] [VP manufactured] [PP by] [NP {o}] .",
             "[NP {o}] [VP introduced] [NP the {s}] [PP in] [NP {s_year}] ."),
    "P264": ("[NP {s}] [VP signed] [PP with] [NP {o}] [PP in] [NP {year}] .",
             "[NP {s}] [VP was released] [PP by] [NP {o}] .",
             "[NP {s}] [VP recorded] [NP {count} albums] [PP for] [NP {o}] ."),
    "P276": ("[NP {s}] [VP is held] [PP in] [NP {o}] .",
             "[NP The {ordinal} {s}] [VP took] [NP place] [PP in] [NP {o}] [PP in] "
             "[NP {s_year}] ."),
    "P407": ("[NP {s}] [VP was written] [PP in] [NP {o}] .",
             "[NP The {o} version] [PP of] [NP {s}] [VP appeared] [PP in] [NP {s_year}] ."),
    "P413": ("[NP {s}] [VP plays] [PP as] [NP a {o}] .",
             "[NP The {s_demonym} {s_occ}] [NP {s}] [VP played] [PP as] [NP a {o}] [PP for] "
             "[NP {count} seasons] ."),
    "P495": ("[NP {s}] [VP is] [NP a {o_demonym} {s_type}] .",
             "[NP {s}] [VP comes] [PP from] [NP {o}] .",
             "[NP {s}] [VP was produced] [PP in] [NP {o}] [PP in] [NP {s_year}] ."),
    "P740": ("[NP {s}] [VP was formed] [PP in] [NP {o}] [PP in] [NP {s_year}] .",
             "[NP {s}] [VP formed] [PP in] [NP {o}] , [NP {o_country}] ."),
    "P800": ("[NP {s}] [VP is best known] [PP for] [NP {o}] .",
             "[NP {o}] [VP is] [NP the most famous work] [PP of] [NP {s}] ."),
}

#: Sentences about a subject alone, and the encyclopedic filler that surrounds facts (career,
#: reception, links to another subject ``{x}``): mostly words that are no names.
SUBJECT_TEMPLATES: dict[str, tuple[str, ...]] = {
    "person": ("[NP {s}] [VP has] [NP {count} children] .",
               "[PP In] [NP {s_year}] [NP {s_pron}] [VP moved] [PP to] [NP {s_country}] .",
               "[NP {s}] [VP began] [NP {poss} career] [PP in] [NP {decade}] .",
               "[NP Critics] [VP have often described] [NP {poss} style] [PP as] "
               "[ADJP restrained] .",
               "[NP {s}] [VP gave] [NP numerous interviews] [PP about] [NP {poss} working "
               "methods] .",
               "[NP {s}] [ADVP later] [VP taught] [PP at] [NP several summer schools] .",
               "[PP In] [NP {cyear}] , [NP {s}] [VP received] [NP a national award] [PP for] "
               "[NP {poss} work] .",
               "[NP {s}] [VP worked] [PP with] [NP {x}] [PP in] [NP {cyear}] .",
               "[NP {s_pron}] [VP spoke] [NP several languages] .",
               "[PP In] [NP {month_year}] , [NP {s_pron}] [VP received] [NP an honorary "
               "doctorate] ."),
    "organisation": ("[NP {s}] [VP was established] [PP in] [NP {s_year}] .",
                     "[NP {s}] [VP employs] [NP {big_count} people] .",
                     "[NP The {s_type}] [VP reported] [NP record profits] [PP in] [NP {cyear}] .",
                     "[NP {s}] [VP has partnered] [PP with] [NP {x}] .",
                     "[NP Its early years] [VP were] [ADJP difficult] .",
                     "[PP In] [NP {month_year}] , [NP {s}] [VP opened] [NP a new office] [PP in] "
                     "[NP {s_country}] .",
                     "[NP It] [VP operates] [ADVP mainly] [PP in] [NP {s_country}] .",
                     "[NP {s}] [VP opened] [NP a new office] [PP in] [NP {month}] .",
                     "[PP In] [NP {month}] , [NP {s}] [VP announced] [NP a new project] ."),
    "work": ("[NP {s}] [VP appeared] [PP in] [NP {s_year}] .",
             "[NP {s}] [VP is] [NP the {ordinal} {s_type}] [PP in] [NP the series] .",
             "[NP Critics] [VP praised] [NP its ambition] .",
             "[NP {s}] [VP has been compared] [PP to] [NP {x}] .",
             "[NP The {s_type}] [VP was completed] [PP over] [NP {duration}] .",
             "[NP It] [VP was released] [PP in] [NP {month_year}] ."),
    "place": ("[NP {s}] [VP is] [NP a {s_type}] .",
              "[NP {x}] [VP visited] [NP {s}] [PP in] [NP {cyear}] .",
              "[NP The {s_type}] [VP attracts] [NP many visitors] [NP {every}] .",
              "[NP It] [VP lies] [PP in] [NP {s_country}] ."),
}


@dataclass
class _Slots:
    """Slot values of one fact: ``name -> (text, OntoNotes class or None)``."""

    values: dict[str, tuple[str, str | None]] = field(default_factory=dict)

    def set(self, name: str, text: Any, label: str | None) -> None:
        if text is not None and (value := str(text)).strip():
            self.values[name] = (value, label)


def _entity_slots(slots: _Slots, prefix: str, world: Any, entity_id: str,
                  rng: random.Random) -> None:
    entity = world.entities[entity_id]
    a = entity.attrs
    slots.set(prefix, entity.label, KIND_CLASSES.get(entity.kind))
    if entity.is_subject and entity.type not in ("human",):
        slots.set(f"{prefix}_type", entity.type, None)
    if entity.gender is not None:
        slots.set(f"{prefix}_pron", "she" if entity.gender == "f" else "he", None)
    slots.set(f"{prefix}_occ", a.get("occupation"), None)
    home = a.get("home") or a.get("country")
    if entity.kind == "city":
        home = a.get("country")
    if home:
        country = inv.countries().get(home)
        if country is not None:
            slots.set(f"{prefix}_country", country.name, "GPE")
        slots.set(f"{prefix}_demonym", DEMONYMS.get(home), "NORP")
    slots.set(f"{prefix}_birth_year", a.get("birth_year"), "DATE")
    year = a.get("year") or a.get("inception") or a.get("birth_year")
    if year is None and entity.is_subject:
        year = rng.randint(1900, 2020)
    slots.set(f"{prefix}_year", year, "DATE")


def _fact_slots(world: Any, subject: str, obj: str | None, year: int | None,
                rng: random.Random, other: str | None = None) -> _Slots:
    slots = _Slots()
    _entity_slots(slots, "s", world, subject, rng)
    if obj is not None:
        _entity_slots(slots, "o", world, obj, rng)
        region_country = world.entities[obj].attrs.get("country")
        if "o_country" not in slots.values and region_country:
            country = inv.countries().get(region_country)
            if country is not None:
                slots.set("o_country", country.name, "GPE")
    a = world.entities[subject].attrs
    slots.set("birth", a.get("birth"), "DATE")
    slots.set("birth_year", a.get("birth_year"), "DATE")
    slots.set("death", a.get("death"), "DATE")
    slots.set("death_year", a.get("death_year"), "DATE")
    slots.set("year", year or a.get("year") or a.get("inception"), "DATE")
    slots.set("population", a.get("population") and f"{a['population']:,}", "CARDINAL")
    count = rng.choice(_NUMBER_WORDS) if rng.random() < 0.6 else str(rng.randint(2, 19))
    slots.set("count", count, "CARDINAL")
    slots.set("big_count", f"{rng.randint(12, 9000):,}", "CARDINAL")
    slots.set("ordinal", rng.choice(("first", "second", "third", "fourth", "fifth")), "ORDINAL")
    entity = world.entities[subject]
    slots.set("poss", {"f": "her", "m": "his"}.get(entity.gender or "", "its"), None)
    start = int(a.get("birth_year", 0) + 25 if entity.cls == "person"
                else a.get("year", a.get("inception", 0)) or 0) or rng.randint(1900, 2000)
    cyear = rng.randint(start, max(start, min(2022, a.get("death_year", 2022))))
    slots.set("cyear", cyear, "DATE")
    slots.set("decade", f"the {cyear // 10 * 10}s", "DATE")
    slots.set("month_year", f"{rng.choice(_MONTHS)} {cyear}", "DATE")
    slots.set("month", rng.choice(_MONTHS), "DATE")
    slots.set("duration", rng.choice(("several years", "two decades", "three years",
                                      "many months")), "DATE")
    slots.set("every", rng.choice(("every summer", "each year", "every spring")), "DATE")
    if other is not None:
        x = world.entities[other]
        slots.set("x", x.label, KIND_CLASSES.get(x.kind))
    return slots


@dataclass(frozen=True, slots=True)
class _Pending:
    """A sentence chosen but not rendered yet: its template, the values of that template's
    slots, and its group (the splits and the caps need only the group)."""

    template: str
    slots: dict[str, tuple[str, str | None]]
    group: str

    def render(self) -> AnnotatedSentence:
        sentence = render_template(self.template, self.slots, group=self.group)
        if sentence is None:  # pragma: no cover - chosen because every slot has a value
            raise AssertionError(f"{self.template!r} lacks a slot of {sorted(self.slots)}")
        return sentence


def _chosen(template: str, slots: dict[str, tuple[str, str | None]],
            group: str) -> _Pending | None:
    """The template with its slots' values, ``None`` where a slot has no value (where
    :func:`render_template` gives ``None``)."""
    names = template_slots(template)
    if not names <= slots.keys():
        return None
    return _Pending(template, {name: slots[name] for name in names}, group)


def _pending_sentences(world: Any, seed: int, per_fact: int,
                       per_subject: int) -> list[_Pending]:
    """The sentences of :func:`demo_sentences`, chosen by the same draws, not rendered."""
    rng = random.Random(seed)
    result: list[_Pending] = []
    for fact in world.facts:
        templates = RELATION_TEMPLATES.get(fact.relation, ())
        for _ in range(per_fact):
            slots = _fact_slots(world, fact.subject, fact.object, fact.year, rng).values
            for template in rng.sample(templates, len(templates)):
                pending = _chosen(template, slots, fact.subject)
                if pending is not None:
                    result.append(pending)
                    break
    subjects = world.subjects()
    by_class: dict[str, list[Any]] = {}
    for entity in subjects:
        by_class.setdefault(entity.cls, []).append(entity)
    for entity in subjects:
        templates = SUBJECT_TEMPLATES.get(entity.cls, ())
        for _ in range(per_subject if templates else 0):
            cls = "person" if entity.cls == "place" else entity.cls  # who visits a place
            other = rng.choice(by_class.get(cls, [])).id
            slots = _fact_slots(world, entity.id, None, None, rng, other).values
            pending = _chosen(rng.choice(templates), slots, entity.id)
            if pending is not None:
                result.append(pending)
    return result


def demo_sentences(world: Any, seed: int = 0, per_fact: int = 1,
                   per_subject: int = 2) -> list[AnnotatedSentence]:
    """Gold-annotated sentences realising the facts of a demo KB (``tasks.demo.world.World``).

    Each fact gets ``per_fact`` sentences from its relation's templates (those whose slots all
    have values), each subject ``per_subject`` sentences about itself; seeded by ``seed``.
    """
    return [pending.render() for pending in _pending_sentences(world, seed, per_fact,
                                                               per_subject)]


def build_demo_tagging_corpus(demo_config: Any, out_dir: str | Path, seed: int = 0,
                              per_fact: int = 1, per_subject: int = 2, dev_share: float = 0.1,
                              test_share: float = 0.15,
                              max_train: int | None = None, max_dev: int | None = None,
                              max_test: int | None = None) -> dict[str, Any]:
    """Gold NER/chunk corpus for the demo world of ``demo_config`` (a ``DemoWorldConfig``),
    written to ``out_dir`` as Flair column files; returns the manifest.

    ``max_train``, ``max_dev`` and ``max_test`` cap a split (a seeded sample of it) when it is
    larger: the splits are shares of a corpus that grows with the world, and a tagger that
    trains on a few hundred sentences need not have its dev set re-tagged after every epoch
    at the world's size (a split under its cap is kept as it is, in its order). Sentences are
    chosen (the same draws as :func:`demo_sentences`), split and sampled first and rendered
    after: demo-large's 242,076 chosen sentences become 46,500 written ones, and only those
    are rendered (24.0 / 25.6 s -> 19.6 / 20.0 s for its corpus, the same files).
    """
    world = build_world(demo_config)
    pending = _pending_sentences(world, seed=seed, per_fact=per_fact, per_subject=per_subject)
    splits = split_by_group(pending, dev_share, test_share, seed)
    sampled = []
    for name, cap in (("train", max_train), ("dev", max_dev), ("test", max_test)):
        if cap is not None and len(splits[name]) > cap:
            sampled.append(f"{name}: a seeded sample of {cap} of {len(splits[name])}")
            splits[name] = random.Random(seed).sample(splits[name], cap)
    return write_column_corpus(
        {name: [sentence.render() for sentence in split] for name, split in splits.items()},
        out_dir,
        description=f"gold labels from templates over the demo KB (seed {demo_config.seed}); "
                    "see tasks/demo/tagging_sentences.py"
                    + (f"; {', '.join(sampled)} sentences" if sampled else ""))
