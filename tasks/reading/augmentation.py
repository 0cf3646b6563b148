"""Augmented reader training data (Gan & Ng, 2019, §5): paraphrased training questions that
passed the similarity bar, added to the SQuAD v1.1 training file.

The scored candidates (:func:`tasks.paraphrase.similarity.score_candidates` over paraphrases of
the training questions) hold one row per paraphrase with ``keep_<threshold>`` flags. Only rows
whose flag is true enter (and, on the demo world with ``readers.augmentation.world_raters``,
only those the world raters accept: a departure from the paper, which did not rate them); of
those, at most ``per_question`` per training question (a seeded random choice per question),
then ``n`` of all (a seeded random sample; fewer when fewer passed: the shortfall is
reported). Every skipped candidate is counted by reason.

The augmented file is the training file with each added paraphrase placed right after its
original question, in the same paragraph, with the same gold answers (text and
``answer_start``, which still point into the unchanged context) and the id
``<original id>_para<k>`` (``k`` = 1, 2, ... per original). It is validated (offsets, unique
ids) and written atomically by :func:`tasks.io.squad.write_squad` as
``<out_dir>/train-v1.1.json``; ``<out_dir>/added.parquet`` lists the added pairs.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from tasks.io.squad import write_squad
from tasks.io.tables import read_table, write_table
from tasks.reading.scoring import read_squad_v11

ADDED_SCHEMA = pa.schema([
    ("id", pa.string()), ("orig_id", pa.string()), ("original", pa.string()),
    ("paraphrase", pa.string()), ("suggestion", pa.string()), ("similarity", pa.float64()),
])
#: The keep flag of each augmentation kind (columns written by the similarity filter).
KEEP_COLUMNS = {"non_adversarial": "keep_augmentation",
                "adversarial": "keep_adversarial_augmentation"}


def select_augmentation(rows: Sequence[Mapping[str, Any]], keep_column: str, n: int,
                        per_question: int = 1, seed: int = 2019,
                        rated_column: str | None = None
                        ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The rows to add (in input order) and the counts of what was skipped and why.

    ``rows`` hold ``qid``, ``paraphrase`` and ``keep_column`` (and optionally ``suggestion``
    and ``similarity``). Counts: ``candidates``, ``skipped_below_bar`` (flag false),
    ``above_bar``, ``skipped_per_question`` (over ``per_question``), ``skipped_over_n`` (not
    sampled), ``requested`` (``n``), ``added``, ``shortfall`` (``n - added`` when fewer passed).
    With ``rated_column`` (raters' verdicts, e.g. ``world_keep`` of
    :func:`tasks.demo.raters.rate_candidates`), rows above the bar that the raters did not
    keep are skipped too, counted as ``skipped_by_raters``.
    """
    if n < 1 or per_question < 1:
        raise ValueError(f"need n >= 1 and per_question >= 1, got {n} and {per_question}")
    above: dict[str, list[tuple[int, Mapping[str, Any]]]] = {}
    below = rejected = 0
    for i, row in enumerate(rows):
        for column in (keep_column, rated_column):
            if column is not None and column not in row:
                raise ValueError(f"candidate row {i} (qid {row.get('qid')!r}) has no "
                                 f"{column!r} flag: score (and rate) the candidates first")
        if not row[keep_column]:
            below += 1
        elif rated_column is not None and not row[rated_column]:
            rejected += 1
        else:
            above.setdefault(row["qid"], []).append((i, row))
    pool: list[tuple[int, Mapping[str, Any]]] = []
    capped = 0
    for qid, options in above.items():
        options = sorted(options, key=lambda item: item[1]["paraphrase"])
        random.Random(f"{seed}:{qid}").shuffle(options)
        pool += options[:per_question]
        capped += max(0, len(options) - per_question)
    pool.sort(key=lambda item: item[0])
    chosen = pool if len(pool) <= n else sorted(random.Random(seed).sample(pool, n),
                                                key=lambda item: item[0])
    counts = {"candidates": len(rows), "skipped_below_bar": below,
              "above_bar": len(rows) - below,
              **({"skipped_by_raters": rejected} if rated_column is not None else {}),
              "skipped_per_question": capped,
              "skipped_over_n": len(pool) - len(chosen), "requested": n,
              "added": len(chosen), "shortfall": max(0, n - len(chosen))}
    return [dict(row) for _, row in chosen], counts


