"""Download and unpack the real data sets: resumable, verified, atomic.

- :func:`download` streams a URL to ``<dest>.part`` (resuming it with an HTTP ``Range`` request),
  checks the sha256 when one is given, and renames the part file onto ``dest``; so ``dest`` exists
  only when it is complete. Transient failures (connection errors, timeouts, HTTP 5xx/408/429)
  are retried with exponential backoff; other HTTP errors fail at once.
- :func:`safe_extract` unpacks zip / tar(.gz|.bz2|.xz) / single-file .gz archives after checking
  every member (no absolute paths, no ``..`` escapes, no links leading outside); an unsafe archive
  raises :class:`UnsafeArchiveMember` and extracts nothing. Members are unpacked in a temporary
  directory and then renamed into place.
- :func:`fetch_source` fetches every file of a registered source (:mod:`tasks.fetch_sources`)
  into ``<data_root>/raw/<source dir>/``; :func:`list_sources` describes the registry.

Only the standard library does the networking (``urllib``); ``rich`` draws the progress bar.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import hashlib
import http.client
import json
import logging
import os
import re
import shutil
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tasks.fetch_sources import SOURCES, RemoteFile, get_source
from tasks.io.atomic import atomic_write, file_fingerprint, write_json

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
    """The downloaded bytes do not have the expected sha256 (the part file was deleted)."""

    def __init__(self, path: str | Path, expected: str, got: str):
        self.path = str(path)
        self.expected = expected
        self.got = got
        super().__init__(f"{self.path}: sha256 mismatch: expected {expected}, got {got} "
                         "(the partial download was deleted)")


class UnsafeArchiveMember(FetchError):
    """An archive member would land outside the target directory; nothing was extracted."""

    def __init__(self, archive: str | Path, member: str, reason: str):
        self.archive = str(archive)
        self.member = member
        super().__init__(f"refusing to extract {self.archive}: member {member!r} {reason}; "
                         "nothing was extracted")


class _Restart(Exception):
    """Internal: the part file was discarded; try again from byte zero."""


# --- download -------------------------------------------------------------------------------

def download(url: str, dest: str | Path, sha256: str | None = None, resume: bool = True,
             progress: ProgressArg = True, retries: int = 3, timeout: float = 60,
             *, backoff: float = 1.0) -> Path:
    """Download ``url`` to ``dest`` (atomically, resumably, verified); return ``dest``.

    An existing ``dest`` is kept when ``sha256`` is None or matches it. ``retries`` counts the
    attempts after the first; the wait before retry *n* is ``backoff * 2**(n-1)`` seconds.
    """
    return _download(url, Path(dest), sha256, resume, progress, retries, timeout, backoff)[0]


def _download(url: str, dest: Path, sha256: str | None, resume: bool, progress: ProgressArg,
              retries: int, timeout: float, backoff: float) -> tuple[Path, str | None]:
    expected = sha256.lower() if sha256 else None
    if dest.exists():
        if expected is None:
            log.info("%s exists; not downloading it again", dest)
            return dest, None
        got = file_fingerprint(dest)
        if got == expected:
            log.info("%s exists with the expected sha256; not downloading it again", dest)
            return dest, got
        _say(f"{dest}: sha256 {got} is not the expected {expected}; downloading it again")
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    if not resume:
        part.unlink(missing_ok=True)
    attempts = max(0, retries) + 1
    for attempt in range(1, attempts + 1):
        try:
            digest = _fetch_into(url, part, _want_progress(progress), timeout, dest.name)
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
    got = digest.hexdigest()
    if expected is not None and got != expected:
        part.unlink(missing_ok=True)
        raise ChecksumMismatch(dest, expected, got)
    os.replace(part, dest)
    if expected is not None:
        _say(f"sha256 OK {got}  {dest}")
    else:
        _say(f"sha256 {got}  {dest}  (not pinned: record it to pin this file)")
    return dest, got


def _fetch_into(url: str, part: Path, show: bool, timeout: float, label: str) -> Any:
    """One attempt: append to (or restart) ``part``; return the sha256 object of its bytes."""
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
                return _hash_file(part)
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
            digest, mode = _hash_file(part), "ab"
        elif status == 200:  # a fresh download, or a server that ignores Range
            if offset:
                log.info("%s ignored the Range request; downloading from the start", url)
            digest, mode, offset = hashlib.sha256(), "wb", 0
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


def _hash_file(path: Path) -> Any:
    digest = hashlib.sha256()
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


def _say(message: str) -> None:
    log.info(message)
    print(message, file=sys.stderr, flush=True)


# --- extraction -----------------------------------------------------------------------------

_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


def archive_kind(path: str | Path) -> str | None:
    """``zip``, ``tar`` or ``gz`` from the file name, or None for a plain file."""
    name = Path(path).name.lower()
    if name.endswith(".zip"):
        return "zip"
    if name.endswith(_TAR_SUFFIXES):
        return "tar"
    if name.endswith(".gz"):
        return "gz"
    return None


def safe_extract(archive: str | Path, target_dir: str | Path, *, kind: str | None = None,
                 strip_components: int = 0) -> list[Path]:
    """Unpack ``archive`` into ``target_dir``; return the top-level paths it created.

    All members are checked before anything is written. Entries already in ``target_dir`` with
    the same top-level name are replaced (each by one rename); others are left alone. A ``.gz``
    that is not a tar unpacks to one file named like the archive without ``.gz``.
    """
    archive, target = Path(archive), Path(target_dir)
    kind = kind or archive_kind(archive)
    if kind == "gz":
        return [_gunzip(archive, target)]
    if kind == "zip":
        with zipfile.ZipFile(archive) as zf:
            plan = _plan_zip(archive, zf, strip_components)
            target.mkdir(parents=True, exist_ok=True)
            with _staging(target) as tmp:
                for info, rel in plan:
                    out = tmp.joinpath(*rel)
                    if info.is_dir():
                        out.mkdir(parents=True, exist_ok=True)
                        continue
                    out.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(info) as src, open(out, "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
                return _move_into(tmp, target)
    if kind == "tar":
        with tarfile.open(archive) as tf:
            members = _plan_tar(archive, tf.getmembers(), strip_components)
            target.mkdir(parents=True, exist_ok=True)
            with _staging(target) as tmp:
                if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: defence in depth
                    tf.extractall(tmp, members=members, filter="data")
                else:  # pragma: no cover
                    tf.extractall(tmp, members=members)
                return _move_into(tmp, target)
    raise ValueError(f"{archive}: unknown archive kind {kind!r}; expected zip, tar or gz")


def _member_parts(archive: Path, name: str, strip: int) -> tuple[str, ...] | None:
    """Normalised path parts of a member (None: stripped away); unsafe names raise."""
    text = name.replace("\\", "/")
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        raise UnsafeArchiveMember(archive, name, "has an absolute path")
    parts = _normalise([p for p in text.split("/") if p not in ("", ".")])
    if parts is None:
        raise UnsafeArchiveMember(archive, name, "escapes the target directory ('..')")
    parts = parts[strip:]
    return parts or None


def _normalise(parts: Iterable[str]) -> tuple[str, ...] | None:
    out: list[str] = []
    for part in parts:
        if part == "..":
            if not out:
                return None
            out.pop()
        elif part not in ("", "."):
            out.append(part)
    return tuple(out)


def _plan_zip(archive: Path, zf: zipfile.ZipFile,
              strip: int) -> list[tuple[zipfile.ZipInfo, tuple[str, ...]]]:
    plan = []
    for info in zf.infolist():
        parts = _member_parts(archive, info.filename, strip)
        if parts is not None:
            plan.append((info, parts))
    return plan


def _plan_tar(archive: Path, members: list[tarfile.TarInfo],
              strip: int) -> list[tarfile.TarInfo]:
    """Check every member (links included) and return copies renamed for ``strip``."""
    kept: list[tuple[tarfile.TarInfo, tuple[str, ...]]] = []
    links: dict[tuple[str, ...], str] = {}
    for member in members:
        if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
            raise UnsafeArchiveMember(archive, member.name, "is a device, FIFO or other special "
                                                            "file")
        parts = _member_parts(archive, member.name, strip)
        if parts is None:
            continue
        kept.append((member, parts))
        if member.issym():
            links[parts] = member.linkname
    plan = []
    for member, parts in kept:
        where = _resolve(parts[:-1], links)
        if where is None:
            raise UnsafeArchiveMember(archive, member.name, "lies under a link that leads "
                                                            "outside the target directory")
        renamed = copy.copy(member)
        renamed.name = "/".join(parts)
        if member.issym():
            link = member.linkname.replace("\\", "/")
            if link.startswith("/") or re.match(r"^[A-Za-z]:", link):
                raise UnsafeArchiveMember(archive, member.name,
                                          f"is a symlink to the absolute path {member.linkname!r}")
            if _resolve(where + tuple(link.split("/")), links) is None:
                raise UnsafeArchiveMember(archive, member.name, f"is a symlink to "
                                          f"{member.linkname!r}, outside the target directory")
        elif member.islnk():
            target = _member_parts(archive, member.linkname, strip)
            if target is None or _resolve(target, links) is None:
                raise UnsafeArchiveMember(archive, member.name, f"is a hard link to "
                                          f"{member.linkname!r}, outside the target directory")
            renamed.linkname = "/".join(target)
        plan.append(renamed)
    return plan


def _resolve(parts: Iterable[str], links: Mapping[tuple[str, ...], str],
             depth: int = 0) -> tuple[str, ...] | None:
    """Where ``parts`` lands once the archive's symlinks are followed; None if outside."""
    if depth > 40:
        return None
    here: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not here:
                return None
            here.pop()
            continue
        here.append(part)
        link = links.get(tuple(here))
        if link is not None:
            if link.startswith("/"):
                return None
            landed = _resolve(tuple(here[:-1]) + tuple(link.split("/")), links, depth + 1)
            if landed is None:
                return None
            here = list(landed)
    return tuple(here)


