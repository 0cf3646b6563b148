"""The demo profile's world is big and varied enough for the EntityQuestions experiments.

The knowledge base of the demo profile is built in a few seconds without writing any article, and
the construction's pure steps (:func:`assign_splits`, :func:`no_overlap_sets`) run on its facts
with the demo profile's sizes: every relation must get a train split, and the no-overlap sets of
the paper's Table 2 relations (P19, P159, P170) must fill (issue: the 3,100-subject world gave
5 of 24 relations a train split and empty no-overlap train sets).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tasks.config import EQ_RELATIONS, Params
from tasks.demo.kb import build_world
from tasks.demo.world import World
from tasks.params_loading import load_params
from tasks.questions.facts import Fact, qid_order, sample_facts
from tasks.questions.overlap import no_overlap_sets, shared_tokens, subject_tokens
from tasks.questions.splits import assign_splits, split_overlaps

ROOT = Path(__file__).resolve().parents[2]
TABLE2_RELATIONS = ("P19", "P159", "P170")


def relation_facts(world: World) -> dict[str, list[Fact]]:
    """The world's facts as the construction reads them back from T-REx: one per (relation,
    subject), every object kept, sorted by subject id."""
    objects: dict[str, dict[str, list[str]]] = {}
    for fact in world.facts:
        objects.setdefault(fact.relation, {}).setdefault(fact.subject, []).append(fact.object)
    return {relation: [Fact(relation, subject, world.label(subject), tuple(objs),
                            tuple(world.label(o) for o in objs))
                       for subject, objs in sorted(by_subject.items(),
                                                   key=lambda item: qid_order(item[0]))]
            for relation, by_subject in objects.items()}


def draw_splits(params: Params, facts: dict[str, list[Fact]]):
    """The main splits with the profile's sizes (what ``split_facts_step`` assigns)."""
    cfg = params.entity_questions
    return assign_splits(facts, cfg.relations, {"test": cfg.facts_per_relation,
                                                "dev": cfg.dev_per_relation,
                                                "train": cfg.train_per_relation},
                         cfg.seed, cfg.disjoint_scope)


def draw_no_overlap(params: Params, facts: dict[str, list[Fact]], splits,
                    relation: str) -> tuple[dict[str, list[Fact]], list[Fact]]:
    """The no-overlap sets of ``relation`` and its test sample (what ``no_overlap_step`` draws)."""
    cfg = params.entity_questions
    split_test = splits[relation]["test"]
    test = sample_facts(split_test, cfg.no_overlap_test, cfg.seed, relation, "no-overlap:test")
    sets = no_overlap_sets(facts[relation], test,
                           {"train": cfg.no_overlap_train, "dev": cfg.no_overlap_dev},
                           cfg.seed, relation, exclude={f.subject_id for f in split_test})
    return sets, test


@pytest.fixture(scope="module")
def demo() -> tuple[Params, World, dict[str, list[Fact]]]:
    params = load_params(ROOT / "params.yaml", profile="demo")
    world = build_world(params.demo_world)
    return params, world, relation_facts(world)


@pytest.fixture(scope="module")
def splits(demo):
    params, _, facts = demo
    return draw_splits(params, facts)


def test_every_relation_gets_full_evaluation_splits_and_a_train_split(demo, splits):
    params, _, _ = demo
    cfg = params.entity_questions
    assert set(cfg.relations) == set(EQ_RELATIONS)
    assert not split_overlaps(splits, cfg.disjoint_scope)
    sizes = {relation: {split: len(facts) for split, facts in per_split.items()}
             for relation, per_split in splits.items()}
    for relation in EQ_RELATIONS:
        assert sizes[relation]["test"] == cfg.facts_per_relation, (relation, sizes[relation])
        assert sizes[relation]["dev"] == cfg.dev_per_relation, (relation, sizes[relation])
        assert sizes[relation]["train"] >= 100, (relation, sizes[relation])


@pytest.mark.parametrize("relation", TABLE2_RELATIONS)
def test_no_overlap_sets_of_the_table2_relations_fill(demo, splits, relation):
    params, _, facts = demo
    cfg = params.entity_questions
    sets, test = draw_no_overlap(params, facts, splits, relation)
    assert len(sets["dev"]) == cfg.no_overlap_dev
    assert len(sets["train"]) >= 150, (relation, len(sets["train"]))
    assert not shared_tokens(sets["train"] + sets["dev"], test)


def test_subject_names_have_a_long_tail_of_tokens(demo):
    """Most organisation and work names are made only of tokens that at most 1% of their
    class share (pooled surnames, given names, rare syllable words), and people share few."""
    _, world, _ = demo
    # (the 3,100-subject world of before had shares 0.99 / 0.09 / 0.37)
    for cls, share in (("person", 0.95), ("organisation", 0.4), ("work", 0.5)):
        labels = [e.label for e in world.subjects(cls)]
        tokens = Counter(t for label in labels for t in subject_tokens(label))
        limit = max(2, len(labels) // 100)
        distinctive = sum(all(tokens[t] <= limit for t in subject_tokens(label))
                          for label in labels)
        assert distinctive >= share * len(labels), (cls, distinctive, len(labels))


def test_near_namesakes_exist_in_every_large_class(demo):
    _, world, _ = demo
    classes = Counter(world.entities[a].cls for a in world.confusable)
    assert classes["person"] >= 100 and classes["work"] >= 50, classes


def test_the_smoke_world_has_a_p19_no_overlap_train_set():
    params = load_params(ROOT / "params.yaml", profile="smoke")
    facts = relation_facts(build_world(params.demo_world))
    sets, test = draw_no_overlap(params, facts, draw_splits(params, facts), "P19")
    assert len(sets["train"]) >= 20, len(sets["train"])
    assert len(sets["dev"]) == params.entity_questions.no_overlap_dev
    assert not shared_tokens(sets["train"], test)
