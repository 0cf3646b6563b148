"""The non-adversarial paraphrased test set (Gan & Ng, 2019, §4): at most one accepted
paraphrase per original question, chosen at random (seeded), written as a pair of SQuAD v1.1
files in the layout of the released sets (``../shared/data/paraphrasing-squad/dev_*.json``).

Layout of the release, reproduced here:

* one article per question, titled ``Title_<i>``, holding one paragraph (its context) with one
  question; ``{name}_orig.json`` and ``{name}_para.json`` align by position, with the same
  titles, contexts and gold answers (all of them, as in SQuAD);
* ids are not the SQuAD ids: with ``n`` questions and ``base = 100 * n`` (the dev release:
  1062 questions, ids from 106200), question ``i`` has id ``base + i + 1`` in the original file
  and ``base + i`` in the paraphrased one; the adversarial release (56 questions, ids from
  1005600) uses ``base = 100 * (10000 + n)`` (``id_scheme="adv"``); ``id_base`` overrides;
* the questions are lower-cased in both files (the non-adversarial release is);
* key order as in the dev release: ``version, data`` / ``title, paragraphs`` /
  ``qas, context`` / ``answers, question, id`` / ``text, answer_start``.

A ``{name}_pairs.parquet`` next to the files maps each pair back to its SQuAD id, suggestion
and similarity.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from tasks.io.errors import SkipCounter
from tasks.io.squad import SquadQuestion, read_squad, write_squad
from tasks.io.tables import read_table, write_table
from tasks.paraphrase.text import normalise_question

log = logging.getLogger(__name__)
__test__ = False  # a task module, not a test file (its name follows the spec)

PAIRS_SCHEMA = pa.schema([
    ("orig_id", pa.string()), ("para_id", pa.string()), ("squad_id", pa.string()),
    ("title", pa.string()), ("question", pa.string()), ("original", pa.string()),
    ("paraphrase", pa.string()), ("suggestion", pa.string()), ("similarity", pa.float64()),
])


@dataclass(frozen=True, slots=True)
class ParaphrasePair:
    """One original question and its chosen paraphrase."""

    question: SquadQuestion
    paraphrase: str
    suggestion: str | None = None
    similarity: float | None = None


def release_ids(n: int, id_base: int | None = None,
                scheme: str = "dev") -> list[tuple[str, str]]:
    """``(orig_id, para_id)`` of the ``n`` pairs, numbered as in the released sets.

    ``scheme`` picks the base when ``id_base`` is not given: ``dev`` 100 n, ``adv``
    100 (10000 + n).
    """
    if id_base is None:
        if scheme not in ("dev", "adv"):
            raise ValueError(f"id scheme must be 'dev' or 'adv', not {scheme!r}")
        id_base = 100 * n if scheme == "dev" else 100 * (10000 + n)
    base = id_base
    return [(str(base + i + 1), str(base + i)) for i in range(n)]


def squad_file(pairs: Sequence[ParaphrasePair], ids: Sequence[tuple[str, str]],
               side: str, lowercase: bool = True) -> dict[str, Any]:
    """The JSON content of the ``orig`` or ``para`` file of ``pairs``.

    The original question is the SQuAD question, lower-cased when ``lowercase`` (as in the
    non-adversarial release; nothing else is changed, spacing included); the paraphrase is
    written as given.
    """
    if side not in ("orig", "para"):
        raise ValueError(f"side must be 'orig' or 'para', not {side!r}")
    data = []
    for i, (pair, (orig_id, para_id)) in enumerate(zip(pairs, ids, strict=True)):
        q = pair.question
        original = q.question.lower() if lowercase else q.question
        text = original if side == "orig" else pair.paraphrase
        qa = {"answers": [{"text": a.text, "answer_start": a.answer_start} for a in q.answers],
              "question": text, "id": orig_id if side == "orig" else para_id}
        data.append({"title": f"Title_{i}",
                     "paragraphs": [{"qas": [qa], "context": q.context}]})
    return {"version": "1.1", "data": data}


def write_test_set(pairs: Sequence[ParaphrasePair], out_dir: Path, name: str = "dev",
                   id_base: int | None = None, lowercase: bool = True,
                   id_scheme: str = "dev") -> dict[str, Path]:
    """Write ``{name}_orig.json``, ``{name}_para.json`` and ``{name}_pairs.parquet``."""
    out_dir = Path(out_dir)
    ids = release_ids(len(pairs), id_base, id_scheme)
    paths = {"orig": out_dir / f"{name}_orig.json", "para": out_dir / f"{name}_para.json",
             "pairs": out_dir / f"{name}_pairs.parquet"}
    write_squad(paths["orig"], squad_file(pairs, ids, "orig", lowercase))
    write_squad(paths["para"], squad_file(pairs, ids, "para", lowercase))
    write_table(paths["pairs"], [
        {"orig_id": o, "para_id": p, "squad_id": pair.question.id, "title": f"Title_{i}",
         "question": normalise_question(pair.question.question),
         "original": pair.question.question, "paraphrase": pair.paraphrase,
         "suggestion": pair.suggestion, "similarity": pair.similarity}
        for i, (pair, (o, p)) in enumerate(zip(pairs, ids, strict=True))
    ], schema=PAIRS_SCHEMA)
    return paths


def choose_pairs(questions: Sequence[SquadQuestion], accepted: Sequence[dict[str, Any]],
                 seed: int) -> list[ParaphrasePair]:
    """At most one accepted paraphrase per question, at random (seeded), in question order.

    ``accepted`` rows hold ``qid``, ``paraphrase`` and optionally ``suggestion`` and
    ``similarity``. The choice for a question does not depend on the other questions' rows.
    """
    by_qid: dict[str, list[dict[str, Any]]] = {}
    for row in accepted:
        by_qid.setdefault(row["qid"], []).append(row)
    pairs = []
    for question in questions:
        options = by_qid.get(question.id)
        if not options:
            continue
        options = sorted(options, key=lambda r: r["paraphrase"])
        row = random.Random(f"{seed}:{question.id}").choice(options)
        pairs.append(ParaphrasePair(question, row["paraphrase"], row.get("suggestion"),
                              row.get("similarity")))
    return pairs


def build_test_set(squad_path: Path, scored_path: Path, out_dir: Path, seed: int = 2019,
                   keep_column: str = "keep_test_set", name: str = "dev",
                   id_base: int | None = None, on_error: str = "raise",
                   id_scheme: str = "dev") -> dict[str, Any]:
    """The test set from the scored candidates (rows with ``keep_column`` true); the counts.

    When no paraphrase passes (e.g. the smoke profile's barely trained model), the files are
    still written, with no questions, and a warning is logged.
    """
    skips = SkipCounter(str(squad_path))
    questions = list(read_squad(squad_path, on_error=on_error, skips=skips).questions())
    table = read_table(scored_path)
    if keep_column not in table.column_names:
        raise ValueError(f"{scored_path}: no column {keep_column!r} (columns: "
                         f"{table.column_names})")
    accepted = [row for row in table.to_pylist() if row[keep_column]]
    pairs = choose_pairs(questions, accepted, seed)
    if not pairs:
        log.warning("no paraphrase passed the filter (%s) for any of the %d questions of %s: "
                    "the test set files are empty", keep_column, len(questions), squad_path)
    write_test_set(pairs, out_dir, name, id_base, id_scheme=id_scheme)
    return {"questions": len(questions), "accepted_candidates": len(accepted),
            "questions_with_accepted": len({r["qid"] for r in accepted}),
            "test_pairs": len(pairs), "squad_skipped": skips.total}


def read_test_pairs(out_dir: Path, name: str = "dev") -> list[dict[str, Any]]:
    """The rows of ``{name}_pairs.parquet``."""
    return read_table(Path(out_dir) / f"{name}_pairs.parquet").to_pylist()
