"""DPR Wikipedia passages, ``psgs_w100.tsv``: streaming reader and writer.

Tab-separated with the header ``id<TAB>text<TAB>title``; in the DPR release the text field is
quoted, with ``"`` doubled inside it. The file is read with the :mod:`csv` module (tab
delimiter, ``"`` quote character), so quoted fields may hold tabs, quotes and line breaks.
Writing uses the same dialect with minimal quoting, which round-trips exactly.

Errors name the 1-based line where the record starts (a quoted field may span lines).
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview

HEADER = ("id", "text", "title")
_FIELD_LIMIT = min(sys.maxsize, 2**31 - 1)


@dataclass(frozen=True, slots=True)
class Passage:
    """One passage: ``id`` (a string, integers from 1 in DPR), its text and article title."""

    id: str
    text: str
    title: str


def _reader(stream: Iterable[str]) -> Any:
    csv.field_size_limit(_FIELD_LIMIT)
    return csv.reader(stream, delimiter="\t", quotechar='"', doublequote=True)


def iter_passages(path: str | Path, on_error: str = "raise",
                  skips: SkipCounter | None = None) -> Iterator[Passage]:
    """Stream the passages of a DPR-style passage TSV.

    The first line must be the header ``id<TAB>text<TAB>title`` (always raises otherwise).
    A record with a field count other than 3 or an empty id raises :class:`DataFormatError`
    naming the line, or with ``on_error="skip"`` is counted in ``skips``.
    """
    with open(path, encoding="utf-8-sig", newline="") as stream:
        reader = _reader(stream)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            raise DataFormatError(path, "line 1", "the header id<TAB>text<TAB>title",
                                  str(exc)) from None
        if header is None or tuple(header) != HEADER:
            raise DataFormatError(path, "line 1", "the header id<TAB>text<TAB>title",
                                  "an empty file" if header is None else preview(header))
        while True:
            start = reader.line_num + 1
            try:
                row = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise DataFormatError(path, f"line {start}", "a well-formed TSV record",
                                      str(exc)) from None
            if not row:  # a blank line
                continue
            if len(row) != 3:
                handle(DataFormatError(path, f"line {start}", "3 tab-separated fields "
                                       "(id, text, title)", f"{len(row)} in {preview(row)}"),
                       on_error, skips)
                continue
            passage_id, text, title = row
            if not passage_id.strip():
                handle(DataFormatError(path, f"line {start}", "a non-empty passage id",
                                       preview(passage_id)), on_error, skips)
                continue
            yield Passage(passage_id, text, title)


def write_passages(path: str | Path, passages: Iterable[Passage]) -> int:
    """Atomically write ``passages`` as a DPR passage TSV with its header; return the count.

    Fields holding tabs, quotes or line breaks are quoted with ``"`` doubled inside
    (:data:`csv.QUOTE_MINIMAL`), so :func:`iter_passages` gives back exactly what was written.
    """
    count = 0
    with atomic_write(path, newline="") as stream:
        writer = csv.writer(stream, delimiter="\t", quotechar='"', doublequote=True,
                            quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        writer.writerow(HEADER)
        for passage in passages:
            if not str(passage.id).strip():
                raise ValueError(f"passage id must not be empty: {passage!r}")
            writer.writerow((passage.id, passage.text, passage.title))
            count += 1
    return count


def count_passages(path: str | Path) -> int:
    """Number of passage records in a passage TSV (header excluded, no validation)."""
    with open(path, encoding="utf-8-sig", newline="") as stream:
        reader = _reader(stream)
        next(reader, None)
        return sum(1 for row in reader if row)
