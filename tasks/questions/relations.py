"""Which relations become EntityQuestions relations (paper §2: "relations with enough triples").

The paper keeps relations with more than 2,000 triples in T-REx and enough different answers
that a question is not answered by always guessing the same object. Both thresholds are
parameters (``entity_questions.min_triples`` and ``min_distinct_answers``); the configured
relation list is the candidate set, and every candidate that fails is reported with its reason.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tasks.io.atomic import write_json
from tasks.orchestration import artifact_task
from tasks.questions.facts import Fact, read_facts_table

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RelationStats:
    """What T-REx holds for one relation."""

    relation: str
    triples: int  # aligned triples in T-REx (repeats across documents included)
    facts: int  # distinct (relation, subject) facts with a label and an answer
    distinct_objects: int

    def to_dict(self) -> dict[str, int | str]:
        """The counts as a JSON-able dict."""
        return {"relation": self.relation, "triples": self.triples, "facts": self.facts,
                "distinct_objects": self.distinct_objects}


@dataclass(frozen=True)
class RelationSelection:
    """Relations kept (in the configured order) and the others with the reason they failed."""

    selected: tuple[str, ...]
    dropped: dict[str, str]
    stats: dict[str, RelationStats]


def relation_stats(by_relation: Mapping[str, Sequence[Fact]],
                   triples_per_relation: Mapping[str, int]) -> dict[str, RelationStats]:
    """Counts per relation; ``triples_per_relation`` comes from the T-REx pass."""
    return {
        relation: RelationStats(
            relation, int(triples_per_relation.get(relation, len(facts))), len(facts),
            len({o for fact in facts for o in fact.object_ids}))
        for relation, facts in by_relation.items()
    }


def select_relations(candidates: Sequence[str], stats: Mapping[str, RelationStats],
                     min_triples: int, min_distinct_answers: int) -> RelationSelection:
    """Keep the candidates with ``>= min_triples`` facts and ``>= min_distinct_answers`` objects.

    ``min_triples`` counts distinct facts (one per subject), the units that are sampled. A
    candidate missing from ``stats`` (no triple at all) is dropped with that reason.
    """
    selected: list[str] = []
    dropped: dict[str, str] = {}
    for relation in candidates:
        item = stats.get(relation)
        if item is None or item.facts == 0:
            dropped[relation] = "no facts in T-REx"
        elif item.facts < min_triples:
            dropped[relation] = f"{item.facts} facts < min_triples {min_triples}"
        elif item.distinct_objects < min_distinct_answers:
            dropped[relation] = (f"{item.distinct_objects} distinct answers < "
                                 f"min_distinct_answers {min_distinct_answers}")
        else:
            selected.append(relation)
    return RelationSelection(tuple(selected), dropped, dict(stats))


def select_relations_step(facts_path: Path, selection_path: Path, candidates: list[str],
                          min_triples: int, min_distinct_answers: int) -> list[str]:
    """Apply the selection criteria to the collected facts; write and return the selection.

    No relation passing is an error that lists every candidate's reason.
    """
    by_relation, counts = read_facts_table(facts_path)
    stats = relation_stats(by_relation, counts.get("triples_per_relation", {}))
    selection = select_relations(candidates, stats, min_triples, min_distinct_answers)
    for relation, reason in selection.dropped.items():
        log.warning("relation %s dropped: %s", relation, reason)
    if not selection.selected:
        raise ValueError(f"{facts_path}: no relation meets the selection criteria: "
                         f"{selection.dropped}")
    write_json(selection_path, {
        "criteria": {"min_triples": min_triples, "min_distinct_answers": min_distinct_answers},
        "selected": list(selection.selected),
        "dropped": selection.dropped,
        "stats": {r: s.to_dict() for r, s in stats.items()},
    }, indent=2)
    return list(selection.selected)


select_relations_task = artifact_task(select_relations_step, outputs=("selection_path",),
                                      name="select relations")
