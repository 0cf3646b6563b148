"""Reader EM/F1 on SQuAD dev per subject-frequency bucket (beyond the papers).

Where the subject of each dev question is known -- the demo world writes it beside the SQuAD
files (``sources.squad_dev_entities``: the entity-linking JSONL interchange with the question
``id``, one line per question, ``entities[0]`` = the subject) -- the questions are bucketed by
their subject's hyperlink count (``sources.hyperlink_counts``) with EntityQuestions' cut
(:func:`tasks.questions.buckets.bucket_of_sorted`: sorted by count, cut into ``n_buckets`` of
about equal cumulative weight; ``order`` numbers bucket 0 as the rarest or the most frequent),
and each reader's EM/F1 (official SQuAD v1.1) is reported per bucket. ``weight="hyperlinks"``
weighs a question by its subject's count, as EntityQuestions weighs facts: with a long tail and
a few hundred questions, the popular buckets then hold few questions (the demo's 400 dev
questions: 94 in the rarest of 8 buckets, 3 in the most popular), so the default
``"questions"`` weighs every question 1 (equal-size buckets, i.e. popularity quantiles). Dev
questions without a line are counted (``unlinked``) and left out of the buckets; a line whose
id is not a dev question is an error naming the file and line.

The paraphrased test sets get the same buckets (:func:`score_paraphrase_buckets`): each pair's
original question is a SQuAD dev question (the set's ``<set>_pairs.parquet`` maps its
``orig_id`` to the ``squad_id``), so per bucket the readers' EM/F1 on the original and on the
paraphrased questions and the drop, with its paired bootstrap CI over the bucket's pairs. The
bucket cuts are the dev set's, so a bucket means the same in both tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.evaluation.squad_metrics import iter_squad_v11, per_question_scores
from tasks.io.errors import DataFormatError
from tasks.io.linking import iter_numbered_linked_questions
from tasks.io.squad import SquadDataset
from tasks.io.squad_predictions import read_predictions
from tasks.questions.buckets import bucket_of_sorted, read_frequencies
from tasks.reading.robustness import subset_drops
from tasks.reading.scoring import question_scores, read_squad_v11


def read_subjects(path: Path, known_ids: set[str]) -> dict[str, str]:
    """``{question id: subject id}`` of a SQuAD subject sidecar (JSONL interchange + ``id``).

    Errors name the file line: a line without an id or a subject, an id that is not a question
    of the SQuAD file, an id given twice (with the line of its first occurrence).
    """
    subjects: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for line, item in iter_numbered_linked_questions(path):
        if item.id is None or not item.entities:
            raise DataFormatError(path, f"line {line}", 'an "id" and one subject in '
                                  '"entities"', f"id {item.id!r}, entities {list(item.entities)}")
        if item.id not in known_ids:
            raise DataFormatError(path, f"line {line}", "the id of a question of the SQuAD "
                                  "file", repr(item.id))
        if item.id in first_line:
            raise DataFormatError(path, f"line {line}", "each question id once",
                                  f"{item.id!r} again (first on line {first_line[item.id]})")
        first_line[item.id] = line
        subjects[item.id] = item.entities[0]
    return subjects


def bucket_questions(subjects: Mapping[str, str], frequency: Mapping[str, int], n_buckets: int,
                     order: str = "ascending", weight: str = "questions"
                     ) -> dict[str, tuple[int, int]]:
    """``{question id: (bucket, hyperlink count)}``: questions sorted by their subject's count (a
    subject without a count has 0), cut into buckets of equal cumulative ``weight``: 1 per
    question (``"questions"``) or the count (``"hyperlinks"``, EntityQuestions' buckets)."""
    if weight not in ("questions", "hyperlinks"):
        raise ValueError(f"weight must be 'questions' or 'hyperlinks', not {weight!r}")
    scored = sorted(((int(frequency.get(s, 0)), s, qid) for qid, s in subjects.items()))
    labels = bucket_of_sorted([count if weight == "hyperlinks" else 1
                               for count, _, _ in scored], n_buckets)
    if order == "descending":
        labels = [n_buckets - 1 - b for b in labels]
    return {qid: (b, count) for (count, _, qid), b in zip(scored, labels, strict=True)}


def bucket_scores(dataset: SquadDataset, predictions: Mapping[str, Mapping[str, str]],
                  subjects: Mapping[str, str], frequency: Mapping[str, int], n_buckets: int,
                  order: str = "ascending", weight: str = "questions") -> dict:
    """Per bucket: questions, hyperlink range and each reader's EM/F1 (percent, 2 decimals;
    ``None`` for an empty bucket)."""
    gold = list(iter_squad_v11(dataset.raw))
    buckets = bucket_questions(subjects, frequency, n_buckets, order, weight)
    per_reader = {reader: per_question_scores(gold, preds) for reader, preds in
                  predictions.items()}
    out: dict[str, dict] = {}
    for b in range(n_buckets):
        ids = [qid for qid, _ in gold if qid in buckets and buckets[qid][0] == b]
        counts = [buckets[qid][1] for qid in ids]
        out[f"bucket{b}"] = {
            "questions": len(ids),
            "hyperlinks": [min(counts), max(counts)] if counts else None,
            "readers": {reader: ({"exact_match": round(100 * sum(s[i][0] for i in ids) / len(ids),
                                                       2),
                                  "f1": round(100 * sum(s[i][1] for i in ids) / len(ids), 2)}
                                 if ids else None) for reader, s in per_reader.items()}}
    return {"n_buckets": n_buckets, "order": order, "weight": weight,
            "bucket0": "rarest subjects" if order == "ascending" else "most frequent subjects",
            "questions": len(gold), "linked": len(buckets),
            "unlinked": len(gold) - len(buckets), "buckets": out}


def score_dev_buckets(predictions: Mapping[str, Path], data_file: Path, subjects_file: Path,
                      hyperlinks: Path, n_buckets: int, order: str = "ascending",
                      key: str = "wikidata", weight: str = "questions") -> dict:
    """:func:`bucket_scores` from files: ``{reader: predictions file}`` of one SQuAD file."""
    dataset = read_squad_v11(data_file)
    subjects = read_subjects(subjects_file, {qid for qid, _ in iter_squad_v11(dataset.raw)})
    frequency = read_frequencies(hyperlinks, key=key)
    return bucket_scores(dataset, {r: read_predictions(p) for r, p in predictions.items()},
                         subjects, frequency, n_buckets, order, weight)


def read_pair_sources(pairs_path: Path, orig_ids: Sequence[str]) -> list[str]:
    """The SQuAD dev id of each original question of a paraphrased set, in file order, from the
    set's pairs table (Parquet with ``orig_id`` and ``squad_id``)."""
    import pyarrow.parquet as pq

    table = pq.read_table(pairs_path)
    missing = {"orig_id", "squad_id"} - set(table.column_names)
    if missing:
        raise DataFormatError(pairs_path, "columns", "orig_id and squad_id",
                              f"columns {table.column_names}")
    source = dict(zip((str(v) for v in table.column("orig_id").to_pylist()),
                      (str(v) for v in table.column("squad_id").to_pylist()), strict=True))
    unknown = [qid for qid in orig_ids if qid not in source]
    if unknown:
        raise DataFormatError(pairs_path, "orig_id", "a row for every question of the "
                              "original set", f"{len(unknown)} without one: {unknown[:5]}")
    return [source[qid] for qid in orig_ids]


def paraphrase_bucket_scores(orig: SquadDataset, para: SquadDataset, squad_ids: Sequence[str],
                             predictions: Mapping[str, tuple[Mapping[str, str],
                                                             Mapping[str, str]]],
                             buckets: Mapping[str, tuple[int, int]], n_buckets: int, *,
                             n_bootstrap: int = 1000, seed: int = 0,
                             confidence: float = 0.95) -> dict:
    """Per bucket of :func:`bucket_questions` (keyed by SQuAD dev id): the pairs whose original
    question is in it, each reader's EM/F1 on orig and para (percent) and the drop
    ``orig - para`` in points with its paired bootstrap CI. ``squad_ids[i]`` is the dev id of
    the i-th pair; ``predictions[reader] = (orig predictions, para predictions)``."""
    if not len(orig) == len(para) == len(squad_ids):
        raise ValueError(f"{len(orig)} original, {len(para)} paraphrased questions and "
                         f"{len(squad_ids)} sources: they must align by position")
    per_reader = {r: (question_scores(orig, o), question_scores(para, p))
                  for r, (o, p) in predictions.items()}
    out: dict[str, dict] = {}
    for b in range(n_buckets):
        rows = [i for i, qid in enumerate(squad_ids) if qid in buckets and buckets[qid][0] == b]
        counts = [buckets[squad_ids[i]][1] for i in rows]
        readers: dict[str, dict | None] = {}
        for reader, (o, p) in per_reader.items():
            if not rows:
                readers[reader] = None
                continue
            readers[reader] = subset_drops(o, p, rows, n_bootstrap, seed, confidence)
        out[f"bucket{b}"] = {"pairs": len(rows),
                             "hyperlinks": [min(counts), max(counts)] if counts else None,
                             "readers": readers}
    linked = sum(qid in buckets for qid in squad_ids)
    return {"pairs": len(squad_ids), "linked": linked, "unlinked": len(squad_ids) - linked,
            "buckets": out}


def score_paraphrase_buckets(predictions: Mapping[str, tuple[Path, Path]], orig_file: Path,
                             para_file: Path, pairs_file: Path, dev_file: Path,
                             subjects_file: Path, hyperlinks: Path, n_buckets: int,
                             order: str = "ascending", key: str = "wikidata",
                             weight: str = "questions", *, n_bootstrap: int = 1000,
                             seed: int = 0, confidence: float = 0.95) -> dict:
    """:func:`paraphrase_bucket_scores` from files: ``{reader: (orig, para) predictions}`` of
    one paraphrased set, bucketed with the SQuAD dev set's cuts."""
    dev = read_squad_v11(dev_file)
    subjects = read_subjects(subjects_file, {qid for qid, _ in iter_squad_v11(dev.raw)})
    buckets = bucket_questions(subjects, read_frequencies(hyperlinks, key=key), n_buckets,
                               order, weight)
    orig, para = read_squad_v11(orig_file), read_squad_v11(para_file)
    squad_ids = read_pair_sources(pairs_file, [q.id for q in orig.questions()])
    return {"n_buckets": n_buckets, "order": order, "weight": weight,
            "bucket0": "rarest subjects" if order == "ascending" else "most frequent subjects",
            **paraphrase_bucket_scores(
                orig, para, squad_ids,
                {r: (read_predictions(o), read_predictions(p)) for r, (o, p) in
                 predictions.items()},
                buckets, n_buckets, n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)}
