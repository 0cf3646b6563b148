"""Write the official EntityQuestions layout and a Parquet table of every question.

::

    dataset/{train,dev,test}/P19.{split}.json
    dataset/one-off/common-random-buckets/P19/bucket{0..7}.test.json     (rand-ent)
    dataset/one-off/nq-seen-buckets/P19/bucket{0..7}.test.json           (train-ent)
    dataset/one-off/no-overlap/P19/P19_no_overlap.{train,dev,test}.json
    dataset/one-off/similar/P19/P19_similar.{train,dev,test}.json        (P19, P159, P170)

Files are JSON lists of ``{question, answers}`` formatted like the release (``indent=4``, ASCII
escapes). Main split files are written when not empty; every relation gets all bucket files,
empty ones included, so the bucket layout is always complete. The whole directory is built
under a temporary name and swapped in, so files of an earlier configuration never linger.

The table (``questions.parquet``) has one row per question of every file: ``collection``
(``entityquestions``, ``common-random-buckets``, ``nq-seen-buckets``, ``no-overlap``,
``similar``), ``relation``, ``split``, ``bucket`` (the subject's frequency bucket),
``subject_frequency``, ``subject_id``, ``subject_label``, ``object_ids``, ``question``,
``answers``, ``template`` (the template key used) and ``file`` (relative to ``dataset/``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from tasks.io.atomic import atomic_dir
from tasks.io.entityquestions import EQQuestion
from tasks.io.linking import iter_linked_questions
from tasks.io.tables import write_table
from tasks.orchestration import artifact_task
from tasks.questions.buckets import BucketedFact, read_buckets, sample_buckets
from tasks.questions.facts import Fact, read_facts_table
from tasks.questions.seen import seen_buckets, seen_entities
from tasks.questions.splits import SPLIT_ORDER, read_splits
from tasks.questions.templates import load_templates, render_question

MAIN = "entityquestions"
RAND_ENT = "common-random-buckets"
TRAIN_ENT = "nq-seen-buckets"
NO_OVERLAP = "no-overlap"
SIMILAR = "similar"
COLLECTIONS = (MAIN, RAND_ENT, TRAIN_ENT, NO_OVERLAP, SIMILAR)

QUESTIONS_SCHEMA = pa.schema([
    ("collection", pa.string()), ("relation", pa.string()), ("split", pa.string()),
    ("bucket", pa.int32()), ("subject_frequency", pa.int64()), ("subject_id", pa.string()),
    ("subject_label", pa.string()), ("object_ids", pa.list_(pa.string())),
    ("question", pa.string()), ("answers", pa.list_(pa.string())), ("template", pa.string()),
    ("file", pa.string()),
])


def similar_template(relation: str) -> str | None:
    """``P19_similar`` when the relation has a "similar" template, else ``None``."""
    key = f"{relation}_similar"
    return key if key in load_templates() else None


def main_file(relation: str, split: str) -> str:
    """``{split}/{relation}.{split}.json``."""
    return f"{split}/{relation}.{split}.json"


def bucket_file(collection: str, relation: str, bucket: int) -> str:
    """``one-off/{collection}/{relation}/bucket{b}.test.json``."""
    return f"one-off/{collection}/{relation}/bucket{bucket}.test.json"


def no_overlap_file(relation: str, split: str) -> str:
    """``one-off/no-overlap/{relation}/{relation}_no_overlap.{split}.json``."""
    return f"one-off/{NO_OVERLAP}/{relation}/{relation}_no_overlap.{split}.json"


def similar_file(relation: str, split: str) -> str:
    """``one-off/similar/{relation}/{relation}_similar.{split}.json``."""
    return f"one-off/{SIMILAR}/{relation}/{relation}_similar.{split}.json"


def release_json(questions: Sequence[EQQuestion]) -> str:
    """The text :func:`~tasks.io.entityquestions.write_eq_file` writes (release formatting)."""
    records = [{"question": q.question, "answers": list(q.answers)} for q in questions]
    for record in records:
        if not record["answers"]:
            raise ValueError(f"question {record['question']!r} has no answers")
    return json.dumps(records, ensure_ascii=True, indent=4)


def write_release_json(path: Path, questions: Sequence[EQQuestion]) -> None:
    """Write a question file inside a directory that :func:`atomic_dir` is building.

    No temporary file and no fsync per file: the directory is swapped in whole, so a crash
    cannot leave a partial layout behind, and thousands of small files stay fast to write.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(release_json(questions), encoding="utf-8", newline="\n")


