"""Entity-linking output, the project's interchange: JSON lines ``{question, entities}``::

    {"question": "Where was Douglas Adams born?", "entities": ["Q42"]}

``entities`` lists the linked entity ids in the linker's order (possibly empty). An optional
``id`` names the question (e.g. a SQuAD question id, for sidecars keyed by id). Any linker
(ELQ or the built-in alias-dictionary linker) is adapted to this form. Ids are kept as strings
without a format check, since a linker may output Wikipedia titles; other keys of a line are
ignored. Errors name the file and the 1-based line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io._jsonstream import iter_jsonl, write_jsonl
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview


@dataclass(frozen=True, slots=True)
class LinkedQuestion:
    """A question and the ids of the entities linked in it."""

    question: str
    entities: tuple[str, ...] = ()
    id: str | None = None


def _parse(value: Any, path: str | Path, where: str) -> LinkedQuestion:
    if not isinstance(value, dict):
        raise DataFormatError(path, where, 'an object {"question", "entities"}', preview(value))
    question = value.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataFormatError(path, where, 'a non-empty string "question"', preview(question))
    entities = value.get("entities")
    if not isinstance(entities, list) or not all(isinstance(e, str) and e for e in entities):
        raise DataFormatError(path, where, '"entities" as a list of non-empty id strings',
                              preview(entities))
    qid = value.get("id")
    if qid is not None and (not isinstance(qid, str) or not qid):
        raise DataFormatError(path, where, '"id" as a non-empty string (or absent)', preview(qid))
    return LinkedQuestion(question, tuple(entities), qid)


def iter_numbered_linked_questions(path: str | Path, on_error: str = "raise",
                                   skips: SkipCounter | None = None
                                   ) -> Iterator[tuple[int, LinkedQuestion]]:
    """Like :func:`iter_linked_questions`, with the 1-based file line of each question (blank
    and skipped lines counted), for callers that report errors of their own, such as a
    repeated ``id`` where questions are keyed by it (the reader does not check ids: they are
    optional and only some consumers key by them)."""
    for lineno, value in iter_jsonl(path, on_error, skips):
        try:
            item = _parse(value, path, f"line {lineno}")
        except DataFormatError as error:
            handle(error, on_error, skips)
            continue
        yield lineno, item


def iter_linked_questions(path: str | Path, on_error: str = "raise",
                          skips: SkipCounter | None = None) -> Iterator[LinkedQuestion]:
    """Stream the linked questions of an entity-linking JSONL file.

    A malformed line raises :class:`DataFormatError` naming file and line, or with
    ``on_error="skip"`` is counted in ``skips``.
    """
    for _, item in iter_numbered_linked_questions(path, on_error, skips):
        yield item


def write_linked_questions(path: str | Path, items: Iterable[LinkedQuestion]) -> Path:
    """Atomically write linked questions as JSON lines (UTF-8, non-ASCII kept), in order."""
    return write_jsonl(path, ({**({"id": item.id} if item.id is not None else {}),
                               "question": item.question, "entities": list(item.entities)}
                              for item in items))
