"""Train/dev/test sampling (paper §2): up to 1,000 facts per relation for each evaluation split
and ~8,000 for training, with no subject entity in two splits. Seeded and deterministic.

Test is drawn for every relation (in the configured order), then dev, then train. With
``scope="global"`` (the default) a subject owned by a split (through any relation) can only be
drawn for that same split afterwards, so no subject entity appears in two splits anywhere in the
dataset; ``scope="relation"`` only enforces it within each relation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tasks.orchestration import artifact_task
from tasks.questions.assignments import SPLITS_SCHEMA, read_assignments, write_assignments
from tasks.questions.facts import Fact, facts_by_key, read_facts_table, relation_rng

SPLIT_ORDER = ("test", "dev", "train")
Splits = dict[str, dict[str, list[Fact]]]


def assign_splits(by_relation: Mapping[str, Sequence[Fact]], relations: Iterable[str],
                  sizes: Mapping[str, int], seed: int, scope: str = "global") -> Splits:
    """``{relation: {split: facts}}`` with up to ``sizes[split]`` facts per split.

    Test is drawn for every relation first, then dev, then train, so the evaluation splits get
    first pick of the subjects that several relations share. A draw takes subjects the split
    already owns first (through another relation) and fills up with unowned ones, so shared
    subjects (people have a birthplace, an occupation, ...) do not use up the pool of the later
    splits. Facts inside a split keep their input order (subject-id order). Each
    (relation, split) draw has its own seeded generator.
    """
    if scope not in ("global", "relation"):
        raise ValueError(f"scope must be 'global' or 'relation', not {scope!r}")
    relations = list(relations)
    owners: dict[str, dict[str, str]] = {}  # scope key -> subject -> split

    def owner_map(relation: str) -> dict[str, str]:
        return owners.setdefault("*" if scope == "global" else relation, {})

    taken: dict[str, set[int]] = {relation: set() for relation in relations}
    result: Splits = {relation: {} for relation in relations}
    for split in SPLIT_ORDER:
        n = sizes.get(split, 0)
        for relation in relations:
            facts, owner = by_relation.get(relation, ()), owner_map(relation)
            owned, free = [], []
            for i, fact in enumerate(facts):
                if i not in taken[relation]:
                    holder = owner.get(fact.subject_id)
                    (owned if holder == split else free if holder is None else []).append(i)
            rng = relation_rng(seed, relation, f"split:{split}")
            if len(owned) >= n:
                candidates = sorted(rng.sample(owned, n))
            else:
                extra = n - len(owned)
                candidates = sorted(owned + (rng.sample(free, extra) if len(free) > extra
                                             else free))
            for i in candidates:
                taken[relation].add(i)
                owner[facts[i].subject_id] = split
            result[relation][split] = [facts[i] for i in candidates]
    return result


def split_overlaps(splits: Splits, scope: str = "global") -> dict[tuple[str, str], set[str]]:
    """Subjects found in two splits (``{(split_a, split_b): subject ids}``); empty when sound."""
    overlaps: dict[tuple[str, str], set[str]] = {}
    groups = [splits] if scope == "global" else [{r: s} for r, s in splits.items()]
    for group in groups:
        owners: dict[str, set[str]] = {}
        for per_split in group.values():
            for split, facts in per_split.items():
                for fact in facts:
                    owners.setdefault(fact.subject_id, set()).add(split)
        for subject, found in owners.items():
            if len(found) > 1:
                ordered = sorted(found, key=SPLIT_ORDER.index)
                for a_index, a in enumerate(ordered):
                    for b in ordered[a_index + 1:]:
                        overlaps.setdefault((a, b), set()).add(subject)
    return overlaps


def split_facts_step(facts_path: Path, relations: list[str], splits_path: Path,
                     sizes: dict[str, int], seed: int, scope: str = "global") -> dict:
    """Assign facts of the selected relations to splits; write ``splits_path``; return counts."""
    by_relation, _ = read_facts_table(facts_path)
    splits = assign_splits(by_relation, relations, sizes, seed, scope)
    overlaps = split_overlaps(splits, scope)
    if overlaps:  # a bug, never data: fail loudly
        raise AssertionError(f"subjects in two splits: {overlaps}")
    write_assignments(splits_path, (
        {"relation": relation, "subject_id": fact.subject_id, "split": split}
        for relation, per_split in splits.items() for split, facts in per_split.items()
        for fact in facts), SPLITS_SCHEMA)
    return {relation: {split: len(facts) for split, facts in per_split.items()}
            for relation, per_split in splits.items()}


def read_splits(splits_path: Path, by_relation: Mapping[str, Sequence[Fact]]) -> Splits:
    """The splits written by :func:`split_facts_step`, as facts (file order kept)."""
    index = facts_by_key(by_relation)
    splits: Splits = {}
    for row in read_assignments(splits_path):
        relation = str(row["relation"])
        per_split = splits.setdefault(relation, {split: [] for split in SPLIT_ORDER})
        per_split[str(row["split"])].append(index[(relation, str(row["subject_id"]))])
    return splits


split_facts_task = artifact_task(split_facts_step, outputs=("splits_path",),
                                 name="sample train/dev/test splits")
