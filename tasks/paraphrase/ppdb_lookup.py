"""PPDB rules as an on-disk lookup table (SQLite), built by streaming the rule file.

Real PPDB 2.0 packs are gigabytes (gzipped): the file is read line by line through
:func:`tasks.io.ppdb.iter_ppdb_rules` (so malformed lines raise, or are counted as skips, with
the file and line named) and the rules kept are inserted in batches into a SQLite file. Memory
stays flat however large the pack: one batch of rows in Python plus SQLite's bounded page cache;
the index on the phrase is built once at the end (SQLite sorts on disk). The table is built
under a temporary name next to the target and renamed onto it when complete.

Kept rules: ``PPDB2.0Score`` strictly above ``min_score`` (Gan & Ng: 0.25), phrase and
paraphrase free of syntactic non-terminals (``[NP,1]``) and different from each other. Keys are
the lower-cased phrase with single spaces (PPDB phrases are already PTB-tokenised).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tasks.io.atomic import remove_stale_temporaries, temporary_prefix
from tasks.io.errors import MissingInputError, SkipCounter
from tasks.io.ppdb import iter_ppdb_rules

SCHEMA_VERSION = 1
PACK_SIZES = ("s", "m", "l", "xl", "xxl", "xxxl")
_NONTERMINAL = re.compile(r"\[[^\]\s]+,\d+\]")
_PACK_NAME = re.compile(r"^(ppdb-2\.0-)(s|m|l|xl|xxl|xxxl)(-.*)$")
_QUERY_CHUNK = 500  # below SQLite's default limit of host parameters


def resolve_pack(path: str | Path, pack: str | None) -> Path:
    """``path`` with its PPDB pack size replaced by ``pack`` (``ppdb-2.0-s-all`` -> ``-xl-``).

    ``pack=None`` returns ``path`` unchanged; a file name that does not follow the official
    ``ppdb-2.0-<size>-<type>`` pattern is an error when a pack is asked for.
    """
    path = Path(path)
    if pack is None:
        return path
    if pack not in PACK_SIZES:
        raise ValueError(f"PPDB pack size must be one of {PACK_SIZES}, not {pack!r}")
    match = _PACK_NAME.match(path.name)
    if match is None:
        raise ValueError(f"{path}: cannot choose pack {pack!r}: the file name does not follow "
                         "ppdb-2.0-<size>-<type>[.gz]; set sources.ppdb to the file instead")
    return path.with_name(match[1] + pack + match[3])


def _key(phrase: str) -> str:
    return " ".join(phrase.lower().split())


def build_ppdb_table(ppdb_path: str | Path, table_path: str | Path, min_score: float = 0.25,
                     on_error: str = "raise", batch_size: int = 10_000,
                     cache_mb: int = 32) -> dict[str, Any]:
    """Stream ``ppdb_path`` into the SQLite lookup table ``table_path``; return the counts.

    The counts (also stored in the table's ``meta``) are ``rules`` (well-formed rules read),
    ``kept``, ``below_threshold``, ``nonterminal``, ``identical`` and ``skipped`` (malformed
    lines, only with ``on_error="skip"``; otherwise the first one raises
    :class:`~tasks.io.errors.DataFormatError`).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, not {batch_size}")
    table_path = Path(table_path)
    table_path.parent.mkdir(parents=True, exist_ok=True)
    skips = SkipCounter(str(ppdb_path))
    counts = {"rules": 0, "kept": 0, "below_threshold": 0, "nonterminal": 0, "identical": 0}
    remove_stale_temporaries(table_path)
    fd, tmp_name = tempfile.mkstemp(prefix=temporary_prefix(table_path), suffix=".tmp",
                                    dir=table_path.parent)
    os.close(fd)
    try:
        con = sqlite3.connect(tmp_name)
        try:
            con.executescript(f"""
                PRAGMA journal_mode = OFF;
                PRAGMA synchronous = OFF;
                PRAGMA temp_store = FILE;
                PRAGMA cache_size = -{int(cache_mb) * 1024};
                CREATE TABLE rules (phrase TEXT NOT NULL, paraphrase TEXT NOT NULL,
                                    score REAL NOT NULL);
                CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            """)
            batch: list[tuple[str, str, float]] = []
            for rule in iter_ppdb_rules(ppdb_path, on_error=on_error, skips=skips):
                counts["rules"] += 1
                score = rule.score
                if not score > min_score:
                    counts["below_threshold"] += 1
                    continue
                if _NONTERMINAL.search(rule.phrase) or _NONTERMINAL.search(rule.paraphrase):
                    counts["nonterminal"] += 1
                    continue
                phrase, paraphrase = _key(rule.phrase), _key(rule.paraphrase)
                if phrase == paraphrase or not phrase or not paraphrase:
                    counts["identical"] += 1
                    continue
                batch.append((phrase, paraphrase, score))
                if len(batch) >= batch_size:
                    con.executemany("INSERT INTO rules VALUES (?, ?, ?)", batch)
                    counts["kept"] += len(batch)
                    batch.clear()
            if batch:
                con.executemany("INSERT INTO rules VALUES (?, ?, ?)", batch)
                counts["kept"] += len(batch)
            # A covering index: a lookup reads the index only, best score first.
            con.execute("CREATE INDEX rules_by_phrase ON rules (phrase, score DESC, paraphrase)")
            counts["skipped"] = skips.total
            meta = {"schema_version": SCHEMA_VERSION, "source": str(ppdb_path),
                    "min_score": min_score, "counts": counts,
                    "skip_summary": skips.summary(), "skip_examples": skips.examples}
            con.executemany("INSERT INTO meta VALUES (?, ?)",
                            [(k, json.dumps(v)) for k, v in meta.items()])
            con.commit()
        finally:
            con.close()
        os.replace(tmp_name, table_path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return dict(counts)


class PPDBTable:
    """Read-only access to a table built by :func:`build_ppdb_table`.

    ``max_per_phrase`` caps the paraphrases returned per phrase (best scores first).
    """

    def __init__(self, path: str | Path, max_per_phrase: int | None = None):
        self.path = Path(path)
        if not self.path.is_file():
            raise MissingInputError(f"{self.path}: no PPDB lookup table (build it with "
                                    "build_ppdb_table)")
        self.max_per_phrase = max_per_phrase
        self._con = sqlite3.connect(f"file:{self.path.resolve()}?mode=ro", uri=True,
                                    check_same_thread=False)
        try:
            version = self.meta().get("schema_version")
        except sqlite3.DatabaseError as exc:
            self._con.close()
            raise ValueError(f"{self.path}: not a PPDB lookup table ({exc})") from None
        if version != SCHEMA_VERSION:
            self._con.close()
            raise ValueError(f"{self.path}: PPDB table schema {version}, expected "
                             f"{SCHEMA_VERSION}; rebuild it")

    def meta(self) -> dict[str, Any]:
        """What the table was built from: source, threshold, counts."""
        return {k: json.loads(v) for k, v in self._con.execute("SELECT key, value FROM meta")}

    def __len__(self) -> int:
        return self._con.execute("SELECT COUNT(*) FROM rules").fetchone()[0]

    def lookup(self, phrases: Iterable[str]) -> dict[str, list[tuple[str, float]]]:
        """``{phrase: [(paraphrase, score), ...]}`` for the phrases that have rules.

        Phrases are matched lower-cased with single spaces; the result is keyed by the
        normalised phrase. Paraphrases are unique per phrase (the best score of the rules that
        share them, e.g. under different LHS labels), sorted by score, then alphabetically.
        """
        keys = sorted({_key(p) for p in phrases} - {""})
        found: dict[str, dict[str, float]] = {}
        for i in range(0, len(keys), _QUERY_CHUNK):
            chunk = keys[i:i + _QUERY_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._con.execute(
                f"SELECT phrase, paraphrase, score FROM rules WHERE phrase IN ({marks})", chunk)
            for phrase, paraphrase, score in rows:
                best = found.setdefault(phrase, {})
                if score > best.get(paraphrase, float("-inf")):
                    best[paraphrase] = score
        result = {}
        for phrase, options in found.items():
            ranked = sorted(options.items(), key=lambda item: (-item[1], item[0]))
            result[phrase] = ranked[: self.max_per_phrase] if self.max_per_phrase else ranked
        return result

    def close(self) -> None:
        """Close the database connection."""
        self._con.close()

    def __enter__(self) -> PPDBTable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def open_table(path: str | Path, max_per_phrase: int | None = None) -> Iterator[PPDBTable]:
    """``with open_table(path) as table: table.lookup([...])``."""
    table = PPDBTable(path, max_per_phrase)
    try:
        yield table
    finally:
        table.close()


def lookup(table_path: str | Path, phrases: Iterable[str],
           max_per_phrase: int | None = None) -> dict[str, list[tuple[str, float]]]:
    """One-shot :meth:`PPDBTable.lookup` on the table at ``table_path``."""
    with open_table(table_path, max_per_phrase) as table:
        return table.lookup(phrases)
