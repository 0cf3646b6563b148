"""Sharded passage encoding: plan, encode and validate shards of the passage collection.

Passages are encoded in shards of ``shard_size`` consecutive records of ``psgs_w100.tsv``
(:func:`plan_shards`), each written as two files::

    shard_00000.npy        float32 (rows, dim) passage vectors
    shard_00000.ids.json   {"rows", "dim", "start", "end", "model", "model_fingerprint",
                            "passages_fingerprint", ..., "ids": [...]}

The ``.npy`` is written first and the ``.ids.json`` last, each atomically (temporary file +
rename), so the ids file marks a finished shard. :func:`encode_shard` skips a shard whose files
exist and agree (row count, dimension, range, model and passage-file fingerprints), so a killed
encoding job resumes where it stopped. A shard's passages are read from the nearest mark of one
checked pass over the file per process (:func:`read_passage_range`), not from its start.
Shards are independent: one task per shard can run on any worker (the Prefect stage submits
them to the flow's task runner). The FAISS index over finished shards is
:mod:`tasks.retrieval.faiss_index`.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tasks.io.atomic import atomic_write, write_json
from tasks.io.passages import RecordMark, count_passages, iter_passages_from, mark_passages
from tasks.retrieval.encoders import EncoderSpec, load_encoder
from tasks.retrieval.token_cache import passage_token_ids

log = logging.getLogger(__name__)

#: Test hook: seconds to sleep between writing a shard's vectors and its ids file.
SLEEP_ENV = "QASTRESS_TEST_SHARD_SLEEP"
#: Names of the shards this process encoded (not skipped), in order (tests, logs).
ENCODED: list[str] = []
#: A shard's read seeks to the mark of every this many passages at or before its start.
MARK_EVERY = 16_384
_MARKS: dict[tuple[str, int, int], list[RecordMark]] = {}
_MARK_LOCKS: dict[tuple[str, int, int], threading.Lock] = {}
_MARKS_LOCK = threading.Lock()


class ShardError(ValueError):
    """A shard is unfinished, inconsistent, or does not belong with the others."""


class ModelMismatchError(ValueError):
    """Vectors of one model met an index or shard of another."""


# --- planning and encoding ----------------------------------------------------------------

def plan_shards(passages_tsv: Path, shard_size: int) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` row ranges of ``shard_size`` passages covering the file."""
    if shard_size < 1:
        raise ValueError(f"shard_size must be >= 1, not {shard_size}")
    total = count_passages(passages_tsv)
    return [(start, min(total, start + shard_size)) for start in range(0, total, shard_size)]


def shard_path(shards_dir: Path, number: int) -> Path:
    """``shards_dir/shard_00007.npy`` for shard number 7."""
    return Path(shards_dir) / f"shard_{number:05d}.npy"


def ids_path(shard: Path) -> Path:
    """The ids/metadata file of a shard: ``shard_00007.npy`` -> ``shard_00007.ids.json``."""
    shard = Path(shard)
    return shard.with_name(f"{shard.stem}.ids.json")


def passage_marks(passages_tsv: Path) -> list[RecordMark]:
    """Where every :data:`MARK_EVERY`-th passage of the file begins, from one checked pass over
    it, memoised per process on the file's path, size and modification time."""
    stat = Path(passages_tsv).stat()
    key = (str(Path(passages_tsv).resolve()), stat.st_size, stat.st_mtime_ns)
    with _MARKS_LOCK:
        lock = _MARK_LOCKS.setdefault(key, threading.Lock())
    with lock:  # shards encoded in threads of one process mark the file once
        if key not in _MARKS:
            _MARKS[key] = mark_passages(passages_tsv, MARK_EVERY)
        return _MARKS[key]


