"""Errors raised where data enters the pipeline, and the counting of skipped records."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


class DataFormatError(ValueError):
    """A record of an input file does not have the expected shape.

    The message always names the file, the place in it (line number or record index) and what
    was expected, e.g. ``psgs_w100.tsv, line 17: expected 3 tab-separated fields ...``.
    """

    def __init__(self, path: str | Path, where: str, expected: str, got: str | None = None):
        self.path = str(path)
        self.where = where
        self.expected = expected
        self.got = got
        message = f"{self.path}, {where}: expected {expected}"
        if got is not None:
            message += f"; got {got}"
        super().__init__(message)

    def __reduce__(self) -> tuple:
        """Pickled with its fields, so that it crosses to the flow from a Dask or Ray worker
        (the default pickles only the message, which ``__init__`` cannot take alone)."""
        return (type(self), (self.path, self.where, self.expected, self.got))


class MissingInputError(FileNotFoundError):
    """An input of a stage is not there. The message names the path, what it should hold and
    what makes it (the stage to run first, or the data to fetch); ``qastress`` prints it as
    one line and exits 2."""


def require_input(path: str | Path, what: str, made_by: str) -> Path:
    """``path`` when it exists, else :class:`MissingInputError`:
    ``<path>: no <what>; <made_by>``."""
    path = Path(path)
    if not path.exists():
        raise MissingInputError(f"{path}: no {what}; {made_by}")
    return path


def preview(value: object, limit: int = 80) -> str:
    """Short ``repr`` of a value for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class SkipCounter:
    """Counts records skipped on purpose, by reason, so nothing is dropped silently.

    Readers take ``on_error="raise" | "skip"``; in skip mode each bad record is counted here
    (and the first few examples kept) instead of raising, and the caller reports the totals.
    """

    source: str
    counts: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    max_examples: int = 5

    def skip(self, error: DataFormatError, reason: str | None = None) -> None:
        """Record one skipped record."""
        self.counts[reason or error.expected] += 1
        if len(self.examples) < self.max_examples:
            self.examples.append(str(error))

    @property
    def total(self) -> int:
        """Number of skipped records."""
        return sum(self.counts.values())

    def summary(self) -> str:
        """One line per reason, for logs and reports."""
        if not self.total:
            return f"{self.source}: no records skipped"
        parts = [f"{n} x {reason}" for reason, n in self.counts.most_common()]
        return f"{self.source}: skipped {self.total} records ({'; '.join(parts)})"


def handle(error: DataFormatError, on_error: str, skips: SkipCounter | None) -> None:
    """Raise ``error`` or count it as skipped, as ``on_error`` says."""
    if on_error == "raise" or skips is None:
        raise error
    if on_error != "skip":
        raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    skips.skip(error)


#: What a JSON file nested deeper than Python's parser follows is said to be.
TOO_DEEP = "JSON nested deeper than Python's parser follows (thousands of levels)"
