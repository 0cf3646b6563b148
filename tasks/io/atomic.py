"""Atomic artifact writing and content fingerprints.

Every artifact is first written to a temporary file in the same directory and then renamed
into place (``os.replace`` is atomic on POSIX), so a crash leaves either the old file or
nothing, never a truncated file that later looks complete.

A temporary is a hidden sibling named ``.NAME.PID.XXXXXXXX.tmp`` after the target and the
writing process. A writer killed outright (SIGKILL) leaves its temporary behind; the next
writer of the same target removes the temporaries whose process no longer runs
(:func:`remove_stale_temporaries`), so a rerun after a kill leaves no trace of it.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

_CHUNK = 1 << 20


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8",
                 newline: str | None = None) -> Iterator[IO[Any]]:
    """Open a temporary sibling of ``path`` for writing; rename it onto ``path`` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    binary = "b" in mode
    remove_stale_temporaries(path)
    fd, tmp_name = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp",
                                    dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding,
                       newline=None if binary else newline) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o666 & ~_umask())  # mkstemp's 0600 -> what open() would give
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Build a directory under a temporary name; move it onto ``path`` when the block succeeds.

    An existing directory at ``path`` is replaced only after the new one is complete.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    tmp = Path(tempfile.mkdtemp(prefix=temporary_prefix(path), suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's 0700 -> what mkdir() would give
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            _rmtree(old)
            os.replace(path, old)
            os.replace(tmp, path)
            _rmtree(old)
        else:
            os.replace(tmp, path)
    except BaseException:
        _rmtree(tmp)
        raise


def temporary_prefix(path: str | Path) -> str:
    """The name prefix of this process's temporaries for ``path``: ``.NAME.PID.``."""
    return f".{Path(path).name}.{os.getpid()}."


def remove_stale_temporaries(path: str | Path) -> int:
    """Remove the temporaries of ``path`` (files or directories) that writers no longer
    running left behind; return how many were removed.

    A temporary whose writer still runs (this process included) is kept, and so is one whose
    name holds no process id (not written by :func:`atomic_write` or :func:`atomic_dir`).
    """
    path = Path(path)
    prefix = f".{path.name}."
    removed = 0
    for stale in path.parent.glob(glob.escape(prefix) + "*.tmp"):
        # ".NAME.PID.XXXXXXXX.tmp" -> PID, XXXXXXXX (mkstemp's letters, digits, "_"); a longer
        # rest is another target's (".NAME.1.PID.XXXXXXXX.tmp" belongs to "NAME.1")
        parts = stale.name[len(prefix):-len(".tmp")].split(".")
        if len(parts) != 2 or not parts[0].isdigit() or _running(int(parts[0])):
            continue
        if stale.is_dir():
            _rmtree(stale)
        else:
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
        removed += 1
    return removed


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (a zombie, killed but not yet reaped,
    does not)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0] != "Z"
    return True


def _umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def write_text(path: str | Path, text: str) -> Path:
    """Atomically write a text file."""
    with atomic_write(path) as handle:
        handle.write(text)
    return Path(path)


def write_json(path: str | Path, obj: Any, indent: int | None = None) -> Path:
    """Atomically write JSON (UTF-8, non-ASCII kept as is, keys in insertion order)."""
    with atomic_write(path) as handle:
        json.dump(obj, handle, ensure_ascii=False, indent=indent)
        if indent is not None:
            handle.write("\n")
    return Path(path)


def file_fingerprint(path: str | Path) -> str:
    """sha256 of a file's bytes, or of a directory's files (relative names and contents)."""
    path = Path(path)
    digest = hashlib.sha256()
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            rel = child.relative_to(path).as_posix()
            if any(part.startswith(".") for part in Path(rel).parts):
                continue
            digest.update(rel.encode() + b"\0")
            digest.update(file_fingerprint(child).encode())
        return digest.hexdigest()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
