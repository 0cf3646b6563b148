"""DPR formats: retriever training data and question/answer CSVs.

Retriever training data, ``*-train.json`` / ``*-dev.json`` (a JSON list, streamed with ijson)::

    [{"dataset", "question", "answers": [str], "positive_ctxs": [ctx], "negative_ctxs": [ctx],
      "hard_negative_ctxs": [ctx]}]     ctx = {"title", "text", "score", "title_score",
                                               "passage_id"}

Question/answer files, ``*.qa.csv``: tab-separated, no header, ``question<TAB>answers`` where
``answers`` is a JSON or Python list literal (``["a1", "a2"]`` or ``['a1', 'a2']``). Read with
the :mod:`csv` module like DPR's own loader does.

Retrieval results, DPR's third format, are read and written by :mod:`tasks.io.dpr_results`.

JSON records are named by their 0-based index (``record 7``), CSV lines by 1-based number.
"""

from __future__ import annotations

import ast
import csv
import json
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from tasks.io._jsonstream import iter_json_array, write_json_array
from tasks.io.atomic import atomic_write
from tasks.io.dpr_fields import (
    Invalid,
    answers_field,
    id_field,
    located_error,
    number_field,
    string_field,
)
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview
from tasks.io.text import csv_records, handle_record_error, record_lines

CTX_LISTS = ("positive_ctxs", "negative_ctxs", "hard_negative_ctxs")


# --- retriever training data ------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DprCtx:
    """A passage of a DPR training example. Missing optional fields are ``None``."""

    title: str
    text: str
    score: float | None = None
    title_score: float | None = None
    passage_id: str | None = None


@dataclass(frozen=True, slots=True)
class DprExample:
    """A DPR retriever training example."""

    dataset: str | None
    question: str
    answers: tuple[str, ...]
    positive_ctxs: tuple[DprCtx, ...]
    negative_ctxs: tuple[DprCtx, ...] = ()
    hard_negative_ctxs: tuple[DprCtx, ...] = ()


def _dpr_ctx(value: Any, inner: str) -> DprCtx:
    if not isinstance(value, dict):
        raise Invalid(inner, "a ctx object {title, text, score, title_score, passage_id}",
                       preview(value))
    for key in ("title", "text"):
        if key not in value:
            raise Invalid(inner, f'a ctx with "{key}"', f"keys {sorted(value)}")
    return DprCtx(
        title=string_field(value["title"], f"{inner}.title"),
        text=string_field(value["text"], f"{inner}.text"),
        score=number_field(value.get("score"), f"{inner}.score"),
        title_score=number_field(value.get("title_score"), f"{inner}.title_score"),
        passage_id=id_field(value.get("passage_id"), f"{inner}.passage_id", required=False),
    )


def parse_dpr_example(value: Any, path: str | Path = "<DPR>", index: int = 0) -> DprExample:
    """Validate one decoded training example; :class:`DataFormatError` names file and record."""
    try:
        if not isinstance(value, dict):
            raise Invalid("", "an example object {question, answers, positive_ctxs, ...}",
                           preview(value))
        for key in ("question", "answers", "positive_ctxs"):
            if key not in value:
                raise Invalid("", f'an example with "{key}"', f"keys {sorted(value)}")
        dataset = value.get("dataset")
        if dataset is not None:
            dataset = string_field(dataset, "dataset")
        lists: dict[str, tuple[DprCtx, ...]] = {}
        for key in CTX_LISTS:
            items = value.get(key, [])
            if not isinstance(items, list):
                raise Invalid(key, "a list of ctx objects", preview(items))
            lists[key] = tuple(_dpr_ctx(c, f"{key}[{i}]") for i, c in enumerate(items))
        return DprExample(
            dataset=dataset,
            question=string_field(value["question"], "question", allow_empty=False),
            answers=answers_field(value["answers"], "answers", allow_empty=True,
                                  allow_blank=True),  # (training reads the contexts)
            positive_ctxs=lists["positive_ctxs"],
            negative_ctxs=lists["negative_ctxs"],
            hard_negative_ctxs=lists["hard_negative_ctxs"],
        )
    except Invalid as problem:
        raise located_error(path, f"record {index}", problem) from None


def iter_dpr_examples(path: str | Path, on_error: str = "raise",
                      skips: SkipCounter | None = None) -> Iterator[DprExample]:
    """Stream the examples of a DPR retriever training file (``nq-train.json`` ...).

    A record without ``question``/``answers``/``positive_ctxs``, a ctx without ``title`` or
    ``text``, or a value of the wrong type raises :class:`DataFormatError` naming the file and
    the record index, or with ``on_error="skip"`` is counted in ``skips``. Not a JSON array, or
    broken JSON, always raises.
    """
    for index, value in iter_json_array(path, "a JSON array of DPR training examples"):
        try:
            example = parse_dpr_example(value, path, index)
        except DataFormatError as error:
            handle(error, on_error, skips)
            continue
        yield example