class _DatasetWriter:
    """Writes question files under a root and collects the table rows."""

    def __init__(self, root: Path, bucket_of: dict[tuple[str, str], tuple[int, int]]):
        self.root = root
        self.bucket_of = bucket_of
        self.rows: dict[str, list] = {name: [] for name in QUESTIONS_SCHEMA.names}

    def write(self, relative: str, collection: str, split: str, facts: Sequence[Fact],
              template: str) -> int:
        questions = []
        for fact in facts:
            question = render_question(template, fact.subject_label)
            questions.append(EQQuestion(question, fact.answers))
            bucket, frequency = self.bucket_of.get((fact.relation, fact.subject_id), (None, None))
            for name, value in (
                    ("collection", collection), ("relation", fact.relation), ("split", split),
                    ("bucket", bucket), ("subject_frequency", frequency),
                    ("subject_id", fact.subject_id), ("subject_label", fact.subject_label),
                    ("object_ids", list(fact.object_ids)), ("question", question),
                    ("answers", list(fact.answers)), ("template", template),
                    ("file", relative)):
                self.rows[name].append(value)
        write_release_json(self.root / relative, questions)
        return len(questions)


def write_dataset(dataset_dir: Path, relations: Sequence[str],
                  splits: dict[str, dict[str, list[Fact]]],
                  buckets: dict[str, list[BucketedFact]],
                  rand_ent: dict[str, dict[int, list[BucketedFact]]],
                  train_ent: dict[str, dict[int, list[BucketedFact]]],
                  no_overlap: dict[str, dict[str, list[Fact]]],
                  n_buckets: int = 8) -> tuple[dict, pa.Table]:
    """Write every file of the layout; return counts per relation and the question table."""
    bucket_of = {(item.fact.relation, item.fact.subject_id): (item.bucket, item.frequency)
                 for items in buckets.values() for item in items}
    counts: dict[str, dict] = {}
    with atomic_dir(dataset_dir) as tmp:
        writer = _DatasetWriter(tmp, bucket_of)
        for relation in relations:
            entry: dict = {}
            for split in SPLIT_ORDER:
                facts = splits.get(relation, {}).get(split, [])
                entry[split] = (writer.write(main_file(relation, split), MAIN, split, facts,
                                             relation) if facts else 0)
            for key, collection, chosen in (("rand_ent", RAND_ENT, rand_ent),
                                            ("train_ent", TRAIN_ENT, train_ent)):
                entry[key] = [
                    writer.write(bucket_file(collection, relation, b), collection, "test",
                                 [item.fact for item in chosen.get(relation, {}).get(b, [])],
                                 relation)
                    for b in range(n_buckets)]
            sets = no_overlap.get(relation, {})
            entry["no_overlap"] = {split: writer.write(no_overlap_file(relation, split),
                                                       NO_OVERLAP, split, sets.get(split, []),
                                                       relation)
                                   for split in ("train", "dev", "test")}
            template = similar_template(relation)
            if template is not None:
                entry["similar"] = {split: writer.write(similar_file(relation, split), SIMILAR,
                                                        split, sets.get(split, []), template)
                                    for split in ("train", "dev", "test")}
            counts[relation] = entry
    return counts, pa.table(writer.rows, schema=QUESTIONS_SCHEMA)


def write_dataset_step(facts_path: Path, relations: list[str], splits_path: Path,
                       buckets_path: Path, links_path: Path, no_overlap_path: Path,
                       dataset_dir: Path, table_path: Path, per_bucket: int, seed: int,
                       n_buckets: int = 8) -> dict:
    """Render every question and write the layout and the table; return counts per relation.

    rand-ent draws up to ``per_bucket`` facts per bucket (seeded); train-ent keeps, per
    bucket, every fact whose subject is linked in ``links_path`` (JSONL interchange).
    """
    by_relation, _ = read_facts_table(facts_path)
    splits = read_splits(splits_path, by_relation)
    buckets = read_buckets(buckets_path, by_relation)
    seen = seen_entities(iter_linked_questions(links_path))
    rand_ent = {r: sample_buckets(buckets.get(r, []), per_bucket, seed, r, n_buckets)
                for r in relations}
    train_ent = {r: seen_buckets(buckets.get(r, []), seen, n_buckets) for r in relations}
    no_overlap = read_splits(no_overlap_path, by_relation)
    counts, table = write_dataset(dataset_dir, relations, splits=splits, buckets=buckets,
                                  rand_ent=rand_ent, train_ent=train_ent, no_overlap=no_overlap,
                                  n_buckets=n_buckets)
    write_table(table_path, table)
    return counts


write_dataset_task = artifact_task(write_dataset_step, outputs=("dataset_dir", "table_path"),
                                   name="write EntityQuestions files")
