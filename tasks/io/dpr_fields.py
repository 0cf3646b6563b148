"""Field checks shared by the DPR formats' readers (:mod:`tasks.io.dpr`,
:mod:`tasks.io.dpr_results`).

Each check returns the field's value or raises :class:`Invalid` naming where inside the record
the field is; the reader turns that into a :class:`DataFormatError` naming the file and the
record (:func:`located_error`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tasks.io.errors import DataFormatError, preview


class Invalid(Exception):
    """A field that is not what the format expects, located inside its record (``inner``)."""

    def __init__(self, inner: str, expected: str, got: str | None = None):
        super().__init__(inner)
        self.inner, self.expected, self.got = inner, expected, got


def located_error(path: str | Path, where: str, problem: Invalid) -> DataFormatError:
    """The :class:`DataFormatError` of ``problem`` in the record ``where`` of ``path``."""
    place = f"{where}, {problem.inner}" if problem.inner else where
    return DataFormatError(path, place, problem.expected, problem.got)


def string_field(value: Any, inner: str, allow_empty: bool = True) -> str:
    """A string (non-blank unless ``allow_empty``)."""
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise Invalid(inner, "a string" if allow_empty else "a non-empty string", preview(value))
    return value


#: Why a blank gold answer is refused where answers are matched against passages.
BLANK_ANSWER = "a non-blank answer string (a blank one is found in every passage)"


def answers_field(value: Any, inner: str, allow_empty: bool,
                  allow_blank: bool = False) -> tuple[str, ...]:
    """A list of answer strings (non-empty unless ``allow_empty``; each with a non-space
    character unless ``allow_blank``: DPR's and EntityQuestions' matchers find an empty
    token sequence in every passage, so a blank answer would make every question a hit)."""
    if not isinstance(value, list | tuple):
        raise Invalid(inner, "a list of answer strings", preview(value))
    if not value and not allow_empty:
        raise Invalid(inner, "a non-empty answers list", "[]")
    for position, answer in enumerate(value):
        if not isinstance(answer, str):
            raise Invalid(f"{inner}[{position}]", "a string answer", preview(answer))
        if not allow_blank and not answer.strip():
            raise Invalid(f"{inner}[{position}]", BLANK_ANSWER, preview(answer))
    return tuple(value)


def number_field(value: Any, inner: str) -> float | None:
    """A number, a numeric string (as DPR writes scores) or ``None``."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise Invalid(inner, "a number", preview(value))
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    raise Invalid(inner, "a number (or a numeric string)", preview(value))


def id_field(value: Any, inner: str, required: bool) -> str | None:
    """A non-empty string or integer id, as a string; ``None`` when absent and not required."""
    if value is None and not required:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value:
        return value
    raise Invalid(inner, "a non-empty id (string or integer)", preview(value))
