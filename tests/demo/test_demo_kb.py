"""The demo knowledge base: sizes, consistency of facts, popularity and name tiers."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from tasks.config import EQ_RELATIONS
from tasks.demo import inventories as inv
from tasks.demo.kb import PERSON_ROLES, _remove_same, allocate, build_world
from tasks.demo.popularity import hyperlink_counts, zipf_count
from tasks.demo.rng import stream, weighted_sample
from tasks.demo.world import Entity
from tasks.params_loading import load_params

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world():
    return build_world(load_params(ROOT / "params.yaml", profile="smoke").demo_world)


def test_allocate_keeps_every_kind_and_the_total():
    kinds = allocate(23, PERSON_ROLES)
    assert len(kinds) == 23 and set(kinds) == {role for role, _ in PERSON_ROLES}


def test_too_small_a_world_is_refused():
    config = load_params(ROOT / "params.yaml", profile="smoke").demo_world
    with pytest.raises(ValueError, match="n_works"):
        build_world(config.model_copy(update={"n_works": 3}))


def test_streams_and_weighted_samples_are_reproducible():
    a, b = stream(1, "x"), stream(1, "x")
    assert [a.random() for _ in range(3)] == [b.random() for _ in range(3)]
    assert stream(1, "x").random() != stream(1, "y").random()
    items = list(range(50))
    first = weighted_sample(random.Random(3), items, [1.0 + i for i in items], 10)
    assert first == weighted_sample(random.Random(3), items, [1.0 + i for i in items], 10)
    assert len(set(first)) == 10
    assert 0 not in weighted_sample(random.Random(3), items, [0.0] + [1.0] * 49, 49)


def test_zipf_counts():
    assert zipf_count(1, 1000, 1.0) == 1000 and zipf_count(4, 1000, 1.0) == 250
    counts = hyperlink_counts({"Q1": 2, "Q2": 1}, {"Q3": 10, "Q4": 0}, 1000, 1.0)
    assert counts == {"Q2": 1000, "Q3": 500, "Q1": 333, "Q4": 250}


def test_every_relation_has_facts_with_distinct_answers(world):
    per_relation: dict[str, set[str]] = {}
    for fact in world.facts:
        per_relation.setdefault(fact.relation, set()).add(fact.object)
    for relation in EQ_RELATIONS:
        assert len(per_relation.get(relation, ())) >= 2, relation


def test_subject_labels_are_unique(world):
    labels = Counter(e.label for e in world.entities.values())
    assert all(labels[e.label] == 1 for e in world.subjects())
    # real objects may share a name only across kinds (the city and the country Singapore)
    kinds = Counter((e.label, e.kind) for e in world.entities.values())
    assert kinds.most_common(1)[0][1] == 1


def test_facts_are_consistent(world):
    entities = world.entities
    countries = inv.countries()
    for fact in world.facts:
        subject, obj = entities[fact.subject], entities[fact.object]
        if fact.relation == "P40":
            assert obj.attrs["birth_year"] > subject.attrs["birth_year"]
        if fact.relation == "P26":
            assert fact.subject in world.objects(fact.object, "P26")
        if fact.relation == "P36":
            assert obj.attrs["country"] == subject.attrs["country"]
        if fact.relation == "P50":
            home = obj.attrs["home"]
            language = countries[home].language
            assert world.objects(subject.id, "P407") == (
                [world.entities[world.first(subject.id, "P407")].id] if language else [])
            assert world.label(world.first(subject.id, "P495")) == countries[home].name
        if fact.relation == "P740" and subject.kind == "band":
            country = world.label(world.first(subject.id, "P495"))
            assert countries[obj.attrs["country"]].name == country
        if fact.relation == "P20":
            assert "death_year" in subject.attrs


def test_popular_people_have_common_names_and_rare_ones_rare_names(world):
    people = sorted(world.subjects("person"), key=lambda e: e.rank)
    fifth = len(people) // 5
    tiers_top = Counter(p.attrs["tier"] for p in people[:fifth])
    tiers_bottom = Counter(p.attrs["tier"] for p in people[-fifth:])
    assert tiers_top["common"] > tiers_bottom["common"]
    assert tiers_bottom["rare"] > tiers_top["rare"]
    assert world.confusable  # near-namesakes exist


def test_remove_same_removes_that_entity_as_list_remove_would():
    people = [Entity(f"Q{i}", f"Person {i}", "person", "person", "human") for i in range(5)]
    expected = list(people)
    expected.remove(people[3])
    _remove_same(people, people[3])
    assert people == expected and len(people) == 4
    twin = Entity("Q1", "Person 1", "person", "person", "human")  # equal, not the same object
    with pytest.raises(ValueError, match="Q1 is not in the list"):
        _remove_same(people, twin)
    assert len(people) == 4
