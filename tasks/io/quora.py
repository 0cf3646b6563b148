"""Quora Question Pairs (``quora_duplicate_questions.tsv``): streaming reader and writer.

Tab-separated with the header ``id qid1 qid2 question1 question2 is_duplicate``. Questions in the
released file may be quoted and hold tabs, quotes and line breaks, so the file is parsed with the
``csv`` module, never split by hand. Paraphrase pairs are the rows with ``is_duplicate == 1``.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, preview
from tasks.io.ppdb import open_binary
from tasks.io.text import csv_records, handle_record_error, record_lines, utf8_error

HEADER = ("id", "qid1", "qid2", "question1", "question2", "is_duplicate")
_SPECIAL = frozenset('\t"\r\n')


@dataclass(frozen=True, slots=True)
class QuoraPair:
    """One row of the Quora file: a question pair and whether it is marked as a duplicate."""

    id: int
    qid1: int
    qid2: int
    question1: str
    question2: str
    is_duplicate: bool


def _parse_row(row: list[str], path: str | Path, where: str) -> QuoraPair:
    if len(row) != len(HEADER):
        raise DataFormatError(path, where,
                              f"{len(HEADER)} tab-separated fields ({' '.join(HEADER)})",
                              f"{len(row)} fields {preview(row)}")
    ids = []
    for name, value in zip(HEADER[:3], row[:3], strict=True):
        try:
            ids.append(int(value))
        except ValueError:
            raise DataFormatError(path, where, f"an integer {name}", preview(value)) from None
    for name, value in zip(HEADER[3:5], row[3:5], strict=True):
        if not value.strip():
            raise DataFormatError(path, where, f"a non-empty {name}", preview(value))
    if row[5] not in ("0", "1"):
        raise DataFormatError(path, where, "is_duplicate 0 or 1", preview(row[5]))
    return QuoraPair(ids[0], ids[1], ids[2], row[3], row[4], row[5] == "1")


def iter_quora_pairs(path: str | Path, duplicates_only: bool = False, on_error: str = "raise",
                     skips: SkipCounter | None = None) -> Iterator[QuoraPair]:
    """Stream the question pairs of a Quora TSV file (plain or gzipped).

    A wrong header raises :class:`DataFormatError`. A bad row (wrong number of fields, id not an
    integer, empty question, ``is_duplicate`` not 0/1) raises one naming the file and the line
    the row starts on, or with ``on_error="skip"`` is counted in ``skips``. Always raised, even
    when skipping: a bad row spanning several lines (an unclosed quote takes the lines after it
    into its field; the error names the lines), bytes that are not UTF-8 (the error names the
    first bad line; row boundaries after it cannot be trusted), a TSV error from :mod:`csv` and
    a broken gzip stream. With ``duplicates_only`` only the paraphrase pairs
    (``is_duplicate == 1``) are yielded.
    """
    with open_binary(path) as raw, \
            io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text:
        reader = csv.reader(text, delimiter="\t", quotechar='"', doublequote=True, strict=False)
        try:
            header = next(reader, None)
            if header is None or tuple(header) != HEADER:
                raise DataFormatError(path, "line 1", f"the header {' '.join(HEADER)!r} "
                                      "(tab-separated)", preview(header))
            for first, last, row in csv_records(reader, path, "tab-separated fields with "
                                                "balanced quotes"):
                if not row:
                    continue
                try:
                    pair = _parse_row(row, path, record_lines(first, last))
                except DataFormatError as error:
                    handle_record_error(error, first, last, on_error, skips)
                    continue
                if duplicates_only and not pair.is_duplicate:
                    continue
                yield pair
        except csv.Error as exc:  # in the header (csv_records names the line of a record)
            raise DataFormatError(path, "line 1", "tab-separated fields with balanced quotes",
                                  str(exc)) from None
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise DataFormatError(path, f"after line {reader.line_num}", "a complete gzip stream",
                                  str(exc) or type(exc).__name__) from None
        except UnicodeDecodeError as exc:
            raise utf8_error(path, exc) from None


def _field(value: str) -> str:
    if _SPECIAL.isdisjoint(value):
        return value
    return '"' + value.replace('"', '""') + '"'


def write_quora_pairs(path: str | Path, pairs: Iterable[QuoraPair]) -> Path:
    """Atomically write ``pairs`` as a Quora TSV (header, ``\\n`` lines, UTF-8).

    Fields holding a tab, a quote or a line break are quoted (quotes doubled), as in the
    released file.
    """
    with atomic_write(path, newline="") as out:
        out.write("\t".join(HEADER) + "\n")
        for pair in pairs:
            fields = (str(pair.id), str(pair.qid1), str(pair.qid2), pair.question1,
                      pair.question2, "1" if pair.is_duplicate else "0")
            out.write("\t".join(_field(value) for value in fields) + "\n")
    return Path(path)
