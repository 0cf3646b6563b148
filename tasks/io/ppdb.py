"""PPDB 2.0 paraphrase rules (Pavlick et al., 2015): streaming reader and writer.

One rule per line, fields separated by `` ||| ``::

    LHS ||| PHRASE ||| PARAPHRASE ||| FEATURES ||| ALIGNMENT ||| ENTAILMENT

``FEATURES`` is space-separated ``name=value`` (the score used by Gan & Ng is ``PPDB2.0Score``),
``ALIGNMENT`` space-separated ``i-j`` token index pairs, ``ENTAILMENT`` one of
:data:`ENTAILMENT_LABELS`. The official packs are gzipped and several GB large: files are read
as a stream, and gzip is detected from the magic bytes, whatever the file is called.
"""

from __future__ import annotations

import contextlib
import gzip as _gzip
import io
import math
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import BinaryIO

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError, SkipCounter, handle, preview

SEPARATOR = " ||| "
SCORE_FEATURE = "PPDB2.0Score"
ENTAILMENT_LABELS = frozenset({
    "Equivalence", "ForwardEntailment", "ReverseEntailment", "Exclusion", "OtherRelated",
    "Independent",
})
_GZIP_MAGIC = b"\x1f\x8b"
_ALIGNMENT_ITEM = re.compile(r"(\d+)-(\d+)")
_FIELDS = "6 ' ||| '-separated fields (LHS ||| PHRASE ||| PARAPHRASE ||| FEATURES ||| " \
          "ALIGNMENT ||| ENTAILMENT)"


@dataclass(frozen=True, slots=True)
class PPDBRule:
    """One PPDB rule. ``features`` keeps the file's order; ``score`` is ``PPDB2.0Score``."""

    lhs: str
    phrase: str
    paraphrase: str
    features: Mapping[str, str] = field(hash=False)
    alignment: tuple[tuple[int, int], ...]
    entailment: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", MappingProxyType(dict(self.features)))
        object.__setattr__(self, "alignment",
                           tuple((int(i), int(j)) for i, j in self.alignment))

    @property
    def score(self) -> float:
        """The rule's ``PPDB2.0Score`` (``KeyError`` when the rule has none)."""
        return float(self.features[SCORE_FEATURE])


@contextlib.contextmanager
def open_binary(path: str | Path) -> Iterator[BinaryIO]:
    """Open ``path`` for reading bytes, decompressing it when it starts with the gzip magic."""
    with open(path, "rb") as raw:
        if raw.peek(2)[:2] == _GZIP_MAGIC:
            with _gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                yield unzipped  # type: ignore[misc]
        else:
            yield raw  # type: ignore[misc]


