"""Archive builders for the fetch tests (zip, tar.gz with symlinks) and a file lister."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path


def make_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def make_tar(path: Path, members: list[tuple[str, bytes | None, str | None]]) -> Path:
    """``(name, data, symlink_target)``: data None and a target make a symlink."""
    with tarfile.open(path, "w:gz") as tf:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type = tarfile.SYMTYPE
                info.linkname = link
                tf.addfile(info)
            else:
                info.size = len(data or b"")
                tf.addfile(info, io.BytesIO(data or b""))
    return path


def files_under(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*")) if path.exists() else []
