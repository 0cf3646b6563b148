"""Resumable, verified, atomic downloads of the real data sets (standard-library networking).

:func:`download` streams a URL to ``<dest>.part`` (resuming it with an HTTP ``Range`` request),
checks the sha256 when one is given, and renames the part file onto ``dest``; so ``dest`` exists
only when it is complete. Transient failures (connection errors, timeouts, HTTP 5xx/408/429) are
retried with exponential backoff; other HTTP errors fail at once. ``rich`` draws the progress
bar.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import logging
import os
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from tasks.io.atomic import file_fingerprint

log = logging.getLogger(__name__)

USER_AGENT = "qastress-fetch/0.1 (Python urllib)"
_CHUNK = 1 << 16
_RETRY_STATUS = frozenset({408, 429})

ProgressArg = bool | str  # True: bar when stderr is a terminal; "always": bar; False: none


# --- errors ---------------------------------------------------------------------------------

class FetchError(RuntimeError):
    """Base of the errors raised while fetching data."""


class DownloadError(FetchError):
    """A download failed for good (client error, or transient errors past the retries)."""

    def __init__(self, url: str, detail: str, status: int | None = None):
        self.url = url
        self.status = status
        super().__init__(f"download of {url} failed: {detail}")


class ChecksumMismatch(FetchError):
    """The downloaded bytes do not have the expected checksum (the download was deleted)."""

    def __init__(self, path: str | Path, expected: str, got: str, algorithm: str = "sha256"):
        self.path = str(path)
        self.expected = expected
        self.got = got
        self.algorithm = algorithm
        super().__init__(f"{self.path}: {algorithm} mismatch: expected {expected}, got {got} "
                         "(the partial download was deleted)")

    def __reduce__(self) -> tuple:
        """Pickled with its fields (the default pickles only the message)."""
        return (type(self), (self.path, self.expected, self.got, self.algorithm))


class _Restart(Exception):
    """Internal: the part file was discarded; try again from byte zero."""


# --- download -------------------------------------------------------------------------------

class _Digests:
    """The sha256 of the bytes, and their md5 when one is to be checked, fed together."""

    def __init__(self, md5: bool) -> None:
        self.sha256 = hashlib.sha256()
        self.md5 = hashlib.md5(usedforsecurity=False) if md5 else None

    def update(self, chunk: bytes) -> None:
        self.sha256.update(chunk)
        if self.md5 is not None:
            self.md5.update(chunk)


def download(url: str, dest: str | Path, sha256: str | None = None, resume: bool = True,
             progress: ProgressArg = True, retries: int = 3, timeout: float = 60,
             *, backoff: float = 1.0) -> Path:
    """Download ``url`` to ``dest`` (atomically, resumably, verified); return ``dest``.

    An existing ``dest`` is kept when ``sha256`` is None or matches it. ``retries`` counts the
    attempts after the first; the wait before retry *n* is ``backoff * 2**(n-1)`` seconds.
    """
    return download_with_digest(url, Path(dest), sha256, resume=resume, progress=progress,
                                retries=retries, timeout=timeout, backoff=backoff)[0]


def download_with_digest(url: str, dest: Path, sha256: str | None, *, resume: bool,
                         progress: ProgressArg, retries: int, timeout: float,
                         backoff: float, md5: str | None = None) -> tuple[Path, str | None]:
    """:func:`download`, returning ``(dest, sha256 of the bytes)`` (``None`` when an existing
    unpinned ``dest`` was kept without reading it). ``md5``: the checksum a publisher gives
    instead of a sha256 (Pyserini), computed on the same pass over the bytes and checked
    before the rename."""
    expected = sha256.lower() if sha256 else None
    if dest.exists():
        if expected is None:
            log.info("%s exists; not downloading it again", dest)
            return dest, None
        got = file_fingerprint(dest)
        if got == expected:
            log.info("%s exists with the expected sha256; not downloading it again", dest)
            return dest, got
        say(f"{dest}: sha256 {got} is not the expected {expected}; downloading it again")
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    if not resume:
        part.unlink(missing_ok=True)
    attempts = max(0, retries) + 1
    for attempt in range(1, attempts + 1):
        try:
            digests = _fetch_into(url, part, _want_progress(progress), timeout, dest.name,
                                  md5 is not None)
            break
        except Exception as exc:  # noqa: BLE001 - classified just below
            if isinstance(exc, urllib.error.HTTPError):
                exc.close()
            if not _is_transient(exc):
                if isinstance(exc, urllib.error.HTTPError):
                    raise DownloadError(url, f"HTTP {exc.code} {exc.reason} (client error, "
                                             "not retried)", exc.code) from None
                raise
            if attempt == attempts:
                raise DownloadError(url, f"gave up after {attempts} attempt(s); last error: "
                                         f"{_describe(exc)}", getattr(exc, "code", None)) from exc
            delay = backoff * 2 ** (attempt - 1)
            log.warning("download of %s: %s; retrying in %.1f s (%d/%d)", url, _describe(exc),
                        delay, attempt, attempts - 1)
            time.sleep(delay)
    got = digests.sha256.hexdigest()
    if expected is not None and got != expected:
        part.unlink(missing_ok=True)
        raise ChecksumMismatch(dest, expected, got)
    if digests.md5 is not None and digests.md5.hexdigest() != md5.lower():
        part.unlink(missing_ok=True)
        raise ChecksumMismatch(dest, md5.lower(), digests.md5.hexdigest(), "md5")
    os.replace(part, dest)
    if digests.md5 is not None:
        say(f"md5 OK {digests.md5.hexdigest()}  {dest}")
    if expected is not None:
        say(f"sha256 OK {got}  {dest}")
    else:
        say(f"sha256 {got}  {dest}  (not pinned: record it to pin this file)")
    return dest, got


def _fetch_into(url: str, part: Path, show: bool, timeout: float, label: str,
                md5: bool = False) -> _Digests:
    """One attempt: append to (or restart) ``part``; return the digests of its bytes."""
    offset = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            total = _range_total(exc.headers.get("Content-Range"))
            exc.close()
            if total == offset:  # the part file already holds the whole file
                return _hash_file(part, md5)
            part.unlink(missing_ok=True)
            raise _Restart(f"server refused range bytes={offset}- (416)") from None
        raise
    with response:
        status = response.status
        if offset and status == 206:
            start = _range_start(response.headers.get("Content-Range"))
            if start != offset:
                part.unlink(missing_ok=True)
                raise _Restart(f"asked for bytes from {offset}, got a range from {start}")
            digest, mode = _hash_file(part, md5), "ab"
        elif status == 200:  # a fresh download, or a server that ignores Range
            if offset:
                log.info("%s ignored the Range request; downloading from the start", url)
            digest, mode, offset = _Digests(md5), "wb", 0
        else:
            raise DownloadError(url, f"unexpected HTTP status {status}", status)
        length_header = response.headers.get("Content-Length")
        length = int(length_header) if length_header and length_header.isdigit() else None
        received = 0
        with open(part, mode) as handle, \
                _progress(show, label, None if length is None else offset + length,
                          offset) as advance:
            while chunk := response.read(_CHUNK):
                handle.write(chunk)
                digest.update(chunk)
                received += len(chunk)
                advance(len(chunk))
            handle.flush()
            os.fsync(handle.fileno())
    if length is not None and received != length:
        raise http.client.IncompleteRead(b"", length - received)
    return digest


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code >= 500 or exc.code in _RETRY_STATUS
    if isinstance(exc, urllib.error.URLError):
        return isinstance(exc.reason, OSError)
    return isinstance(exc, (_Restart, ConnectionError, TimeoutError, http.client.HTTPException))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, http.client.IncompleteRead):
        return f"connection closed early ({exc.expected} bytes missing)"
    return f"{type(exc).__name__}: {exc}"


def _range_start(value: str | None) -> int | None:
    match = re.match(r"\s*bytes\s+(\d+)-", value or "")
    return int(match.group(1)) if match else None


def _range_total(value: str | None) -> int | None:
    match = re.search(r"/(\d+)\s*$", value or "")
    return int(match.group(1)) if match else None


def _hash_file(path: Path, md5: bool = False) -> _Digests:
    digest = _Digests(md5)
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest


def _want_progress(progress: ProgressArg) -> bool:
    if progress == "always":
        return True
    return bool(progress) and sys.stderr.isatty()


@contextlib.contextmanager
def _progress(show: bool, label: str, total: int | None,
              completed: int) -> Iterator[Callable[[int], None]]:
    if not show:
        yield lambda _n: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
               TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task(label, total=total, completed=completed)
        yield lambda n: bar.advance(task, n)


def say(message: str) -> None:
    """Log ``message`` and print it to stderr (a download's progress, seen at once)."""
    log.info(message)
    print(message, file=sys.stderr, flush=True)