def augmented_squad(raw: Mapping[str, Any], chosen: Sequence[Mapping[str, Any]],
                    suffix: str = "_para") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The training file's JSON with the chosen paraphrases added after their originals, and
    the added pairs (``ADDED_SCHEMA`` rows).

    A chosen row whose ``qid`` is not a question of ``raw`` is an error (the candidates were
    made from another training file).
    """
    by_qid: dict[str, list[Mapping[str, Any]]] = {}
    for row in chosen:
        by_qid.setdefault(row["qid"], []).append(row)
    out = copy.deepcopy(dict(raw))
    added: list[dict[str, Any]] = []
    seen: set[str] = set()
    for article in out["data"]:
        for paragraph in article["paragraphs"]:
            qas = []
            for qa in paragraph["qas"]:
                qas.append(qa)
                seen.add(qa["id"])
                for k, row in enumerate(by_qid.get(qa["id"], ()), start=1):
                    new_id = f"{qa['id']}{suffix}{k}"
                    qas.append({"answers": copy.deepcopy(qa["answers"]),
                                "question": row["paraphrase"], "id": new_id})
                    added.append({"id": new_id, "orig_id": qa["id"],
                                  "original": qa["question"], "paraphrase": row["paraphrase"],
                                  "suggestion": row.get("suggestion"),
                                  "similarity": row.get("similarity")})
            paragraph["qas"] = qas
    unknown = sorted(set(by_qid) - seen)
    if unknown:
        raise ValueError(f"{len(unknown)} paraphrased questions are not in the training file "
                         f"(ids {unknown[:5]}): the candidates were made from another file")
    return out, added


TRAIN_FILE = "train-v1.1.json"
ADDED_FILE = "added.parquet"


def build_augmented_training(squad_path: Path, scored_path: Path, out_dir: Path,
                             keep_column: str, n: int, per_question: int = 1,
                             seed: int = 2019, rated_column: str | None = None
                             ) -> dict[str, Any]:
    """Write ``out_dir/train-v1.1.json`` (SQuAD v1.1) and ``out_dir/added.parquet``; the
    counts.

    ``squad_path`` must be a valid v1.1 file (:func:`read_squad_v11`); ``scored_path`` the
    scored candidates of its questions, with a ``keep_column`` flag (and a ``rated_column``
    of raters' verdicts when given: :func:`tasks.demo.raters.rate_candidates`).
    """
    dataset = read_squad_v11(squad_path)
    table = read_table(scored_path)
    for column in ("qid", "paraphrase", keep_column, *([rated_column] if rated_column else [])):
        if column not in table.column_names:
            raise ValueError(f"{scored_path}: no column {column!r} (columns: "
                             f"{table.column_names}); expected scored paraphrase candidates")
    rows = table.to_pylist()
    chosen, counts = select_augmentation(rows, keep_column, n, per_question, seed,
                                         rated_column)
    raw, added = augmented_squad(dataset.raw, chosen)
    out_dir = Path(out_dir)
    write_squad(out_dir / TRAIN_FILE, raw)
    write_table(out_dir / ADDED_FILE, added, schema=ADDED_SCHEMA)
    return {"training_questions": len(dataset), "paraphrased_questions":
            len({r["qid"] for r in rows}), **counts,
            "questions_augmented": len({r["orig_id"] for r in added}),
            "total_training_questions": len(dataset) + len(added),
            "keep_column": keep_column, "train_file": str(out_dir / TRAIN_FILE)}