def _ctx_to_dict(ctx: DprCtx) -> dict[str, Any]:
    record: dict[str, Any] = {"title": ctx.title, "text": ctx.text}
    for key in ("score", "title_score", "passage_id"):
        value = getattr(ctx, key)
        if value is not None:
            record[key] = value
    return record


def dpr_example_to_dict(example: DprExample) -> dict[str, Any]:
    """The example in DPR's layout; ``None`` optional fields are left out."""
    record: dict[str, Any] = {}
    if example.dataset is not None:
        record["dataset"] = example.dataset
    record["question"] = example.question
    record["answers"] = list(example.answers)
    for key in CTX_LISTS:
        record[key] = [_ctx_to_dict(c) for c in getattr(example, key)]
    return record


def write_dpr_examples(path: str | Path, examples: Iterable[DprExample]) -> Path:
    """Atomically stream examples out as a DPR training JSON list (one example a line)."""
    return write_json_array(path, (dpr_example_to_dict(e) for e in examples))


# --- question/answer CSV ----------------------------------------------------------------------

class QaRow(NamedTuple):
    """One ``*.qa.csv`` row; unpacks as ``(question, answers)``."""

    question: str
    answers: tuple[str, ...]


#: What :func:`ast.literal_eval` raises on a malformed literal (``{[]}``, a set or dict with an
#: unhashable member, is a TypeError; deep nesting a RecursionError or MemoryError).
_LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


def _parse_answer_list(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        with warnings.catch_warnings():  # a bad literal is our error, not a SyntaxWarning line
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.literal_eval(text)
    except _LITERAL_ERRORS:
        raise Invalid("", 'a JSON or Python list literal of answers (["a1", "a2"])',
                       preview(text)) from None


def iter_qa_csv(path: str | Path, on_error: str = "raise",
                skips: SkipCounter | None = None) -> Iterator[QaRow]:
    """Stream ``(question, answers)`` rows of a DPR ``*.qa.csv`` file.

    A row without exactly 2 tab-separated fields, an empty question, or a second column that is
    not a non-empty list of strings raises :class:`DataFormatError` naming the line, or with
    ``on_error="skip"`` is counted in ``skips``. Always raised, even when skipping: a bad row
    spanning several lines (an unclosed quote takes the lines after it into its field; the error
    names the lines), bytes that are not UTF-8 (the error names the first bad line; row
    boundaries after it cannot be trusted) and a TSV error from :mod:`csv`.
    """
    with open(path, encoding="utf-8-sig", newline="") as stream:
        reader = csv.reader(stream, delimiter="\t")
        for first, last, row in csv_records(reader, path, "a well-formed TSV row"):
            if not row:
                continue
            try:
                item = _qa_row(row)
            except Invalid as problem:
                error = located_error(path, record_lines(first, last), problem)
                handle_record_error(error, first, last, on_error, skips)
                continue
            yield item


def _qa_row(row: list[str]) -> QaRow:
    if len(row) != 2:
        raise Invalid("", "2 tab-separated fields (question, answer list)",
                       f"{len(row)} in {preview(row)}")
    question = string_field(row[0], "question", allow_empty=False)
    answers = answers_field(_parse_answer_list(row[1].strip()), "answers", allow_empty=False)
    return QaRow(question, answers)


def _qa_question_field(question: str) -> str:
    if any(c in question for c in "\t\r\n") or question.startswith('"'):
        return '"' + question.replace('"', '""') + '"'
    return question


def write_qa_csv(path: str | Path, rows: Iterable[tuple[str, Sequence[str]]]) -> Path:
    """Atomically write ``(question, answers)`` rows as a DPR ``*.qa.csv``.

    The answers column is a JSON list (also a valid Python literal, so DPR's and Pyserini's
    loaders read it); the question is quoted CSV-style only when it must be (a tab, a line
    break or a leading quote), so ordinary rows look like the release files.
    """
    with atomic_write(path, newline="\n") as out:
        for question, answers in rows:
            if isinstance(answers, str):
                raise ValueError(f"answers of {question!r} must be a list of strings, not a str")
            if not question.strip() or not answers:
                raise ValueError(f"need a question and at least one answer: {question!r}")
            out.write(f"{_qa_question_field(question)}\t"
                      f"{json.dumps(list(answers), ensure_ascii=False)}\n")
    return Path(path)
