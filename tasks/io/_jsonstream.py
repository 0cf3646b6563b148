"""Shared JSON plumbing of the format modules: streamed JSON arrays and JSON-lines files.

Private to :mod:`tasks.io`; the format modules build their validated records on top.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import ijson

from tasks.io._jsondepth import MAX_DEPTH, DepthGuard, TooDeep
from tasks.io.atomic import atomic_write
from tasks.io.errors import TOO_DEEP, DataFormatError, SkipCounter, handle, preview
from tasks.io.text import first_invalid_utf8_line, utf8_error

_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


def _first_line(message: object) -> str:
    """The first line of an error's message (yajl's may be ``bytes``: decoded, not a repr)."""
    if isinstance(message, BaseException) and len(message.args) == 1 \
            and isinstance(message.args[0], bytes):
        text = message.args[0].decode("utf-8", "backslashreplace").strip()
    else:
        text = str(message).strip()
    return text.splitlines()[0] if text else type(message).__name__


def _is_utf8_error(exc: ijson.JSONError) -> bool:
    """Whether ijson's error is yajl's "invalid bytes in UTF8 string" (its message may be
    ``bytes``, with the offending bytes in a caret drawing)."""
    message = exc.args[0] if exc.args else ""
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    return "invalid bytes in UTF8" in str(message)


def _record_utf8_error(path: str | Path, record: int,
                       exc: UnicodeDecodeError | None = None) -> DataFormatError:
    """:func:`~tasks.io.text.utf8_error` (the line and byte) with the record index added."""
    error = utf8_error(path, exc)
    return DataFormatError(path, f"record {record}, {error.where}", error.expected, error.got)


#: Files up to this size are parsed again, on the error path only, to find a JSON error's
#: line and column (ijson does not report them); larger ones name the record only.
POSITION_MAX_BYTES = 128 * 1024 * 1024


#: Bytes ijson reads at a time: 4x its default, where the depth guard cost least on a
#: retrieval-results file (``bench/RESULTS.md``, "A nesting guard in front of ijson").
READ_BYTES = 256 * 1024


def _error_position(path: str | Path) -> str | None:
    """``"line L, column C"`` of the first JSON error of ``path`` as Python's parser finds it,
    or None (a file over :data:`POSITION_MAX_BYTES`, or one Python's parser takes)."""
    if Path(path).stat().st_size > POSITION_MAX_BYTES:
        return None
    try:
        json.loads(Path(path).read_bytes())
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}, column {exc.colno}"
    except (ValueError, RecursionError):  # not UTF-8, or nested too deep: the record alone
        return None
    return None


def _line_of_byte(path: str | Path, offset: int) -> int:
    """The line (1-based) that byte ``offset`` of ``path`` is on."""
    lines, left = 1, offset
    with open(path, "rb") as stream:
        while left > 0 and (block := stream.read(min(left, 1 << 20))):
            lines += block.count(b"\n")
            left -= len(block)
    return lines


def _content_start(stream: IO[bytes]) -> tuple[int, bytes]:
    """Offset of the first byte after a BOM and white space, and the bytes from there."""
    offset = 0
    chunk = stream.read(4096)
    if chunk.startswith(_BOM):
        chunk, offset = chunk[len(_BOM):], len(_BOM)
    while chunk:
        rest = chunk.lstrip(_WHITESPACE)
        offset += len(chunk) - len(rest)
        if rest:
            return offset, rest
        chunk = stream.read(4096)
    return offset, b""


def iter_json_array(path: str | Path, what: str = "a JSON array") -> Iterator[tuple[int, Any]]:
    """Yield ``(index, item)`` for the items of the JSON array in ``path``, streamed with ijson.

    Numbers come back as ``int`` or ``float``. A file that does not start with ``[`` raises
    :class:`DataFormatError` (``what`` says what was expected); so does broken JSON, naming the
    record index it happened in and, for files up to :data:`POSITION_MAX_BYTES`, its line and
    column (for bytes that are not UTF-8, the line and byte), as does nesting deeper than
    :data:`~tasks.io._jsondepth.MAX_DEPTH` levels (which ijson's memory would not survive).
    Items before the break are yielded first.
    """
    with open(path, "rb") as stream:
        start, head = _content_start(stream)
        if not head.startswith(b"["):
            got = "an empty file" if not head else f"a file starting with {preview(head[:40])}"
            raise DataFormatError(path, "start of file", what, got)
        stream.seek(start)
        items = ijson.items(DepthGuard(stream), "item", use_float=True, buf_size=READ_BYTES)
        index = -1
        while True:
            try:
                item = next(items)
            except StopIteration:
                return
            except ijson.JSONError as exc:
                if _is_utf8_error(exc) and first_invalid_utf8_line(path) is not None:
                    raise _record_utf8_error(path, index + 1) from None
                position = _error_position(path)
                where = f"record {index + 1}" + (f", {position}" if position else "")
                raise DataFormatError(path, where, f"well-formed JSON ({what})",
                                      _first_line(exc)) from None
            except UnicodeDecodeError as exc:
                raise _record_utf8_error(path, index + 1, exc) from None
            except TooDeep as exc:
                line = _line_of_byte(path, start + exc.position)
                raise DataFormatError(path, f"record {index + 1}, line {line}",
                                      f"JSON nested at most {MAX_DEPTH} levels deep ({what})",
                                      str(exc)) from None
            index += 1
            yield index, item


def iter_jsonl(path: str | Path, on_error: str = "raise",
               skips: SkipCounter | None = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, parsed value)`` for each non-blank line of a JSON-lines file.

    Lines that are not valid JSON (or nest deeper than Python's parser follows) raise
    :class:`DataFormatError` naming the line, or are counted in ``skips`` when
    ``on_error="skip"``. Blank lines are ignored.
    """
    with open(path, "rb") as stream:
        for lineno, raw in enumerate(stream, start=1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                error = DataFormatError(path, f"line {lineno}", "UTF-8 text",
                                        f"{exc.reason} at byte {exc.start}")
                handle(error, on_error, skips)
                continue
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                handle(DataFormatError(path, f"line {lineno}", "one JSON value per line",
                                       f"{exc.msg} at column {exc.colno} in {preview(line)}"),
                       on_error, skips)
                continue
            except RecursionError:
                handle(DataFormatError(path, f"line {lineno}", "one JSON value per line",
                                       TOO_DEEP), on_error, skips)
                continue
            yield lineno, value


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept as is."""
    return json.dumps(value, ensure_ascii=False)


def write_jsonl(path: str | Path, values: Iterable[Any]) -> Path:
    """Atomically write one compact JSON value per line (UTF-8, ``\\n`` line ends)."""
    with atomic_write(path, newline="\n") as stream:
        for value in values:
            stream.write(dumps(value) + "\n")
    return Path(path)


def write_json_array(path: str | Path, values: Iterable[Any]) -> Path:
    """Atomically stream a JSON array out, one item per line (UTF-8, non-ASCII kept)."""
    with atomic_write(path, newline="\n") as stream:
        _stream_array(stream, values)
    return Path(path)


def _stream_array(stream: IO[str], values: Iterable[Any]) -> None:
    stream.write("[")
    first = True
    for value in values:
        stream.write("\n" if first else ",\n")
        stream.write(dumps(value))
        first = False
    stream.write("\n]\n" if not first else "]\n")
