"""The slice's EntityQuestions test split: sample facts per relation and render questions.

The full construction (train/dev, frequency buckets, train-ent, no-overlap, similar) grows
from this module in the EntityQuestions issue.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pyarrow as pa

from tasks.config import EntityQuestionsConfig
from tasks.io.entity_labels import read_entity_labels
from tasks.io.entityquestions import EQQuestion, write_eq_file
from tasks.io.tables import write_table
from tasks.orchestration import artifact_task
from tasks.questions.facts import collect_facts, sample_facts
from tasks.questions.templates import render_question

log = logging.getLogger(__name__)


def build_test_questions(trex_paths: list[Path], entity_labels: Path, dataset_dir: Path,
                         table_path: Path, config: EntityQuestionsConfig) -> dict[str, int]:
    """Write ``dataset_dir/test/P*.test.json`` and a Parquet table of every question.

    Returns the number of questions per relation. A relation without any fact is an error:
    the template table promises it, so silence would hide a broken input.
    """
    if not trex_paths:
        raise FileNotFoundError("no T-REx files given (check sources.trex in params.yaml)")
    labels = read_entity_labels(entity_labels)
    collection = collect_facts(trex_paths, labels, config.relations, on_error=config.on_bad_record)
    log.info("T-REx: %d triples of %d relations, %d duplicate subjects, %d label fallbacks; %s",
             collection.triples_seen, len(config.relations), collection.duplicates,
             collection.label_fallbacks, collection.skips.summary())
    empty = [r for r, facts in collection.by_relation.items() if not facts]
    if empty:
        raise ValueError(f"no T-REx facts for relation(s) {empty} in {len(trex_paths)} file(s)")
    rows: dict[str, list] = {k: [] for k in
                             ("relation", "split", "question", "answers", "subject_id",
                              "subject_label", "object_id")}
    counts: dict[str, int] = {}
    for relation, facts in collection.by_relation.items():
        sampled = sample_facts(facts, config.facts_per_relation, config.seed, relation)
        questions = [EQQuestion(render_question(relation, f.subject_label), f.answers)
                     for f in sampled]
        write_eq_file(Path(dataset_dir) / "test" / f"{relation}.test.json", questions)
        counts[relation] = len(questions)
        for fact, question in zip(sampled, questions, strict=True):
            for key, value in (("relation", relation), ("split", "test"),
                               ("question", question.question), ("answers", list(fact.answers)),
                               ("subject_id", fact.subject_id),
                               ("subject_label", fact.subject_label),
                               ("object_id", fact.object_id)):
                rows[key].append(value)
    write_table(table_path, pa.table(rows))
    return counts


build_test_questions_task = artifact_task(build_test_questions,
                                          outputs=("dataset_dir", "table_path"),
                                          name="build EntityQuestions test split")
