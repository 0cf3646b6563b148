"""Entity frequency as Wikipedia hyperlink counts: a TSV ``entity<TAB>count``.

The entity column holds either Wikidata item ids (``Q42``, ``key="wikidata"``, the default) or
Wikipedia page titles (``key="title"``, kept exactly as written: no underscore/space or case
normalisation). An optional header line ``entity<TAB>count`` may open the file. Counts are
non-negative integers. Blank lines are ignored. Errors name the file and the 1-based line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview
from tasks.io.text import numbered_lines

HyperlinkKey = Literal["wikidata", "title"]
HEADER = ("entity", "count")
_QID = re.compile(r"Q\d+")
_COUNT = re.compile(r"\d+")
_KEYS = ("wikidata", "title")


def _check_key(key: str) -> None:
    if key not in _KEYS:
        raise ValueError(f"key must be 'wikidata' or 'title', not {key!r}")


def read_hyperlink_counts(path: str | Path, key: HyperlinkKey = "wikidata",
                          on_error: str = "raise",
                          skips: SkipCounter | None = None) -> dict[str, int]:
    """Read ``{entity: count}`` from a hyperlink-count TSV, in file order.

    Raises :class:`DataFormatError` (or counts the line in ``skips`` with ``on_error="skip"``)
    for a line without exactly two tab-separated fields, a count that is not a non-negative
    integer, an entity that is not a ``Q<digits>`` id (``key="wikidata"``) or is empty
    (``key="title"``), and an entity listed twice (the first count is kept when skipping).
    Bytes that are not UTF-8 always raise, naming the first bad line.
    """
    _check_key(key)
    counts: dict[str, int] = {}
    first_line: dict[str, int] = {}
    for lineno, raw in numbered_lines(path, newline=""):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split("\t")
        if lineno == 1 and tuple(f.strip() for f in fields) == HEADER:
            continue
        where = f"line {lineno}"
        try:
            if len(fields) != 2:
                raise DataFormatError(path, where, "2 tab-separated fields (entity, count)",
                                      f"{len(fields)} in {preview(line)}")
            entity, count_text = fields
            _check_entry(path, where, key, entity, count_text)
            if entity in counts:
                raise DataFormatError(path, where, "each entity once",
                                      f"{entity} again (first on line {first_line[entity]})")
        except DataFormatError as error:
            handle(error, on_error, skips)
            continue
        counts[entity] = int(count_text)
        first_line[entity] = lineno
    return counts


def _check_entry(path: str | Path, where: str, key: str, entity: str, count_text: str) -> None:
    if key == "wikidata" and not _QID.fullmatch(entity):
        raise DataFormatError(path, where, "a Wikidata item id (Q<digits>) as entity",
                              preview(entity))
    if key == "title" and not entity.strip():
        raise DataFormatError(path, where, "a non-empty Wikipedia title as entity",
                              preview(entity))
    if not _COUNT.fullmatch(count_text.strip()):
        raise DataFormatError(path, where, "a non-negative integer count", preview(count_text))


def write_hyperlink_counts(path: str | Path, counts: Mapping[str, int],
                           key: HyperlinkKey = "wikidata") -> Path:
    """Atomically write the counts with the header, by count descending then entity.

    Raises ``ValueError`` for a negative or non-integer count, an entity holding a tab or a line
    break, or (``key="wikidata"``) an entity that is not ``Q<digits>``.
    """
    _check_key(key)
    for entity, count in counts.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ValueError(f"count of {entity!r} must be a non-negative integer, not {count!r}")
        if not entity or any(c in entity for c in "\t\r\n"):
            raise ValueError(f"entity must be non-empty, without tabs or line breaks: {entity!r}")
        if key == "wikidata" and not _QID.fullmatch(entity):
            raise ValueError(f"entity must be a Wikidata item id (Q<digits>): {entity!r}")
    with atomic_write(path, newline="\n") as out:
        out.write("\t".join(HEADER) + "\n")
        for entity, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
            out.write(f"{entity}\t{count}\n")
    return Path(path)
