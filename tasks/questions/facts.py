"""Facts (subject, relation, objects) collected from T-REx and the labels that answer them.

T-REx is streamed one document at a time; what stays in memory is one small record per distinct
(relation, subject) fact, so memory grows with the number of distinct facts, never with the size
of the files. Entity labels are read afterwards in a second streamed pass that keeps only the
entities the facts name (a full Wikidata label dump never has to fit in memory).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from tasks.io.entity_labels import EntityLabel, read_entity_labels
from tasks.io.errors import SkipCounter
from tasks.io.tables import read_table, write_table
from tasks.io.trex import iter_trex_triples
from tasks.orchestration import artifact_task

log = logging.getLogger(__name__)

FACTS_SCHEMA = pa.schema([
    ("relation", pa.string()), ("subject_id", pa.string()), ("subject_label", pa.string()),
    ("object_ids", pa.list_(pa.string())), ("answers", pa.list_(pa.string())),
])
STATS_KEY = "qastress.fact_stats"


@dataclass(frozen=True, slots=True)
class Fact:
    """One knowledge-base fact, with the strings a question about it is rendered from.

    ``object_ids`` are every object T-REx aligns for (relation, subject), in file order;
    ``answers`` are, per object, its label followed by its aliases (without repeats).
    """

    relation: str
    subject_id: str
    subject_label: str
    object_ids: tuple[str, ...]
    answers: tuple[str, ...]

    @property
    def object_id(self) -> str:
        """The first object (the one the prose of the first aligned sentence states)."""
        return self.object_ids[0]


@dataclass
class FactCollection:
    """Facts per relation, plus counts of what was seen, merged and left out, and why."""

    by_relation: dict[str, list[Fact]]
    triples_seen: int
    duplicates: int
    label_fallbacks: int
    skips: SkipCounter
    triples_per_relation: dict[str, int] = field(default_factory=dict)
    dropped_unlabelled: int = 0

    def stats(self) -> dict:
        """JSON-able counts (stored with the facts table and shown in the summary)."""
        return {
            "triples_seen": self.triples_seen,
            "duplicates": self.duplicates,
            "label_fallbacks": self.label_fallbacks,
            "dropped_unlabelled": self.dropped_unlabelled,
            "triples_per_relation": dict(self.triples_per_relation),
            "skipped": self.skips.total,
            "skip_summary": self.skips.summary(),
            "skip_reasons": dict(self.skips.counts),
        }


@dataclass(slots=True)
class _Pending:
    subject_surface: str | None
    objects: dict[str, str | None]  # object id -> surface form, first seen first


def _answers(objects: Mapping[str, str | None], labels: Mapping[str, EntityLabel],
             aliases: bool) -> tuple[tuple[str, ...], int]:
    """Answers of a fact: per object (id -> surface form), its label (+ aliases), or its surface
    form when the labels lack it (counted as a fallback)."""
    seen: dict[str, None] = {}
    fallbacks = 0
    for object_id, surface in objects.items():
        entity = labels.get(object_id)
        if entity is None:
            fallbacks += 1
            if surface:
                seen.setdefault(surface, None)
            continue
        names = entity.names if aliases else (entity.label,)
        for name in names:
            if name.strip():
                seen.setdefault(name, None)
    return tuple(seen), fallbacks


def load_labels_for(path: Path, wanted: set[str], on_error: str = "raise",
                    skips: SkipCounter | None = None) -> dict[str, EntityLabel]:
    """The entities of an entity-label JSONL file whose id is in ``wanted`` (streamed)."""
    return read_entity_labels(path, on_error, skips, wanted=wanted)


def collect_facts(trex_paths: Iterable[Path], labels: Mapping[str, EntityLabel] | Path,
                  relations: Iterable[str], on_error: str = "raise",
                  answer_aliases: bool = True) -> FactCollection:
    """Stream T-REx triples of ``relations`` into one fact per (relation, subject).

    Every distinct object of a (relation, subject) is kept, in file order; a repeated
    (relation, subject, object) triple is counted as a duplicate. ``labels`` is a mapping or an
    entity-label JSONL file (streamed, keeping only the entities the facts need). Entities
    missing from the labels fall back to the surface form in the text (counted); a fact left
    with no subject label or no answer is dropped (counted). Facts come out sorted by subject
    id, so the result does not depend on the order of the T-REx files.
    """
    wanted = set(relations)
    skips = SkipCounter(source="T-REx")
    pending: dict[tuple[str, str], _Pending] = {}
    per_relation: Counter[str] = Counter()
    seen = duplicates = 0
    for _document, triple in iter_trex_triples(sorted(Path(p) for p in trex_paths),
                                               relations=wanted, on_error=on_error, skips=skips):
        seen += 1
        relation = triple.relation
        per_relation[relation] += 1
        key = (relation, triple.subject_id)
        record = pending.get(key)
        if record is None:
            record = pending[key] = _Pending(triple.subject.surfaceform, {})
        object_id = triple.object_id
        if object_id in record.objects:
            duplicates += 1
            continue
        record.objects[object_id] = triple.object.surfaceform
    if not isinstance(labels, Mapping):
        needed = {subject for _, subject in pending}
        needed.update(o for record in pending.values() for o in record.objects)
        label_skips = SkipCounter(source=f"entity labels {labels}")
        labels = load_labels_for(Path(labels), needed, on_error, label_skips)
        for reason, count in label_skips.counts.items():
            skips.counts[f"entity labels: {reason}"] += count
        skips.examples.extend(label_skips.examples[: skips.max_examples])
    facts: dict[tuple[str, str], Fact] = {}
    fallbacks = dropped = 0
    for (relation, subject_id), record in pending.items():
        subject = labels.get(subject_id)
        subject_label = subject.label if subject else (record.subject_surface or "")
        fallbacks += subject is None
        answers, object_fallbacks = _answers(record.objects, labels, answer_aliases)
        fallbacks += object_fallbacks
        if not subject_label.strip() or not answers:
            dropped += 1
            continue
        facts[(relation, subject_id)] = Fact(relation, subject_id, subject_label,
                                             tuple(record.objects), answers)
    by_relation: dict[str, list[Fact]] = {r: [] for r in sorted(wanted, key=relation_order)}
    for relation, subject in sorted(facts, key=lambda key: (relation_order(key[0]),
                                                            qid_order(key[1]))):
        by_relation[relation].append(facts[(relation, subject)])
    return FactCollection(by_relation, seen, duplicates, fallbacks, skips,
                          {r: per_relation.get(r, 0) for r in by_relation}, dropped)


def relation_order(relation: str) -> tuple[int, str]:
    """Sort key of relation ids: by number (P17 before P106), then the full id."""
    head = relation[1:].split("_")[0]
    return (int(head) if head.isdigit() else 0, relation)


def qid_order(entity_id: str) -> tuple[int, str]:
    """Sort key of entity ids: by number (Q9 before Q10), then the full id."""
    return (int(entity_id[1:]) if entity_id[1:].isdigit() else 0, entity_id)


def relation_rng(seed: int, relation: str, purpose: str) -> random.Random:
    """A generator seeded by (seed, relation, purpose), stable across processes and versions."""
    digest = hashlib.sha256(f"{seed}:{relation}:{purpose}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def sample_facts(facts: list[Fact], n: int, seed: int, relation: str,
                 purpose: str = "test") -> list[Fact]:
    """Up to ``n`` facts drawn without replacement, seeded, kept in their input order."""
    if len(facts) <= n:
        return list(facts)
    chosen = relation_rng(seed, relation, purpose).sample(range(len(facts)), n)
    return [facts[i] for i in sorted(chosen)]


# --- the facts table (the hand-over between the flow's steps) ----------------------------------

def write_facts_table(path: Path, collection: FactCollection) -> str:
    """Write every fact as a Parquet row, with the collection's counts in the metadata."""
    rows: dict[str, list] = {name: [] for name in FACTS_SCHEMA.names}
    for facts in collection.by_relation.values():
        for fact in facts:
            rows["relation"].append(fact.relation)
            rows["subject_id"].append(fact.subject_id)
            rows["subject_label"].append(fact.subject_label)
            rows["object_ids"].append(list(fact.object_ids))
            rows["answers"].append(list(fact.answers))
    stats = collection.stats() | {"relations": list(collection.by_relation)}
    return write_table(path, pa.table(rows, schema=FACTS_SCHEMA),
                       metadata={STATS_KEY: json.dumps(stats, sort_keys=True)})