def iter_lines(path: str | Path) -> Iterator[tuple[int, str | DataFormatError]]:
    """Yield ``(line number, text)`` for each line of a (possibly gzipped) UTF-8 file.

    The line ending is removed, and so is a UTF-8 byte order mark at the start of line 1 (as
    ``utf-8-sig`` does for the csv/json readers). A line that is not valid UTF-8 is yielded as a
    :class:`DataFormatError` instead of text so the caller can skip it; a corrupt gzip stream
    raises one (other I/O errors propagate unchanged).
    """
    lineno = 0
    try:
        with open_binary(path) as stream:
            for lineno, raw in enumerate(stream, start=1):  # noqa: B007
                try:
                    text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    yield lineno, DataFormatError(path, f"line {lineno}", "UTF-8 text",
                                                  f"{exc.reason} at byte {exc.start}")
                    continue
                yield lineno, text.rstrip("\r\n")
    except (_gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DataFormatError(path, f"after line {lineno}", "a complete gzip stream",
                              str(exc) or type(exc).__name__) from exc


def parse_ppdb_line(line: str, path: str | Path = "<string>", lineno: int = 1) -> PPDBRule:
    """Parse one PPDB line; raise :class:`DataFormatError` naming ``path`` and ``lineno``.

    LHS, PHRASE and PARAPHRASE must be non-empty, each feature may appear once, and
    ``PPDB2.0Score`` must be a finite number (a NaN score would otherwise slip through
    ``min_score`` filtering uncounted).
    """
    where = f"line {lineno}"
    fields = line.split(SEPARATOR)
    if len(fields) != 6:
        raise DataFormatError(path, where, _FIELDS, f"{len(fields)} fields in {preview(line)}")
    lhs, phrase, paraphrase, feature_text, alignment_text, entailment = fields
    for name, value in (("LHS", lhs), ("PHRASE", phrase), ("PARAPHRASE", paraphrase)):
        if not value.strip():
            raise DataFormatError(path, where, f"a non-empty {name}", preview(value))
    features: dict[str, str] = {}
    for item in feature_text.split():
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise DataFormatError(path, where, "FEATURES as space-separated name=value items",
                                  preview(item))
        if name in features:
            raise DataFormatError(path, where, "each feature once", f"{name!r} twice")
        features[name] = value
    if SCORE_FEATURE not in features:
        raise DataFormatError(path, where, f"a {SCORE_FEATURE}=<number> feature",
                              f"features {preview(sorted(features), 120)}")
    try:
        score = float(features[SCORE_FEATURE])
    except ValueError:
        raise DataFormatError(path, where, f"a numeric {SCORE_FEATURE}",
                              preview(features[SCORE_FEATURE])) from None
    if not math.isfinite(score):
        raise DataFormatError(path, where, f"a finite numeric {SCORE_FEATURE}",
                              preview(features[SCORE_FEATURE]))
    alignment = []
    for item in alignment_text.split():
        match = _ALIGNMENT_ITEM.fullmatch(item)
        if match is None:
            raise DataFormatError(path, where, "ALIGNMENT as space-separated i-j index pairs",
                                  preview(item))
        alignment.append((int(match[1]), int(match[2])))
    entailment = entailment.strip()
    if entailment not in ENTAILMENT_LABELS:
        raise DataFormatError(path, where,
                              f"ENTAILMENT in {', '.join(sorted(ENTAILMENT_LABELS))}",
                              preview(entailment))
    return PPDBRule(lhs, phrase, paraphrase, features, tuple(alignment), entailment)


def iter_ppdb_rules(path: str | Path, on_error: str = "raise", skips: SkipCounter | None = None,
                    min_score: float | None = None) -> Iterator[PPDBRule]:
    """Stream the rules of a PPDB 2.0 file (plain or gzipped).

    Empty lines are ignored. Malformed lines raise :class:`DataFormatError` naming the file and
    line number, or with ``on_error="skip"`` are counted in ``skips``. With ``min_score`` only
    rules whose ``PPDB2.0Score`` is at least ``min_score`` are yielded (the others are filtered,
    not counted as errors).
    """
    for lineno, line in iter_lines(path):
        if isinstance(line, DataFormatError):
            handle(line, on_error, skips)
            continue
        if not line.strip():
            continue
        try:
            rule = parse_ppdb_line(line, path, lineno)
        except DataFormatError as error:
            handle(error, on_error, skips)
            continue
        if min_score is not None and rule.score < min_score:
            continue
        yield rule


def format_ppdb_rule(rule: PPDBRule) -> str:
    """The rule as one PPDB line (without the line ending)."""
    features = " ".join(f"{name}={value}" for name, value in rule.features.items())
    alignment = " ".join(f"{i}-{j}" for i, j in rule.alignment)
    fields = (rule.lhs, rule.phrase, rule.paraphrase, features, alignment, rule.entailment)
    for value in fields:
        if "\n" in value or "\r" in value:
            raise ValueError(f"PPDB fields cannot hold line breaks: {preview(value)}")
    for value in fields[:3]:
        if SEPARATOR in value:
            raise ValueError(f"PPDB fields cannot hold {SEPARATOR!r}: {preview(value)}")
    return SEPARATOR.join(fields)


def write_ppdb_rules(path: str | Path, rules: Iterable[PPDBRule], gzip: bool = False) -> Path:
    """Atomically write ``rules`` one per line (UTF-8, ``\\n``), gzipped when ``gzip`` is set.

    The gzip header carries no file name or time stamp, so equal rules give equal bytes.
    """
    with atomic_write(path, "wb") as raw:
        if gzip:
            with _gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped, \
                    io.TextIOWrapper(zipped, encoding="utf-8", newline="\n") as text:
                for rule in rules:
                    text.write(format_ppdb_rule(rule) + "\n")
        else:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
            for rule in rules:
                text.write(format_ppdb_rule(rule) + "\n")
            text.flush()
            text.detach()
    return Path(path)
