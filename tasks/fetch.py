"""Fetch the real data sets: every file of a registered source, downloaded and unpacked.

:func:`fetch_source` fetches every file of a registered source (:mod:`tasks.fetch_sources`)
into ``<data_root>/raw/<source dir>/``, with :func:`tasks.fetch_download.download` (resumable,
verified, atomic) and :func:`tasks.fetch_archives.safe_extract`; :func:`list_sources` describes
the registry.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tasks.fetch_archives import safe_extract
from tasks.fetch_download import ProgressArg, download_with_digest, say
from tasks.fetch_sources import SOURCES, RemoteFile, get_source
from tasks.io.atomic import write_json

log = logging.getLogger(__name__)

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
            results.append(download_with_digest(
                url, dest, remote.sha256, resume=True, progress=progress, retries=retries,
                timeout=timeout, backoff=backoff, md5=remote.md5)[0])
            continue
        marker = source_dir / f".{remote.dest}.fetched.json"
        done = _read_marker(marker, remote, source_dir)
        if done is not None:
            log.info("%s already unpacked; skipping", dest)
            results.extend(done)
            continue
        path, digest = download_with_digest(
            url, dest, remote.sha256, resume=True, progress=progress, retries=retries,
            timeout=timeout, backoff=backoff, md5=remote.md5)
        extract_dir = source_dir / remote.extract_to
        say(f"unpacking {path.name} into {extract_dir}")
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


def fetch_command(raw_path: str | Path) -> str | None:
    """The ``qastress data fetch`` command that writes ``raw_path`` (relative to ``data/raw``),
    with the options its name asks for, e.g. ``ppdb/ppdb-2.0-xl-all`` -> ``qastress data fetch
    ppdb --option size=xl``; None when no source fetches into that directory."""
    parts = Path(raw_path).parts
    for source in sorted(SOURCES.values(), key=lambda s: s.name):
        if parts and source.dir == parts[0]:
            options = (source.options_for(parts[-1]) if source.options_for else None) or {}
            extra = "".join(f" --option {key}={value}" for key, value in options.items()
                            if value != source.options.get(key))
            return f"qastress data fetch {source.name}{extra}"
    return None


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
            "files": [{"url": f.url, "dest": f.dest, "sha256": f.sha256, "md5": f.md5,
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
