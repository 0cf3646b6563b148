"""Token ids of passage shards, kept on disk and shared by every encoder with the same tokenizer.

A study encodes the same passage file many times: DPR-NQ's index, then one index per trained
passage encoder (Table 2's onlyP runs, Table 3's single- and multi-task runs, Table 4's
PAQ-like encoder). Every one of them is a BERT fine-tuned from the same checkpoint, so they
share one tokenizer, and tokenising 51,770 passages took ~11 s of a ~78 s encoding on one CPU
thread (``bench/RESULTS.md``, Session 45). The first encoding of a shard writes its ids here;
the later ones read them back.

One ``.npz`` per shard holds the ids of every passage, flat (``ids``: uint16 where every id
fits, as BERT's 30,522-word vocabularies do, int32 otherwise), with row ``offsets`` (int64,
one more than the passages): ~2 bytes a token, ~6 GB for the 21M passages of
``psgs_w100.tsv`` at DPR's ~150 tokens a passage. Its name carries everything the ids depend
on: the passage file's content fingerprint, the shard's rows, the tokenizer's fingerprint and
``max_length``. Files are written atomically; one that cannot be read, or that does not hold
the shard's rows, is tokenised again and replaced (with a warning), never trusted.

Slow (pure-Python) tokenizers have no stable serialisation to fingerprint: they are not cached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.retriever.data import tokenize_passages
from tasks.io.atomic import atomic_write
from tasks.retrieval.encoding import SORT_WINDOW

log = logging.getLogger(__name__)

#: Backend settings that the tokenizer call sets for itself (not part of what it is).
_CALL_STATE = ("truncation", "padding")


#: Fingerprints by the sha256 of the backend's serialisation: every shard of every encoding asks
#: again, and re-reading a 30k-word vocabulary as JSON costs ~0.1 s each time.
_FINGERPRINTS: dict[tuple[str, str], str] = {}


def tokenizer_fingerprint(tokenizer: Any) -> str | None:
    """A content hash of a fast tokenizer (vocabulary, normaliser, pre-tokeniser, special
    tokens, post-processor); ``None`` for a slow tokenizer. Independent of the truncation and
    padding state an earlier call left on it."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    serialised = backend.to_str()
    key = (type(tokenizer).__name__, hashlib.sha256(serialised.encode("utf-8")).hexdigest())
    if key not in _FINGERPRINTS:
        state = json.loads(serialised)
        for name in _CALL_STATE:
            state.pop(name, None)
        blob = json.dumps([key[0], state], sort_keys=True, ensure_ascii=False)
        _FINGERPRINTS[key] = hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
    return _FINGERPRINTS[key]


def cache_file(cache_dir: Path, passages_fp: str, start: int, end: int, tokenizer_fp: str,
               max_length: int) -> Path:
    """Where the ids of rows ``start..end`` of a passage file live for one tokenizer."""
    return (Path(cache_dir)
            / f"{passages_fp[:16]}-{start}-{end}-tok{tokenizer_fp}-len{max_length}.npz")


def _rows(ids: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    """Each passage's ids: views of the flat ``ids`` between consecutive ``offsets``."""
    return [ids[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]


def _read(path: Path, rows: int) -> list[np.ndarray] | None:
    try:
        with np.load(path) as data:
            ids, offsets = data["ids"], data["offsets"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        log.warning("%s: unreadable token cache (%s); tokenising again", path, exc)
        return None
    if (offsets.ndim != 1 or len(offsets) != rows + 1 or offsets[0] != 0
            or offsets[-1] != len(ids) or np.any(np.diff(offsets) < 0)):
        log.warning("%s: token cache does not hold %d passages; tokenising again", path, rows)
        return None
    return _rows(ids, offsets)


def _tokenize_flat(tokenizer: Any, titles: Sequence[str], texts: Sequence[str],
                   max_length: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat ids (uint16 where they fit) and row offsets, window by window (bounds the memory
    of Python lists)."""
    parts: list[np.ndarray] = []
    lengths: list[int] = []
    for window in range(0, len(texts), SORT_WINDOW):
        chunk = slice(window, window + SORT_WINDOW)
        for row in tokenize_passages(tokenizer, texts[chunk], titles[chunk], max_length):
            parts.append(np.asarray(row, dtype=np.int32))
            lengths.append(len(row))
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ids = np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)
    if ids.size == 0 or (ids.min() >= 0 and ids.max() <= np.iinfo(np.uint16).max):
        ids = ids.astype(np.uint16)
    return ids, offsets


def passage_token_ids(cache_dir: Path, passages_fp: str, start: int, end: int, tokenizer: Any,
                      *, max_length: int, titles: Sequence[str],
                      texts: Sequence[str]) -> list[np.ndarray] | None:
    """The token ids of each passage of rows ``start..end`` (as the encoder would tokenise
    ``titles`` and ``texts``), read from ``cache_dir`` or tokenised and written there;
    ``None`` when the tokenizer cannot be cached (the encoder then tokenises itself)."""
    tokenizer_fp = tokenizer_fingerprint(tokenizer)
    if tokenizer_fp is None:
        return None
    rows = end - start
    if len(texts) != rows or len(titles) != rows:
        raise ValueError(f"rows {start}..{end} are {rows} passages, given {len(texts)} texts "
                         f"and {len(titles)} titles")
    path = cache_file(cache_dir, passages_fp, start, end, tokenizer_fp, max_length)
    if path.is_file():
        cached = _read(path, rows)
        if cached is not None:
            return cached
    ids, offsets = _tokenize_flat(tokenizer, titles, texts, max_length)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb", encoding=None) as handle:
        np.savez(handle, ids=ids, offsets=offsets)
    return _rows(ids, offsets)


__all__ = ["cache_file", "passage_token_ids", "tokenizer_fingerprint"]
