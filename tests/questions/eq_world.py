"""A small hand-built world in the real formats for the EntityQuestions construction tests.

(Helpers for ``conftest.py`` and the tests; a module name of its own so it imports cleanly.)

People (born in / died in / occupation), companies (headquarters, founder) and works (creator,
author) with Zipf-like hyperlink counts, T-REx documents that state the facts (with repeated
triples and a second birthplace for some people), DPR passages, NQ-style training questions
with gold passages and a truth file of the entities each question is about.
"""

from __future__ import annotations

import random
from pathlib import Path

from tasks.config import Params
from tasks.io.dpr import DprCtx, DprExample, write_dpr_examples
from tasks.io.entity_labels import EntityLabel, write_entity_labels
from tasks.io.hyperlinks import write_hyperlink_counts
from tasks.io.linking import LinkedQuestion, write_linked_questions
from tasks.io.passages import Passage, write_passages
from tasks.io.trex_write import write_trex_documents
from tasks.params_loading import resolve_params

ENTITY = "http://www.wikidata.org/entity/"
PROP = "http://www.wikidata.org/prop/direct/"
RELATIONS = ["P19", "P20", "P106", "P159", "P112", "P170", "P50"]

FIRST = ["Anna", "Boris", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas",
         "Kaito", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tala"]
LAST = ["Albrecht", "Banerjee", "Castellanos", "Dubois", "Eriksen", "Fujimoto", "Gallagher",
        "Haddad", "Ivanova", "Jovanovic", "Kowalski", "Lindqvist", "Moreau", "Nakamura",
        "Okafor", "Petrov", "Quispe", "Rinaldi", "Sato", "Takahashi", "Urquhart", "Varga",
        "Weiss", "Xu", "Yilmaz", "Zapata", "Brandt", "Costa", "Duarte", "Engel"]
CITIES = ["Lisbon", "Porto", "Krakow", "Gdansk", "Lyon", "Nantes", "Osaka", "Kyoto", "Lagos",
          "Accra", "Quito", "Lima", "Turin", "Bologna", "Graz", "Linz", "Aarhus", "Malmo",
          "Izmir", "Bursa"]
JOBS = ["painter", "chemist", "novelist", "architect", "drummer", "surgeon", "poet",
        "economist"]
COMPANY = ["Dynamics", "Foods", "Motors", "Labs", "Textiles", "Shipping", "Optics", "Records"]
WORK = ["Sonata", "Portrait", "Chronicle", "Garden", "Voyage", "Lantern", "Mirror", "Harbor"]


def _doc(qid: str, title: str, sentences: list[tuple[str, list[tuple[str, str, str, str]]]]):
    """A T-REx document: sentences with (relation, object id, object surface, subject surface).

    Each sentence text must contain the subject and object surface forms.
    """
    text = ""
    triples, entities = [], []
    bounds = []
    for sentence_id, (sentence, facts) in enumerate(sentences):
        start = len(text) + (1 if text else 0)
        text = f"{text} {sentence}" if text else sentence
        bounds.append([start, len(text)])
        for relation, object_id, object_form, subject_form in facts:
            s0 = start + sentence.index(subject_form)
            o0 = start + sentence.index(object_form)
            subject = {"boundaries": [s0, s0 + len(subject_form)], "surfaceform": subject_form,
                       "uri": ENTITY + qid, "annotator": "Me"}
            obj = {"boundaries": [o0, o0 + len(object_form)], "surfaceform": object_form,
                   "uri": ENTITY + object_id, "annotator": "Wikidata_Spotlight_Entity_Linker"}
            entities += [subject, obj]
            triples.append({"sentence_id": sentence_id, "subject": subject,
                            "predicate": {"boundaries": None, "surfaceform": None,
                                          "uri": PROP + relation, "annotator": "Simple-Aligner"},
                            "object": obj, "dependency_path": None, "confidence": 1.0,
                            "annotator": "SPOAligner"})
    words, pos = [], 0
    for word in text.split(" "):
        words.append([pos, pos + len(word)])
        pos += len(word) + 1
    return {"docid": qid, "uri": ENTITY + qid, "title": title, "text": text,
            "words_boundaries": words, "sentences_boundaries": bounds, "entities": entities,
            "triples": triples}


def build_world(root: Path, seed: int = 0, n_people: int = 260) -> dict:
    """Write the world under ``root`` (the raw layout of params.sources); return its truth."""
    rng = random.Random(seed)
    labels: list[EntityLabel] = []
    cities = {f"Q{1000 + i}": name for i, name in enumerate(CITIES)}
    jobs = {f"Q{2000 + i}": name for i, name in enumerate(JOBS)}
    for qid, name in cities.items():
        labels.append(EntityLabel(qid, name, (f"City of {name}",), "city"))
    for qid, name in jobs.items():
        labels.append(EntityLabel(qid, name, (), "occupation"))
    names = sorted({f"{a} {b}" for a in FIRST for b in LAST})
    rng.shuffle(names)
    people = {f"Q{10000 + i}": names[i] for i in range(n_people)}
    companies = {f"Q{20000 + i}": f"{LAST[i % len(LAST)]} {COMPANY[i % len(COMPANY)]}"
                 + (f" {i // 64 + 1}" if i >= 64 else "") for i in range(90)}
    works = {f"Q{30000 + i}": f"The {rng.choice(CITIES)} {WORK[i % len(WORK)]}"
             f"{'' if i < 8 else ' ' + str(i)}" for i in range(90)}
    docs, passages, facts = [], [], {}
    for qid, name in people.items():
        first = name.split()[0]
        labels.append(EntityLabel(qid, name, (first + " " + name.split()[1][0] + ".",), "human"))
        born, job = rng.choice(list(cities)), rng.choice(list(jobs))
        sentences = [(f"{name} was born in {cities[born]}.",
                      [("P19", born, cities[born], name)]),
                     (f"{name} worked as a {jobs[job]}.", [("P106", job, jobs[job], name)])]
        facts[(qid, "P19")] = [born]
        if rng.random() < 0.5:
            died = rng.choice(list(cities))
            sentences.append((f"{name} died in {cities[died]}.",
                              [("P20", died, cities[died], name)]))
        if rng.random() < 0.1:  # a second birthplace claim, and a repeated triple
            other = rng.choice([c for c in cities if c != born])
            sentences.append((f"Some say {name} was born in {cities[other]}.",
                              [("P19", other, cities[other], name)]))
            sentences.append((f"Again, {name} was born in {cities[born]}.",
                              [("P19", born, cities[born], name)]))
            facts[(qid, "P19")].append(other)
        docs.append(_doc(qid, name, sentences))
        passages.append(Passage(str(len(passages) + 1),
                                " ".join(s for s, _ in sentences), name))
    people_ids = list(people)
    for qid, name in companies.items():
        labels.append(EntityLabel(qid, name, (), "business"))
        hq, founder = rng.choice(list(cities)), rng.choice(people_ids)
        docs.append(_doc(qid, name, [
            (f"{name} has its headquarters in {cities[hq]}.", [("P159", hq, cities[hq], name)]),
            (f"{name} was founded by {people[founder]}.",
             [("P112", founder, people[founder], name)])]))
        passages.append(Passage(str(len(passages) + 1),
                                f"{name} is based in {cities[hq]}. It was founded by "
                                f"{people[founder]}.", name))
    for qid, name in works.items():
        labels.append(EntityLabel(qid, name, (), "work"))
        creator = rng.choice(people_ids)
        relation = "P170" if int(qid[1:]) % 2 else "P50"
        docs.append(_doc(qid, name, [(f"{name} is a work by {people[creator]}.",
                                      [(relation, creator, people[creator], name)])]))
        passages.append(Passage(str(len(passages) + 1),
                                f"{name} is a work by {people[creator]}.", name))
    # Popularity: Zipf over a random order of every subject.
    subjects = [*people, *companies, *works]
    rng.shuffle(subjects)
    counts = {qid: int(20000 / (rank + 1)) for rank, qid in enumerate(subjects)}
    counts.update({qid: 50 for qid in [*cities, *jobs]})
    # NQ-style training questions about some people, gold passage = their biography.
    nq, truth = [], []
    by_title = {p.title: p for p in passages}
    for qid in rng.sample(people_ids, 60):
        name = people[qid]
        question = f"what was the first job of {name.lower()}"
        gold = by_title[name]
        nq.append(DprExample("nq_train_psgs_w100", question, ("unknown",),
                             (DprCtx(gold.title, gold.text, 1000.0, 1.0, gold.id),)))
        truth.append(LinkedQuestion(question, (qid,)))
    half = len(docs) // 2
    write_trex_documents(root / "trex" / "re-nlg_0-10000.json", docs[:half])
    write_trex_documents(root / "trex" / "re-nlg_10000-20000.json", docs[half:])
    write_entity_labels(root / "wikidata" / "entity_labels.jsonl", labels)
    write_hyperlink_counts(root / "hyperlinks" / "entity_counts.tsv", counts)
    write_passages(root / "wikipedia" / "psgs_w100.tsv", passages)
    write_dpr_examples(root / "nq" / "nq-train.json", nq)
    write_linked_questions(root / "nq" / "nq-train.entities.jsonl", truth)
    return {"people": people, "facts": facts, "counts": counts}


def world_params(root: Path, **overrides) -> Params:
    """Params whose raw inputs are the world under ``root / "raw"``; outputs under ``root``."""
    values = {f"paths.{name}": str(root / name)
              for name in ("data", "results", "metrics", "plots", "reports", "state")}
    values.update({
        "entity_questions.relations": RELATIONS,
        "entity_questions.min_triples": 10,
        "entity_questions.facts_per_relation": 30,
        "entity_questions.dev_per_relation": 20,
        "entity_questions.train_per_relation": 80,
        "entity_questions.per_bucket": 15,
        "entity_questions.no_overlap_train": 60,
        "entity_questions.no_overlap_dev": 10,
        "entity_questions.no_overlap_test": 15,
        "entity_questions.dpr_hard_negatives": 0,
        "entity_questions.linker_truth": "nq/nq-train.entities.jsonl",
    })
    values.update({f"entity_questions.{k}": v for k, v in overrides.items()})
    return resolve_params({}, profile="smoke", overrides=values)