#: Facts tables read while :func:`remembered_facts_tables` is open: ``{file identity: (facts,
#: counts)}``; ``None`` outside it. The EntityQuestions flow's steps (relations, splits,
#: no-overlap sets, buckets, the dataset) each read the same table: ~1 s a read for the
#: 51,770-passage world's 151k facts, ~190 MiB held while remembered.
_REMEMBERED: dict[tuple, tuple[dict[str, list[Fact]], dict]] | None = None


@contextmanager
def remembered_facts_tables() -> Iterator[None]:
    """Within the block, a facts table is read from disk once while its file stays the same
    (path, inode, modification time and size); forgotten when the block ends."""
    global _REMEMBERED
    outer, _REMEMBERED = _REMEMBERED, ({} if _REMEMBERED is None else _REMEMBERED)
    try:
        yield
    finally:
        _REMEMBERED = outer


def _file_identity(path: Path) -> tuple:
    """What changes when a file is written again (an atomic write replaces the inode)."""
    stat = Path(path).stat()
    return str(Path(path).resolve()), stat.st_ino, stat.st_mtime_ns, stat.st_size


def read_facts_table(path: Path) -> tuple[dict[str, list[Fact]], dict]:
    """The facts per relation (every relation collected, possibly empty) and the counts.

    Inside :func:`remembered_facts_tables` an unchanged file is not read again; each call
    returns its own dict, lists and counts (the facts themselves are frozen).
    """
    memo = _REMEMBERED
    if memo is None:
        return _read_facts_table(path)
    identity = _file_identity(path)
    if identity not in memo:
        memo[identity] = _read_facts_table(path)
    by_relation, stats = memo[identity]
    return ({relation: list(facts) for relation, facts in by_relation.items()},
            copy.deepcopy(stats))


