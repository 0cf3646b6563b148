"""DPR Wikipedia passages, ``psgs_w100.tsv``: streaming reader and writer.

Tab-separated with the header ``id<TAB>text<TAB>title``; in the DPR release the text field is
quoted, with ``"`` doubled inside it. The file is read with the :mod:`csv` module (tab
delimiter, ``"`` quote character), so quoted fields may hold tabs, quotes and line breaks.
Writing uses the same dialect with minimal quoting, which round-trips exactly.

Errors name the 1-based line where the record starts, or ``lines 7-9`` for a bad record that
spans several lines (a quoted field may hold line breaks; an unclosed quote takes in the lines
after it).
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, preview
from tasks.io.text import csv_records, handle_record_error, record_lines, utf8_error

HEADER = ("id", "text", "title")
_HEADER_ROW = list(HEADER)
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


class _SeenIds:
    """The passage ids read so far: a bitmap for ids in DPR's scheme (decimal integers from 1:
    21M of them take 21 MB, not the ~2 GB of a set of strings), a set for any other id."""

    _MAX_BITMAP = 1 << 31

    def __init__(self) -> None:
        self.bitmap = bytearray()
        self.others: set[str] = set()

    def add(self, pid: str) -> bool:
        """Record ``pid``; False when it was seen before."""
        if pid.isdigit() and pid.isascii() and (pid == "0" or pid[0] != "0"):
            number = int(pid)
            if number < self._MAX_BITMAP:
                if number >= len(self.bitmap):
                    self.bitmap.extend(bytes(max(number + 1 - len(self.bitmap),
                                                 len(self.bitmap))))
                if self.bitmap[number]:
                    return False
                self.bitmap[number] = 1
                return True
        if pid in self.others:
            return False
        self.others.add(pid)
        return True


@dataclass(frozen=True, slots=True)
class RecordMark:
    """Where a record of a passage TSV begins: ``index`` (0-based among the passages), the
    text stream's position (an opaque :meth:`io.TextIOBase.tell` cookie for ``seek`` on the
    same file) and the 1-based ``line``."""

    index: int
    position: int
    line: int


def iter_passages(path: str | Path, on_error: str = "raise",
                  skips: SkipCounter | None = None) -> Iterator[Passage]:
    """Stream the passages of a DPR-style passage TSV.

    The first line must be the header ``id<TAB>text<TAB>title`` (always raises otherwise).
    A record with a field count other than 3, an empty id, an id seen before in the file, a
    title holding a line break (an unclosed quote in the title, which would take the records
    after it), or the header line again raises :class:`DataFormatError` naming the line, or
    with ``on_error="skip"`` is counted in ``skips`` (a repeated id's first record is kept).
    Always raised, even when skipping: a bad record spanning several lines (an unclosed quote
    takes the lines after it into its field; the error names the lines), bytes that are not
    UTF-8 (the error names the first bad line; record boundaries after it cannot be trusted)
    and a TSV error from :mod:`csv`.
    """
    with open(path, encoding="utf-8-sig", newline="") as stream:
        reader = _reader(stream)
        _check_header(reader, path)
        yield from _records(reader, path, on_error, skips)


def mark_passages(path: str | Path, every: int) -> list[RecordMark]:
    """One pass over ``path`` that checks every record as :func:`iter_passages` does (raising)
    and returns where passages ``0, every, 2 * every, ...`` begin, for
    :func:`iter_passages_from`: a reader of a part of a large file seeks to the mark at or
    before it instead of parsing every record before it again."""
    if every < 1:
        raise ValueError(f"every must be >= 1, not {every}")
    marks: list[RecordMark] = []
    with open(path, encoding="utf-8-sig", newline="") as stream:
        # readline, not the file's iterator: tell() is disabled while a text file iterates
        reader = _reader(iter(stream.readline, ""))
        _check_header(reader, path)
        records = _records(reader, path, "raise", None)
        index = 0
        while True:
            if index % every == 0:
                mark = RecordMark(index, stream.tell(), reader.line_num + 1)
            if next(records, None) is None:
                return marks
            if index % every == 0:
                marks.append(mark)
            index += 1


def iter_passages_from(path: str | Path, mark: RecordMark) -> Iterator[Passage]:
    """The passages of ``path`` from the one at ``mark`` (from :func:`mark_passages` over the
    same version of the file) to the end, checked as :func:`iter_passages` checks them
    (raising), errors naming the file's own line numbers. Repeated ids are caught among the
    passages read here; :func:`mark_passages` checked the whole file."""
    with open(path, encoding="utf-8-sig", newline="") as stream:
        stream.seek(mark.position)
        reader = _reader(stream)
        yield from _records(reader, path, "raise", None, line_offset=mark.line - 1)


def _records(reader: Any, path: str | Path, on_error: str, skips: SkipCounter | None,
             line_offset: int = 0) -> Iterator[Passage]:
    """The checked passages of a csv ``reader`` past the header; error lines are the
    reader's plus ``line_offset``."""
    header = _HEADER_ROW
    seen = _SeenIds()
    for first, last, row in csv_records(reader, path, "a well-formed TSV record", line_offset):
        if len(row) == 3 and row[0].strip() and "\n" not in row[2] and row != header:
            if seen.add(row[0]):
                yield Passage(*row)
                continue
            error = DataFormatError(path, record_lines(first, last),
                                    "a passage id not used before in the file",
                                    f"{preview(row[0])} a second time")
            handle_record_error(error, first, last, on_error, skips)
        elif row:  # not a blank line
            error = DataFormatError(path, record_lines(first, last), *_problem(row))
            handle_record_error(error, first, last, on_error, skips)


def _check_header(reader: Any, path: str | Path) -> None:
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise DataFormatError(path, "line 1", "the header id<TAB>text<TAB>title",
                              str(exc)) from None
    except UnicodeDecodeError as exc:
        raise utf8_error(path, exc) from None
    if header is None or tuple(header) != HEADER:
        raise DataFormatError(path, "line 1", "the header id<TAB>text<TAB>title",
                              "an empty file" if header is None else preview(header))


def _problem(row: list[str]) -> tuple[str, str]:
    """What is wrong with a bad record: ``(expected, got)``."""
    if len(row) != 3:
        return "3 tab-separated fields (id, text, title)", f"{len(row)} in {preview(row)}"
    if row == _HEADER_ROW:
        return "a passage record (the header only on line 1)", f"the header {preview(row)}"
    if "\n" in row[2]:  # no title holds a line break: a quote opened in it took later lines
        return "a title on one line", preview(row[2])
    return "a non-empty passage id", preview(row[0])


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
    """Number of passage records in a passage TSV (header excluded, no validation).

    Bytes that are not UTF-8 raise :class:`DataFormatError` naming the first bad line.
    """
    with open(path, encoding="utf-8-sig", newline="") as stream:
        reader = _reader(stream)
        try:
            next(reader, None)
            return sum(1 for row in reader if row)
        except UnicodeDecodeError as exc:
            raise utf8_error(path, exc) from None
