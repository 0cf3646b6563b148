"""How deep a streamed JSON text nests, checked on the bytes before the parser sees them.

ijson keeps the path of every open array and object as a string ("item.item.item..."), so a
file nested *n* levels deep costs it about 2.5 n^2 bytes: 200,000 levels asked for ~24 GB and
the kernel killed the process instead of our error naming the file. :class:`DepthGuard` wraps
the binary stream ijson reads and raises :class:`TooDeep` at the first bracket that opens
more than :data:`MAX_DEPTH` levels, before ijson reads that chunk. Real formats nest fewer than
ten levels.

The scan is exact: brackets inside strings do not count, and a quote after an odd run of
backslashes does not end a string, also when the run or the string spans two chunks. It keeps
only the bytes that matter (``"``, ``\\``, brackets, braces), then works on their positions
with numpy (``bench/bench_json_depth.py`` measures its cost next to bare ijson).

Private to :mod:`tasks.io`.
"""

from __future__ import annotations

from typing import IO

import numpy as np

#: The deepest nesting a streamed JSON file may have (Python's own parser stops near 1,000).
MAX_DEPTH = 1000

_QUOTE, _BACKSLASH = ord('"'), ord("\\")
#: Bytes a backslash run is followed back one at a time before the chunk is scanned for it.
_STEPS_BACK = 16
_SPECIAL = bytes(c in b'"\\[]{}' for c in range(256))  # 1 for the bytes the scan looks at
_IS_BRACKET = np.zeros(256, dtype=bool)
_IS_BRACKET[list(b"[]{}")] = True
_STEP = np.zeros(256, dtype=np.int64)
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1


class TooDeep(Exception):
    """A JSON text opened more than ``limit`` levels; ``position`` is the byte offset of the
    bracket that did, from where the guard started reading."""

    def __init__(self, position: int, cut: int, limit: int) -> None:
        super().__init__(f"nested deeper than {limit} levels")
        self.position = position
        self.limit = limit
        self.cut = cut  # the bracket's offset in the chunk it was found in


class DepthGuard:
    """A binary file-like object that passes ``raw``'s bytes through, raising :class:`TooDeep`
    when the JSON text in them nests deeper than ``limit`` (``read`` is all ijson calls)."""

    def __init__(self, raw: IO[bytes], limit: int = MAX_DEPTH) -> None:
        self.raw = raw
        self.limit = limit
        self.depth = 0            # open arrays and objects at the end of what was read
        self.in_string = False    # whether what was read ends inside a string
        self.backslashes = 0      # the run of backslashes it ends with
        self.offset = 0           # bytes read
        self._too_deep: TooDeep | None = None

    def read(self, size: int = -1) -> bytes:
        """Read like ``raw.read``, after checking the chunk's nesting. A chunk that nests too
        deep is cut before its offending bracket and the next read raises, so the parser first
        yields the records before it."""
        if self._too_deep is not None:
            raise self._too_deep
        chunk = self.raw.read(size)
        if chunk:
            try:
                self._scan(chunk)
            except TooDeep as exc:
                if not exc.cut:
                    raise
                self._too_deep = exc
                return chunk[:exc.cut]
            self.offset += len(chunk)
        return chunk

    def _scan(self, chunk: bytes) -> None:
        data = np.frombuffer(chunk, dtype=np.uint8)
        where = np.flatnonzero(np.frombuffer(chunk.translate(_SPECIAL), dtype=bool))
        what = data[where]
        quotes = self._unescaped_quotes(data, where[what == _QUOTE])
        tail = len(chunk) - len(chunk.rstrip(b"\\"))
        self.backslashes = tail + (self.backslashes if tail == len(chunk) else 0)
        brackets = np.flatnonzero(_IS_BRACKET[what])
        if brackets.size:
            # A bracket is outside strings when an even number of real quotes precede it in the
            # chunk and the chunk started outside one (or odd and inside).
            before = np.searchsorted(quotes, where[brackets])
            structural = brackets[(before % 2 == 1) == self.in_string]
            if structural.size:
                depth = self.depth + np.cumsum(_STEP[what[structural]])
                if depth.max() > self.limit:
                    at = int(where[structural[np.argmax(depth > self.limit)]])
                    raise TooDeep(self.offset + at, at, self.limit)
                self.depth = int(depth[-1])
        self.in_string ^= bool(quotes.size % 2)

    def _unescaped_quotes(self, data: np.ndarray, quotes: np.ndarray) -> np.ndarray:
        """The quotes (positions in the chunk ``data``) that open or close a string: those
        after an even run of backslashes. A run reaching the chunk's start goes on with the
        run the last chunk ended with. Runs are measured a byte back at a time; past
        :data:`_STEPS_BACK` bytes, the remaining ones are measured at once."""
        run = np.zeros(quotes.size, dtype=np.int64)
        going = np.arange(quotes.size)      # quotes whose run may be longer
        back = 1
        while going.size:
            if back > _STEPS_BACK:
                run[going] = self._runs_before(data, quotes[going])
                break
            at = quotes[going] - back
            inside = at >= 0
            run[going[~inside]] += self.backslashes
            going = going[inside]
            going = going[data[at[inside]] == _BACKSLASH]
            run[going] += 1
            back += 1
        return quotes[run % 2 == 0]

    def _runs_before(self, data: np.ndarray, quotes: np.ndarray) -> np.ndarray:
        """The backslashes right before each of ``quotes``, counting the last chunk's run for
        a run that reaches the chunk's start (one pass over the chunk, however long)."""
        others = np.flatnonzero(data != _BACKSLASH)
        before = np.searchsorted(others, quotes) - 1     # the last other byte before each
        last = np.where(before >= 0, others[np.maximum(before, 0)], -1)
        return quotes - 1 - last + np.where(last < 0, self.backslashes, 0)
