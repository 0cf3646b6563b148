"""EntityQuestions (Sciavolino et al., 2021) question files: reader, writer, file discovery.

Each relation file is a JSON list of ``{"question": str, "answers": [str, ...]}``. The release
layout::

    dataset/{train,dev,test}/P19.{split}.json
    dataset/one-off/common-random-buckets/P19/bucket{0..7}.test.json   (rand-ent)
    dataset/one-off/nq-seen-buckets/P19/bucket{0..7}.test.json          (train-ent)
    dataset/one-off/no-overlap/P19/P19_no_overlap.{train,dev,test}.json
    dataset/one-off/similar/P19/P19_similar.{split}.json

The release files are ``json.dumps(data, indent=4)`` (ASCII escapes, no final newline);
:func:`write_eq_file` writes exactly that by default, so a read/write round trip of a release
file gives identical bytes. Records are named by their 0-based index in the list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io.atomic import atomic_write
from tasks.io.dpr_fields import BLANK_ANSWER
from tasks.io.errors import (
    TOO_DEEP,
    DataFormatError,
    MissingInputError,
    SkipCounter,
    handle,
    preview,
)
from tasks.io.text import utf8_error

SPLITS = ("train", "dev", "test")
_RELATION_IN_NAME = re.compile(r"(P\d+)(?=[._])")
_RELATION_DIR = re.compile(r"(P\d+)(?:_[A-Za-z_]+)?")


@dataclass(frozen=True, slots=True)
class EQQuestion:
    """One EntityQuestions question with its gold answers (at least one)."""

    question: str
    answers: tuple[str, ...]


def _parse(value: Any, path: str | Path, where: str) -> EQQuestion:
    if not isinstance(value, dict):
        raise DataFormatError(path, where, 'an object {"question", "answers"}', preview(value))
    missing = [key for key in ("question", "answers") if key not in value]
    if missing:
        raise DataFormatError(path, where, 'an object with "question" and "answers"',
                              f"no {', '.join(repr(k) for k in missing)} in {preview(value)}")
    question, answers = value["question"], value["answers"]
    if not isinstance(question, str) or not question.strip():
        raise DataFormatError(path, where, 'a non-empty string "question"', preview(question))
    if not isinstance(answers, list):
        raise DataFormatError(path, where, '"answers" as a list of strings', preview(answers))
    if not answers:
        raise DataFormatError(path, where, "a non-empty answers list", "[]")
    for position, answer in enumerate(answers):
        if not isinstance(answer, str):
            raise DataFormatError(path, where, f"a string answer (answers[{position}])",
                                  preview(answer))
        if not answer.strip():
            raise DataFormatError(path, where, f"{BLANK_ANSWER} (answers[{position}])",
                                  preview(answer))
    return EQQuestion(question, tuple(answers))


def read_eq_file(path: str | Path, on_error: str = "raise",
                 skips: SkipCounter | None = None) -> list[EQQuestion]:
    """Read one EntityQuestions file (``.json`` list; a ``.jsonl`` file is read line by line).

    Raises :class:`DataFormatError` naming the file and the record index for a file that is not
    a JSON list, a record without ``question``/``answers``, an empty answers list or an answer
    that is not a string; with ``on_error="skip"`` bad records are counted in ``skips``. Bytes
    that are not UTF-8 always raise, naming the first bad line (record boundaries after it cannot
    be trusted).
    """
    path = Path(path)
    with open(path, encoding="utf-8-sig") as stream:
        try:
            text = stream.read()
        except UnicodeDecodeError as exc:
            raise utf8_error(path, exc) from None
    if path.suffix == ".jsonl":
        values: list[tuple[str, Any]] = []
        for lineno, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                values.append((f"line {lineno}", json.loads(line)))
            except json.JSONDecodeError as exc:
                handle(DataFormatError(path, f"line {lineno}", "one JSON object per line",
                                       exc.msg), on_error, skips)
            except RecursionError:
                handle(DataFormatError(path, f"line {lineno}", "one JSON object per line",
                                       TOO_DEEP), on_error, skips)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"line {exc.lineno} column {exc.colno}",
                                  "a JSON list of {question, answers}", exc.msg) from None
        except RecursionError:
            raise DataFormatError(path, "top level", "a JSON list of {question, answers}",
                                  TOO_DEEP) from None
        if not isinstance(data, list):
            raise DataFormatError(path, "top level", "a JSON list of {question, answers}",
                                  type(data).__name__)
        values = [(f"record {index}", value) for index, value in enumerate(data)]
    questions: list[EQQuestion] = []
    for where, value in values:
        try:
            questions.append(_parse(value, path, where))
        except DataFormatError as error:
            handle(error, on_error, skips)
    return questions


def write_eq_file(path: str | Path, questions: Iterable[EQQuestion | Mapping[str, Any]],
                  ensure_ascii: bool = True, indent: int | None = 4) -> Path:
    """Atomically write questions as an EntityQuestions JSON list.

    The defaults reproduce the release formatting byte for byte (``indent=4``, non-ASCII as
    ``\\uXXXX`` escapes, no final newline); pass ``ensure_ascii=False`` for raw UTF-8.
    Raises ``ValueError`` for a question without answers.
    """
    records = []
    for item in questions:
        if isinstance(item, EQQuestion):
            question, answers = item.question, list(item.answers)
        else:
            question, answers = item["question"], list(item["answers"])
        if not answers:
            raise ValueError(f"question {question!r} has no answers")
        records.append({"question": question, "answers": answers})
    with atomic_write(path, newline="\n") as out:
        out.write(json.dumps(records, ensure_ascii=ensure_ascii, indent=indent))
    return Path(path)


def eq_relation_of(path: str | Path) -> str:
    """The relation id of an EntityQuestions file from its name or its directory.

    ``P19.test.json``, ``P19_no_overlap.train.json``, ``P19_similar.dev.json`` -> ``P19`` from
    the name; ``.../P19/bucket3.test.json`` -> ``P19`` from the parent directory. Raises
    :class:`DataFormatError` when neither holds a relation id.
    """
    path = Path(path)
    match = _RELATION_IN_NAME.match(path.name)
    if match:
        return match.group(1)
    match = _RELATION_DIR.fullmatch(path.parent.name)
    if match:
        return match.group(1)
    raise DataFormatError(path, "file name", "a relation id (P<digits>) at the start of the "
                          "file name or as the parent directory's name", preview(path.name))


def _relation_number(relation: str) -> int:
    return int(relation[1:])


def discover_eq_files(root: str | Path, split: str) -> dict[str, Path]:
    """``{relation: path}`` of the per-relation files ``P*.{split}.json`` of one split.

    ``root`` is the release's ``dataset`` directory (holding ``train/``, ``dev/``, ``test/``)
    or the split directory itself. Relations are ordered by number (P17 before P106).
    Raises ``FileNotFoundError`` when there is no such directory.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    root = Path(root)
    directory = root / split if (root / split).is_dir() else root
    if not directory.is_dir() or (directory == root and root.name != split):
        raise MissingInputError(f"no {split!r} split directory under {root}: the "
                                "entity-questions stage writes the dataset (qastress stage "
                                "entity-questions)")
    pattern = re.compile(rf"(P\d+)\.{split}\.json")
    found = {}
    for child in directory.iterdir():
        match = pattern.fullmatch(child.name)
        if match and child.is_file():
            found[match.group(1)] = child
    return {relation: found[relation] for relation in sorted(found, key=_relation_number)}