def read_passage_range(passages_tsv: Path, start: int, end: int) -> list:
    """Passages ``start`` (0-based, inclusive) to ``end`` (exclusive) of a passage TSV.

    Read from the nearest mark at or before ``start`` (:func:`passage_marks`), so the shards of
    a large file cost one pass over it per process and their own records, not a pass from the
    file's start per shard (21M passages in shards of 500,000: ~21 passes per encoding).
    """
    marks = passage_marks(passages_tsv)
    passages: list = []
    if marks and start >= 0:
        mark = marks[min(start // MARK_EVERY, len(marks) - 1)]
        passages = list(itertools.islice(iter_passages_from(passages_tsv, mark),
                                         start - mark.index, end - mark.index))
    if len(passages) != end - start:
        raise ShardError(f"{passages_tsv}: rows {start}..{end} requested but the file has only "
                         f"{start + len(passages)} passages")
    return passages


def _passages_fingerprint(passages_tsv: Path) -> str:
    from tasks.orchestration import path_fingerprint  # memoised on size + mtime

    return path_fingerprint(Path(passages_tsv))


def _read_meta(shard: Path) -> dict:
    meta_file = ids_path(shard)
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ShardError(f"{meta_file}: unreadable shard ids file ({exc})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("ids"), list):
        raise ShardError(f"{meta_file}: expected an object with an 'ids' list")
    return meta


def _vector_shape(shard: Path) -> tuple[tuple[int, ...], np.dtype]:
    try:
        array = np.load(shard, mmap_mode="r")
    except (OSError, ValueError) as exc:
        raise ShardError(f"{shard}: unreadable shard vectors ({exc})") from None
    return tuple(array.shape), array.dtype


def shard_record(shard: Path, meta: dict) -> dict:
    """What a later step needs to know of a finished shard (small; a cache-key input)."""
    return {"path": str(shard), "start": meta["start"], "end": meta["end"],
            "rows": meta["rows"], "dim": meta["dim"],
            "model_fingerprint": meta["model_fingerprint"],
            "passages_fingerprint": meta.get("passages_fingerprint")}


def _finished(shard: Path, start: int, end: int, spec: EncoderSpec,
              passages_fp: str) -> dict | None:
    """The shard's record when its files are complete and match this job, else ``None``."""
    if not (shard.is_file() and ids_path(shard).is_file()):
        return None
    try:
        meta = validate_shard(shard, model_fingerprint=spec.fingerprint)
    except (ShardError, ModelMismatchError) as exc:
        log.warning("re-encoding %s: %s", shard, exc)
        return None
    if (meta["start"], meta["end"], meta.get("passages_fingerprint")) != (start, end,
                                                                         passages_fp):
        log.warning("re-encoding %s: it holds rows %s..%s of another passage file version",
                    shard, meta["start"], meta["end"])
        return None
    return shard_record(shard, meta)


def write_shard(shard: Path, vectors: np.ndarray, ids: Sequence[str], meta: dict) -> dict:
    """Write a shard: vectors first, then the ids file that marks it finished (both atomic).

    An older ids file is removed before the new vectors land: killed between the two writes,
    a re-encoded shard must not pair new vectors with the old ids file, which names the
    model and passages of the old vectors (:func:`_finished` would accept the pair).
    """
    shard = Path(shard)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(ids):
        raise ShardError(f"{shard}: {len(ids)} ids but vectors of shape {vectors.shape}")
    ids_path(shard).unlink(missing_ok=True)
    with atomic_write(shard, mode="wb") as handle:
        np.save(handle, vectors)
    delay = float(os.environ.get(SLEEP_ENV, "0") or 0)
    if delay > 0:
        time.sleep(delay)
    full = {**meta, "rows": int(vectors.shape[0]), "dim": int(vectors.shape[1]),
            "dtype": "float32", "ids": [str(i) for i in ids]}
    write_json(ids_path(shard), full)
    return shard_record(shard, full)


def encode_shard(passages_tsv: Path, start: int, end: int, shard_path: Path,
                 spec: EncoderSpec, batch_size: int = 64, device: str = "auto",
                 bf16: bool = False, progress: bool = False,
                 cpu_threads: int | None = None,
                 token_cache: str | Path | None = None) -> dict:
    """Encode passages ``start..end`` of ``passages_tsv`` into ``shard_path`` (+ ids file)
    with ``cpu_threads`` torch CPU threads (None: the machine's count). With ``token_cache``
    (a directory), the passages' token ids are read from there when an earlier encoding with
    the same tokenizer wrote them, and written there otherwise
    (:mod:`tasks.retrieval.token_cache`); the vectors are the same either way.

    A finished shard of the same rows, model and passage file is kept as it is (returned
    without encoding). Returns the shard's record (:func:`shard_record`).
    """
    shard = Path(shard_path)
    if not 0 <= start < end:
        raise ValueError(f"shard rows must satisfy 0 <= start < end, got {start}..{end}")
    passages_fp = _passages_fingerprint(passages_tsv)
    record = _finished(shard, start, end, spec, passages_fp)
    if record is not None:
        log.info("%s: finished, skipped", shard.name)
        return record
    passages = read_passage_range(passages_tsv, start, end)
    encoder = load_encoder(spec, device)
    titles, texts = [p.title for p in passages], [p.text for p in passages]
    token_ids = None
    if token_cache is not None:
        token_ids = passage_token_ids(Path(token_cache), passages_fp, start, end,
                                      encoder.ctx_tokenizer, max_length=spec.max_length,
                                      titles=titles, texts=texts)
    vectors = encoder.encode_passages(titles, texts, batch_size=batch_size, bf16=bf16,
                                      progress=progress, cpu_threads=cpu_threads,
                                      token_ids=token_ids)
    record = write_shard(shard, vectors, [p.id for p in passages], {
        "start": start, "end": end, "model": spec.name,
        "model_fingerprint": spec.fingerprint, "passages": str(passages_tsv),
        "passages_fingerprint": passages_fp, "normalized": spec.normalize,
        "bf16": bool(bf16 and encoder.device.type == "cuda"),
    })
    ENCODED.append(shard.name)
    return record


def encode_shards(passages_tsv: Path, shards_dir: Path, spec: EncoderSpec, shard_size: int,
                  batch_size: int = 64, device: str = "auto", bf16: bool = False,
                  cpu_threads: int | None = None,
                  token_cache: str | Path | None = None) -> list[dict]:
    """Encode every shard of the plan in order in this process (resumes finished ones)."""
    return [encode_shard(passages_tsv, start, end, shard_path(shards_dir, number), spec,
                         batch_size=batch_size, device=device, bf16=bf16,
                         cpu_threads=cpu_threads, token_cache=token_cache)
            for number, (start, end) in enumerate(plan_shards(passages_tsv, shard_size))]


# --- validation -----------------------------------------------------------------------------

def validate_shard(shard: Path, dim: int | None = None,
                   model_fingerprint: str | None = None) -> dict:
    """Check one shard's files and return its metadata (ids file, ids included).

    Raises :class:`ShardError` for a missing ids file (unfinished shard), vectors that are not
    a float32 matrix, a row count that differs between vectors, ids and recorded ``rows``, a
    dimension other than the recorded one or ``dim``; :class:`ModelMismatchError` when the
    shard was encoded by a model other than ``model_fingerprint``.
    """
    shard = Path(shard)
    if not shard.is_file():
        raise ShardError(f"{shard}: shard vectors missing")
    if not ids_path(shard).is_file():
        raise ShardError(f"{shard}: no ids file {ids_path(shard).name}; the shard is "
                         "unfinished (re-run the encoding to finish it)")
    meta = _read_meta(shard)
    shape, dtype = _vector_shape(shard)
    if len(shape) != 2 or dtype != np.float32:
        raise ShardError(f"{shard}: expected a float32 (rows, dim) matrix, found {dtype} "
                         f"of shape {shape}")
    rows, found_dim = shape
    n_ids = len(meta["ids"])
    if rows != n_ids or meta.get("rows") != rows:
        raise ShardError(f"{shard}: ids/rows mismatch: {rows} vectors, {n_ids} ids in "
                         f"{ids_path(shard).name} (recorded rows: {meta.get('rows')})")
    if meta.get("dim") != found_dim:
        raise ShardError(f"{shard}: wrong dimension: vectors have dim {found_dim} but "
                         f"{ids_path(shard).name} records dim {meta.get('dim')}")
    if dim is not None and found_dim != dim:
        raise ShardError(f"{shard}: wrong dimension: {found_dim}, expected {dim} (the other "
                         "shards / the encoder)")
    if model_fingerprint is not None and meta.get("model_fingerprint") != model_fingerprint:
        raise ModelMismatchError(
            f"{shard}: encoded with model {meta.get('model')!r} (fingerprint "
            f"{str(meta.get('model_fingerprint'))[:12]}), expected fingerprint "
            f"{model_fingerprint[:12]}; delete the shard or the model change")
    for key in ("start", "end", "model_fingerprint"):
        if key not in meta:
            raise ShardError(f"{ids_path(shard)}: no {key!r} recorded")
    if meta["end"] - meta["start"] != rows:
        raise ShardError(f"{shard}: rows {meta['start']}..{meta['end']} recorded but {rows} "
                         "vectors")
    return meta
