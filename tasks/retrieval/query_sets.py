"""Query sets: the questions a retriever is run on, with their ids, gold answers and origin.

A :class:`QuerySet` is an ordered mapping of *groups* (an EntityQuestions relation file, a
frequency-bucket file, the orig or para questions of a paraphrased set) to their questions.
The run id of question ``i`` of group ``g`` is ``g:<i, six digits>``
(:func:`~tasks.retrieval.evaluate.question_id`), so a TREC run, its evaluation and the groups
line up without joins. Every query set of the study comes from one loader here:

- :func:`eq_split`: the EntityQuestions test split, one group per relation (``P19``);
- :func:`bucket_query_set`: the rand-ent / train-ent one-off bucket files of some relations,
  one group per file (``rand-ent/P19/bucket3``);
- :func:`paraphrased_query_set`: the orig and para questions of the paraphrased SQuAD sets,
  both judged by the orig question's answers (``dev:orig``, ``dev:para``).

Tasks receive a query set as a small JSON file (:func:`write_query_set`), so the cache key is
its content and a task that runs on another machine gets a path, not the questions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tasks.io.atomic import write_json
from tasks.io.entityquestions import EQQuestion, discover_eq_files, read_eq_file
from tasks.io.errors import DataFormatError, MissingInputError
from tasks.retrieval.evaluate import question_id

#: Figure-1 set name -> directory under ``one-off/`` (see :mod:`tasks.questions.writers`).
SET_DIRS = {"rand-ent": "common-random-buckets", "train-ent": "nq-seen-buckets"}
#: The two variants of a paraphrased set, in group order.
VARIANTS = ("orig", "para")


@dataclass(frozen=True)
class QuerySet:
    """Named questions in groups: ``{group: [EQQuestion(question, answers), ...]}``."""

    name: str
    groups: Mapping[str, Sequence[EQQuestion]]
    source: str = ""
    meta: Mapping[str, object] = field(default_factory=dict)

    @property
    def qids(self) -> list[str]:
        """Run ids of every question, groups in order."""
        return [question_id(g, i) for g, items in self.groups.items() for i in range(len(items))]

    @property
    def texts(self) -> list[str]:
        """Question texts, in :attr:`qids` order."""
        return [q.question for items in self.groups.values() for q in items]

    def __len__(self) -> int:
        return sum(len(items) for items in self.groups.values())

    def as_dict(self) -> dict:
        """The JSON form (:func:`write_query_set`)."""
        return {"name": self.name, "source": self.source, "meta": dict(self.meta),
                "groups": {g: [{"question": q.question, "answers": list(q.answers)}
                               for q in items] for g, items in self.groups.items()}}


def write_query_set(query_set: QuerySet, path: Path) -> Path:
    """Write the query set as one JSON file (atomic; the same set gives the same bytes)."""
    write_json(path, query_set.as_dict(), indent=1)
    return Path(path)


def read_query_set(path: Path) -> QuerySet:
    """Read a file of :func:`write_query_set`; a malformed file is an error naming it."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        groups = {g: [EQQuestion(q["question"], tuple(q["answers"])) for q in items]
                  for g, items in raw["groups"].items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataFormatError(path, "query set", '{"name", "groups": {group: [{"question", '
                              '"answers"}]}}', repr(exc)) from None
    return QuerySet(raw["name"], groups, raw.get("source", ""), raw.get("meta", {}))


def query_slice(path: Path, start: int, end: int) -> tuple[list[str], list[str]]:
    """``(qids, texts)`` of questions ``start:end`` of a query-set file (checked range)."""
    query_set = read_query_set(path)
    qids, texts = query_set.qids, query_set.texts
    if not 0 <= start < end <= len(qids):
        raise ValueError(f"{path}: questions {start}:{end} are outside the set's {len(qids)} "
                         "questions")
    return qids[start:end], texts[start:end]


# --- the study's query sets ----------------------------------------------------------------

def eq_split(questions_dir: Path, split: str = "test") -> QuerySet:
    """Every relation file of an EntityQuestions split, one group per relation."""
    files = discover_eq_files(questions_dir, split)
    if not files:
        raise MissingInputError(f"{questions_dir}: no EntityQuestions {split} files (P*.{split}"
                                ".json) found")
    return QuerySet(split, {relation: read_eq_file(path) for relation, path in files.items()},
                    source=str(questions_dir))


def group_key(bucket_set: str, relation: str, bucket: int) -> str:
    """``rand-ent/P19/bucket3``: the group of one bucket file."""
    return f"{bucket_set}/{relation}/bucket{bucket}"


def bucket_path(dataset_dir: Path, bucket_set: str, relation: str, bucket: int) -> Path:
    """``dataset/one-off/<set dir>/<relation>/bucket<b>.test.json``."""
    if bucket_set not in SET_DIRS:
        raise ValueError(f"bucket set must be one of {sorted(SET_DIRS)}, not {bucket_set!r}")
    return (Path(dataset_dir) / "one-off" / SET_DIRS[bucket_set] / relation
            / f"bucket{bucket}.test.json")


def load_bucket_questions(dataset_dir: Path, sets: Sequence[str], relations: Sequence[str],
                          n_buckets: int) -> dict[str, list[EQQuestion]]:
    """``{group key: questions}`` for every set, relation and bucket (set, relation, bucket
    order); a missing bucket file is a ``FileNotFoundError`` naming its path."""
    groups: dict[str, list[EQQuestion]] = {}
    for bucket_set in sets:
        for relation in relations:
            for bucket in range(n_buckets):
                path = bucket_path(dataset_dir, bucket_set, relation, bucket)
                if not path.is_file():
                    raise FileNotFoundError(
                        f"{path}: bucket file of {bucket_set} {relation} bucket {bucket} is "
                        "missing (is the relation in entity_questions.relations and selected? "
                        "is entity_questions.n_buckets the same as when the files were written?)")
                groups[group_key(bucket_set, relation, bucket)] = read_eq_file(path)
    return groups


def bucket_query_set(dataset_dir: Path, sets: Sequence[str], relations: Sequence[str],
                     n_buckets: int) -> QuerySet:
    """The one-off bucket files of ``sets`` x ``relations`` x buckets, one group per file."""
    return QuerySet("buckets", load_bucket_questions(dataset_dir, sets, relations, n_buckets),
                    source=str(Path(dataset_dir) / "one-off"),
                    meta={"sets": list(sets), "relations": list(relations),
                          "n_buckets": n_buckets})


def paraphrased_group(set_name: str, variant: str) -> str:
    """``dev:orig``: the group of a paraphrased set's orig or para questions."""
    return f"{set_name}:{variant}"


def paraphrased_query_set(pairs: Mapping[str, tuple[Sequence, Sequence]],
                          source: str = "") -> QuerySet:
    """Orig and para SQuAD questions of each set (``{set: (orig, para)}``, aligned by
    position); both variants carry the orig question's answers."""
    groups: dict[str, list[EQQuestion]] = {}
    for name, (orig, para) in pairs.items():
        if len(orig) != len(para):
            raise ValueError(f"{name}: {len(orig)} orig but {len(para)} para questions")
        answers = [tuple(a.text for a in q.answers) for q in orig]
        for variant, items in zip(VARIANTS, (orig, para), strict=True):
            groups[paraphrased_group(name, variant)] = [
                EQQuestion(q.question, gold) for q, gold in zip(items, answers, strict=True)]
    return QuerySet("paraphrased", groups, source=source, meta={"sets": list(pairs)})