@contextlib.contextmanager
def _staging(target: Path) -> Iterator[Path]:
    tmp = Path(tempfile.mkdtemp(prefix=".extract-", suffix=".tmp", dir=target))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _move_into(tmp: Path, target: Path) -> list[Path]:
    moved = []
    for entry in sorted(tmp.iterdir()):
        final = target / entry.name
        if final.is_dir() and not final.is_symlink():
            old = target / f".{entry.name}.old-{os.getpid()}"
            os.replace(final, old)
            os.replace(entry, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            if entry.is_dir() and final.exists():
                final.unlink()
            os.replace(entry, final)
        moved.append(final)
    return moved


def _gunzip(archive: Path, target: Path) -> Path:
    name = archive.name[:-3] if archive.name.lower().endswith(".gz") else archive.name + ".out"
    target.mkdir(parents=True, exist_ok=True)
    final = target / name
    with gzip.open(archive, "rb") as src, atomic_write(final, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    return final


# --- sources --------------------------------------------------------------------------------

def fetch_source(name: str, data_root: str | Path, *, base_url: str | None = None,
                 only: Iterable[str] | None = None, progress: ProgressArg = True,
                 options: Mapping[str, Any] | None = None, keep_archives: bool = True,
                 retries: int = 3, timeout: float = 60, backoff: float = 1.0) -> list[Path]:
    """Fetch (and unpack) every file of source ``name`` under ``<data_root>/raw/<source dir>/``.

    ``data_root`` is the data directory (``paths.data``, usually ``data``). ``base_url`` replaces
    the scheme and host of every URL (a path in it becomes a prefix), e.g. to point a source at a
    mirror or a test server. ``only`` restricts the files (by ``dest`` name, or the unpacked
    name). ``options`` are source options (PPDB: ``size``, ``packs``). Returns the final paths:
    downloaded plain files, and the top-level paths unpacked from archives. Files already fetched
    (and archives already unpacked, per a ``.<archive>.fetched.json`` marker) are skipped.
    """
    source = get_source(name)
    files = _select(source.name, source.resolve_files(options), only)
    source_dir = Path(data_root) / "raw" / source.dir
    results: list[Path] = []
    for remote in files:
        url = rebase_url(remote.url, base_url)
        dest = source_dir / remote.dest
        if not remote.extract:
            results.append(_download(url, dest, remote.sha256, True, progress, retries,
                                     timeout, backoff)[0])
            continue
        marker = source_dir / f".{remote.dest}.fetched.json"
        done = _read_marker(marker, remote, source_dir)
        if done is not None:
            log.info("%s already unpacked; skipping", dest)
            results.extend(done)
            continue
        path, digest = _download(url, dest, remote.sha256, True, progress, retries, timeout,
                                 backoff)
        extract_dir = source_dir / remote.extract_to
        _say(f"unpacking {path.name} into {extract_dir}")
        outputs = safe_extract(path, extract_dir, kind=remote.extract,
                               strip_components=remote.strip_components)
        write_json(marker, {"url": remote.url, "sha256": digest or remote.sha256,
                            "outputs": [p.relative_to(source_dir).as_posix() for p in outputs]},
                   indent=1)
        if not keep_archives:
            path.unlink(missing_ok=True)
        results.extend(outputs)
    return results


def _select(name: str, files: tuple[RemoteFile, ...],
            only: Iterable[str] | None) -> tuple[RemoteFile, ...]:
    if only is None:
        return files
    wanted = set(only)

    def names(remote: RemoteFile) -> set[str]:
        unpacked = remote.dest[:-3] if remote.extract == "gz" else remote.dest
        return {remote.dest, unpacked}

    unknown = wanted - set().union(*(names(f) for f in files))
    if unknown:
        raise ValueError(f"source {name!r} has no file(s) {sorted(unknown)}; its files: "
                         f"{[f.dest for f in files]}")
    return tuple(f for f in files if names(f) & wanted)


def _read_marker(marker: Path, remote: RemoteFile, source_dir: Path) -> list[Path] | None:
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
        outputs = [source_dir / rel for rel in info["outputs"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if remote.sha256 and info.get("sha256") != remote.sha256.lower():
        return None
    if not outputs or not all(p.exists() for p in outputs):
        return None
    return outputs


def rebase_url(url: str, base_url: str | None) -> str:
    """``url`` with its scheme and host taken from ``base_url`` (whose path becomes a prefix)."""
    if not base_url:
        return url
    parts = urllib.parse.urlsplit(url)
    base = urllib.parse.urlsplit(base_url)
    path = base.path.rstrip("/") + parts.path
    return urllib.parse.urlunsplit((base.scheme, base.netloc, path, parts.query, ""))


def list_sources() -> list[dict[str, Any]]:
    """One dict per registered source: name, description, dir, size, homepage, note, options,
    and its files (with their default options) as url / dest / sha256 / extract / size."""
    listing = []
    for source in sorted(SOURCES.values(), key=lambda s: s.name):
        listing.append({
            "name": source.name,
            "description": source.description,
            "dir": source.dir,
            "size": source.size,
            "homepage": source.homepage,
            "note": source.note,
            "options": dict(source.options),
            "files": [{"url": f.url, "dest": f.dest, "sha256": f.sha256,
                       "extract": f.extract, "size": f.size}
                      for f in source.resolve_files()],
        })
    return listing


def sources_help() -> str:
    """A short plain-text table of the sources, for ``--help`` or ``qastress data list``."""
    lines = []
    for entry in list_sources():
        lines.append(f"{entry['name']:<19} {entry['size']:<30} {entry['description']}")
    return "\n".join(lines)
