"""Text files as the readers see them: where a file stops being UTF-8, numbered lines, csv
records with the lines they span, and the errors of csv records that may span lines.

Readers that decode a file through :class:`io.TextIOWrapper` (the :mod:`csv` readers, JSON
loaded at once) learn of a bad byte only as a :class:`UnicodeDecodeError` whose position is an
offset into a decoding chunk, not a line. :func:`utf8_error` turns it into a
:class:`~tasks.io.errors.DataFormatError` naming the file, the 1-based line and the byte in it,
by scanning the file again line by line (only on this error path, so reading valid files costs
nothing extra). Gzipped files are scanned decompressed.
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tasks.io.errors import DataFormatError, SkipCounter, handle

_GZIP_MAGIC = b"\x1f\x8b"


def first_invalid_utf8_line(path: str | Path) -> tuple[int, int, str] | None:
    """``(line number, byte offset in the line, reason)`` of the first line of ``path`` that
    is not valid UTF-8 (1-based line, 0-based byte), or None when every line decodes."""
    with open(path, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == _GZIP_MAGIC else raw
        for lineno, line in enumerate(stream, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return lineno, exc.start, exc.reason
    return None


def utf8_error(path: str | Path, exc: UnicodeDecodeError | None = None) -> DataFormatError:
    """The :class:`DataFormatError` for a file of ``path`` that is not valid UTF-8: it names
    the first bad line and byte (``exc``, the decoder's error, is the fallback description
    when no line fails on its own, e.g. a multi-byte character cut by the end of the file)."""
    found = first_invalid_utf8_line(path)
    if found is None:
        reason = exc.reason if exc is not None else "undecodable bytes"
        return DataFormatError(path, "end of file", "UTF-8 text", reason)
    lineno, byte, reason = found
    return DataFormatError(path, f"line {lineno}", "UTF-8 text", f"{reason} at byte {byte}")


def numbered_lines(path: str | Path, newline: str | None = None) -> Iterator[tuple[int, str]]:
    """``(1-based line number, line)`` of a UTF-8 text file, a byte-order mark stripped
    (``newline`` as :func:`open` takes it); bytes that are not UTF-8 raise
    :class:`DataFormatError` naming the first bad line."""
    with open(path, encoding="utf-8-sig", newline=newline) as stream:
        try:
            yield from enumerate(stream, start=1)
        except UnicodeDecodeError as exc:
            raise utf8_error(path, exc) from None


def csv_records(reader: Any, path: str | Path, expected: str,
                line_offset: int = 0) -> Iterator[tuple[int, int, list[str]]]:
    """``(first line, last line, row)`` of every record of a :mod:`csv` ``reader``, blank lines
    included (an empty row), lines 1-based and shifted by ``line_offset`` (a reader started
    past the top of its file). A :class:`csv.Error` raises :class:`DataFormatError` naming the
    record's first line and ``expected``; bytes that are not UTF-8 raise :func:`utf8_error`."""
    while True:
        first = line_offset + reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DataFormatError(path, f"line {first}", expected, str(exc)) from None
        except UnicodeDecodeError as exc:
            raise utf8_error(path, exc) from None
        yield first, line_offset + reader.line_num, row


def record_lines(first: int, last: int) -> str:
    """``line 7`` for a record on one physical line, ``lines 7-9`` for one spanning several."""
    return f"line {first}" if last <= first else f"lines {first}-{last}"


def handle_record_error(error: DataFormatError, first: int, last: int, on_error: str,
                        skips: SkipCounter | None) -> None:
    """Raise ``error`` about a csv record on lines ``first``-``last``, or count it as skipped.

    For the readers that keep :mod:`csv`'s non-strict dialect (quoted fields may hold line
    breaks): a bad record that spans several lines is most likely an unclosed quote that took
    the records after it into one field, so it raises even with ``on_error="skip"`` (skipping
    it would drop those records uncounted), with a hint about the quote.
    """
    if last > first:
        got = f"{error.got} " if error.got is not None else ""
        raise DataFormatError(error.path, error.where, error.expected,
                              f"{got}(a quote opened on line {first} is never closed?)")
    handle(error, on_error, skips)