def _read_facts_table(path: Path) -> tuple[dict[str, list[Fact]], dict]:
    table = read_table(path)
    stats = json.loads((table.schema.metadata or {}).get(STATS_KEY.encode(), b"{}"))
    by_relation: dict[str, list[Fact]] = {r: [] for r in stats.get("relations", [])}
    columns = table.to_pydict()
    for relation, subject_id, label, objects, answers in zip(
            columns["relation"], columns["subject_id"], columns["subject_label"],
            columns["object_ids"], columns["answers"], strict=True):
        by_relation.setdefault(relation, []).append(
            Fact(relation, subject_id, label, tuple(objects), tuple(answers)))
    return by_relation, stats


def facts_by_key(by_relation: Mapping[str, Iterable[Fact]]) -> dict[tuple[str, str], Fact]:
    """``{(relation, subject_id): fact}``."""
    return {(f.relation, f.subject_id): f for facts in by_relation.values() for f in facts}


def collect_facts_step(trex_paths: list[Path], entity_labels: Path, facts_path: Path,
                       relations: list[str], on_bad_record: str = "raise",
                       answer_aliases: bool = True) -> dict:
    """Stream T-REx into the facts table (``facts_path``); return the counts.

    Bad records raise :class:`DataFormatError` naming the file and the record, or are counted
    (``on_bad_record="skip"``) and reported in the returned counts.
    """
    if not trex_paths:
        raise FileNotFoundError("no T-REx files given (check sources.trex in params.yaml)")
    collection = collect_facts(trex_paths, Path(entity_labels), relations,
                               on_error=on_bad_record, answer_aliases=answer_aliases)
    log.info("T-REx: %d triples of %d relations, %d repeated, %d label fallbacks, %d facts "
             "without label or answer; %s", collection.triples_seen, len(relations),
             collection.duplicates, collection.label_fallbacks, collection.dropped_unlabelled,
             collection.skips.summary())
    write_facts_table(facts_path, collection)
    return collection.stats() | {"facts_per_relation": {r: len(f) for r, f in
                                                        collection.by_relation.items()}}


collect_facts_task = artifact_task(collect_facts_step, outputs=("facts_path",),
                                   name="collect T-REx facts")
