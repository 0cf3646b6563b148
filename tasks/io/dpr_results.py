"""Retrieval results (DPR / EntityQuestions style), a JSON list in question order::

    [{"question", "answers": [str], "ctxs": [{"id", "title", "text", "score", "has_answer"}]}]

with ``ctxs`` in rank order. DPR writes ``score`` as a string, so numeric strings are accepted.
Records are named by their 0-based index (``record 7``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io._jsonstream import iter_json_array, write_json_array
from tasks.io.dpr_fields import (
    Invalid,
    answers_field,
    id_field,
    located_error,
    number_field,
    string_field,
)
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview


@dataclass(frozen=True, slots=True)
class RetrievedCtx:
    """A retrieved passage. ``has_answer`` is ``None`` when not judged."""

    id: str
    title: str
    text: str
    score: float | None = None
    has_answer: bool | None = None


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """A question, its gold answers and its retrieved passages in rank order."""

    question: str
    answers: tuple[str, ...]
    ctxs: tuple[RetrievedCtx, ...]


def _retrieved_ctx(value: Any, inner: str) -> RetrievedCtx:
    if not isinstance(value, dict):
        raise Invalid(inner, "a ctx object {id, title, text, score, has_answer}", preview(value))
    for key in ("id", "text"):
        if key not in value:
            raise Invalid(inner, f'a ctx with "{key}"', f"keys {sorted(value)}")
    has_answer = value.get("has_answer")
    if has_answer is not None and not isinstance(has_answer, bool):
        raise Invalid(f"{inner}.has_answer", "true, false or null", preview(has_answer))
    title = value.get("title")
    return RetrievedCtx(
        id=id_field(value["id"], f"{inner}.id", required=True),  # type: ignore[arg-type]
        title="" if title is None else string_field(title, f"{inner}.title"),
        text=string_field(value["text"], f"{inner}.text"),
        score=number_field(value.get("score"), f"{inner}.score"),
        has_answer=has_answer,
    )


def parse_retrieval_result(value: Any, path: str | Path = "<retrieval results>",
                           index: int = 0) -> RetrievalResult:
    """Validate one decoded result; :class:`DataFormatError` names file and record index."""
    try:
        if not isinstance(value, dict):
            raise Invalid("", "a result object {question, answers, ctxs}", preview(value))
        for key in ("question", "answers", "ctxs"):
            if key not in value:
                raise Invalid("", f'a result with "{key}"', f"keys {sorted(value)}")
        ctxs = value["ctxs"]
        if not isinstance(ctxs, list):
            raise Invalid("ctxs", "a list of ctx objects", preview(ctxs))
        return RetrievalResult(
            question=string_field(value["question"], "question"),
            answers=answers_field(value["answers"], "answers", allow_empty=False),
            ctxs=tuple(_retrieved_ctx(c, f"ctxs[{i}]") for i, c in enumerate(ctxs)),
        )
    except Invalid as problem:
        raise located_error(path, f"record {index}", problem) from None


def iter_retrieval_results(path: str | Path, on_error: str = "raise",
                           skips: SkipCounter | None = None) -> Iterator[RetrievalResult]:
    """Stream a retrieval-results JSON list (see :func:`read_retrieval_results`)."""
    for index, value in iter_json_array(path, "a JSON array of retrieval results"):
        try:
            result = parse_retrieval_result(value, path, index)
        except DataFormatError as error:
            handle(error, on_error, skips)
            continue
        yield result


def read_retrieval_results(path: str | Path, on_error: str = "raise",
                           skips: SkipCounter | None = None) -> list[RetrievalResult]:
    """Read a retrieval-results file (DPR / EntityQuestions style) into a list.

    A result without ``question``/``answers``/``ctxs``, with an empty answers list, or with a
    ctx missing ``id`` or ``text`` raises :class:`DataFormatError` naming the file and the
    record index (and the ctx), or with ``on_error="skip"`` is counted in ``skips``.
    """
    return list(iter_retrieval_results(path, on_error, skips))


def retrieval_result_to_dict(result: RetrievalResult) -> dict[str, Any]:
    """The result in the DPR layout; a ctx's ``None`` score/has_answer are left out."""
    ctxs = []
    for ctx in result.ctxs:
        record: dict[str, Any] = {"id": ctx.id, "title": ctx.title, "text": ctx.text}
        if ctx.score is not None:
            record["score"] = ctx.score
        if ctx.has_answer is not None:
            record["has_answer"] = ctx.has_answer
        ctxs.append(record)
    return {"question": result.question, "answers": list(result.answers), "ctxs": ctxs}


def write_retrieval_results(path: str | Path,
                            results: Iterable[RetrievalResult | Mapping[str, Any]]) -> Path:
    """Atomically stream results out as a JSON list (one result a line, UTF-8)."""
    return write_json_array(path, (
        retrieval_result_to_dict(r) if isinstance(r, RetrievalResult) else dict(r)
        for r in results
    ))
