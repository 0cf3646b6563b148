"""No-overlap training sets (paper §4.1) and their "similar"-template rendering.

For a relation, the test set is its test split (or a seeded sample of it, ``no_overlap_test``:
on a small world every token of a large test set is shared by nearly every other subject); the
no-overlap train/dev sets are drawn from the relation's other facts whose subject shares no
token with any test subject (tokens: letter/digit
runs, NFD without marks, case-folded, as the linker reads them), so a retriever trained on them
cannot have memorised any part of a test name. The similar sets are the same facts rendered
with the relation's ``*_similar`` template (P19, P159, P170).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tasks.orchestration import artifact_task
from tasks.questions.assignments import SPLITS_SCHEMA, write_assignments
from tasks.questions.facts import Fact, read_facts_table, sample_facts
from tasks.questions.linking import normalise_tokens
from tasks.questions.splits import read_splits

NO_OVERLAP_SPLITS = ("train", "dev", "test")


def subject_tokens(label: str) -> set[str]:
    """The tokens of a subject label compared for overlap."""
    return set(normalise_tokens(label))


def subject_vocabulary(test_facts: Iterable[Fact]) -> set[str]:
    """Every token of every test subject."""
    vocabulary: set[str] = set()
    for fact in test_facts:
        vocabulary |= subject_tokens(fact.subject_label)
    return vocabulary


def no_overlap_sets(facts: Sequence[Fact], test_facts: Sequence[Fact], sizes: Mapping[str, int],
                    seed: int, relation: str,
                    exclude: Iterable[str] = ()) -> dict[str, list[Fact]]:
    """``{"train", "dev", "test"}`` facts of one relation with no subject token shared with test.

    Dev, then train, are disjoint samples (up to ``sizes["dev"]`` and ``sizes["train"]``) of
    the facts whose subject is not a test subject (nor in ``exclude``) and shares no token with
    any test subject.
    """
    vocabulary = subject_vocabulary(test_facts)
    test_subjects = {fact.subject_id for fact in test_facts} | set(exclude)
    pool = [fact for fact in facts if fact.subject_id not in test_subjects
            and not (subject_tokens(fact.subject_label) & vocabulary)]
    dev = sample_facts(pool, sizes.get("dev", 0), seed, relation, "no-overlap:dev")
    chosen = {fact.subject_id for fact in dev}
    rest = [fact for fact in pool if fact.subject_id not in chosen]
    train = sample_facts(rest, sizes.get("train", 0), seed, relation, "no-overlap:train")
    return {"train": train, "dev": dev, "test": list(test_facts)}


def shared_tokens(train_facts: Iterable[Fact], test_facts: Iterable[Fact]) -> set[str]:
    """Tokens found in both a train subject and a test subject (empty for a sound set)."""
    vocabulary = subject_vocabulary(test_facts)
    found: set[str] = set()
    for fact in train_facts:
        found |= subject_tokens(fact.subject_label) & vocabulary
    return found


def no_overlap_step(facts_path: Path, splits_path: Path, relations: list[str],
                    no_overlap_path: Path, sizes: dict[str, int], seed: int) -> dict:
    """No-overlap train/dev/test for every selected relation; write them; return the counts.

    The test set of a relation is a seeded sample of up to ``sizes["test"]`` facts of its test
    split (all of it when the size is at least the split's); train/dev never hold a subject of
    the test split. Raises if a drawn train/dev subject shares a token with a test subject (it
    cannot, by construction: the check guards the invariant).
    """
    by_relation, _ = read_facts_table(facts_path)
    splits = read_splits(splits_path, by_relation)
    rows: list[dict[str, object]] = []
    counts: dict[str, dict[str, int]] = {}
    for relation in relations:
        split_test = splits.get(relation, {}).get("test", [])
        test = sample_facts(split_test, sizes.get("test", len(split_test)), seed, relation,
                            "no-overlap:test")
        sets = no_overlap_sets(by_relation.get(relation, []), test, sizes, seed, relation,
                               exclude={fact.subject_id for fact in split_test})
        leaked = shared_tokens(sets["train"] + sets["dev"], test)
        if leaked:
            raise AssertionError(f"{relation}: no-overlap sets share tokens {sorted(leaked)}")
        counts[relation] = {split: len(facts) for split, facts in sets.items()}
        rows.extend({"relation": relation, "subject_id": fact.subject_id, "split": split}
                    for split in NO_OVERLAP_SPLITS for fact in sets[split])
    write_assignments(no_overlap_path, rows, SPLITS_SCHEMA)
    return counts


no_overlap_task = artifact_task(no_overlap_step, outputs=("no_overlap_path",),
                                name="draw no-overlap train/dev sets")
