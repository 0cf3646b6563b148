"""Safe unpacking of downloaded archives: zip, tar(.gz|.bz2|.xz) and single-file .gz.

:func:`safe_extract` checks every member first (no absolute paths, no ``..`` escapes, no links
leading outside); an unsafe archive raises :class:`UnsafeArchiveMember` and extracts nothing.
Members are unpacked in a temporary directory and then renamed into place.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import os
import re
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from tasks.fetch_download import FetchError
from tasks.io.atomic import atomic_write


class UnsafeArchiveMember(FetchError):
    """An archive member would land outside the target directory; nothing was extracted."""

    def __init__(self, archive: str | Path, member: str, reason: str):
        self.archive = str(archive)
        self.member = member
        super().__init__(f"refusing to extract {self.archive}: member {member!r} {reason}; "
                         "nothing was extracted")



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
