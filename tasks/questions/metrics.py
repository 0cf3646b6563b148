"""The construction's numbers as metrics JSON (``metrics/entity_questions.json``).

For ``dvc metrics show`` and the expected scores (``qastress check-scores``): relations
selected, T-REx fact counts, the entity linker's precision/recall on the NQ training
questions, questions per relation and set (splits, rand-ent and train-ent per bucket,
no-overlap and similar sets) with totals, and the DPR training JSON's questions, examples and
questions left without a positive passage. Only counts and scores: no paths.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tasks.io.atomic import write_json
from tasks.orchestration import artifact_task

FACT_COUNTS = ("triples_seen", "duplicates", "label_fallbacks", "dropped_unlabelled", "skipped")
LINKING_COUNTS = ("questions", "questions_with_entity", "distinct_entities", "skipped")


def eq_metrics(selection: Mapping[str, Any], fact_stats: Mapping[str, Any],
               linking: Mapping[str, Any], dataset_counts: Mapping[str, Any],
               dpr_training: Mapping[str, Any] | None = None) -> dict:
    """The metrics record (see the module docstring) from the construction's step results
    (``dpr_training``: what :func:`~tasks.questions.dpr_training.dpr_training_step` returned,
    None when the construction writes no DPR training JSON)."""
    totals: dict[str, int] = {}
    for entry in dataset_counts.values():
        for key in ("train", "dev", "test"):
            totals[key] = totals.get(key, 0) + int(entry[key])
        for key in ("rand_ent", "train_ent"):
            totals[key] = totals.get(key, 0) + sum(entry[key])
    record = {
        "relations": {"selected": len(selection["selected"]),
                      "dropped": len(selection["dropped"])},
        "facts": {key: fact_stats[key] for key in FACT_COUNTS},
        "linking": {"linker": linking["linker"],
                    **{key: linking[key] for key in LINKING_COUNTS},
                    "scores": dict(linking.get("scores") or {})},
        "totals": totals,
        "questions": {relation: dict(entry) for relation, entry in dataset_counts.items()},
    }
    if dpr_training is not None:
        record["dpr_training"] = dpr_training_totals(dpr_training)
    return record


def dpr_training_totals(dpr_training: Mapping[str, Any]) -> dict[str, int]:
    """Questions, examples and questions without a positive passage over the DPR training
    files, and the passage records skipped."""
    totals = {key: sum(int(entry[key]) for entry in dpr_training["files"].values())
              for key in ("questions", "examples", "without_positive")}
    return {**totals, "passages_skipped": int(dpr_training["passages_skipped"])}


def write_eq_metrics_step(selection_path: Path, fact_stats: dict, linking: dict,
                          dataset_counts: dict, metrics_path: Path,
                          dpr_training: dict | None = None) -> dict:
    """Write the construction's metrics JSON atomically; return the record."""
    selection = json.loads(Path(selection_path).read_text(encoding="utf-8"))
    record = eq_metrics(selection, fact_stats, linking, dataset_counts, dpr_training)
    write_json(metrics_path, record, indent=2)
    return record


write_eq_metrics_task = artifact_task(write_eq_metrics_step, outputs=("metrics_path",),
                                      name="EntityQuestions metrics")
