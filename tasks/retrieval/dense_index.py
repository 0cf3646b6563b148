"""Sharded passage encoding and FAISS indexes over the shards; dense search.

Passages are encoded in shards of ``shard_size`` consecutive records of ``psgs_w100.tsv``
(:func:`plan_shards`), each written as two files::

    shard_00000.npy        float32 (rows, dim) passage vectors
    shard_00000.ids.json   {"rows", "dim", "start", "end", "model", "model_fingerprint",
                            "passages_fingerprint", ..., "ids": [...]}

The ``.npy`` is written first and the ``.ids.json`` last, each atomically (temporary file +
rename), so the ids file marks a finished shard. :func:`encode_shard` skips a shard whose files
exist and agree (row count, dimension, range, model and passage-file fingerprints), so a killed
encoding job resumes where it stopped. Shards are independent: one task per shard can run on
any worker (the Prefect stage submits them to the flow's task runner).

:func:`build_faiss_index` validates the shards (:func:`validate_shard`) and writes an index
directory (built under a temporary name, moved into place when complete)::

    index.faiss     flat inner product (exact; default), HNSW (IndexHNSWFlat, inner product)
                    or IVF-PQ (IndexIVFPQ, inner product, trained on a seeded sample)
    ids.txt         the passage id of each index row, one a line
    manifest.json   model name + fingerprint, dim, rows, kind, parameters, ``fingerprint``

:func:`dense_search` refuses queries encoded by another model than the one the index was built
with, naming both.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tasks.io.atomic import atomic_dir, atomic_write, write_json, write_text
from tasks.io.passages import count_passages, iter_passages
from tasks.retrieval.encoders import Embeddings, EncoderSpec, load_encoder

log = logging.getLogger(__name__)

Run = dict[str, list[tuple[str, float]]]
IndexKind = Literal["flat", "hnsw", "ivfpq"]
INDEX_KINDS = ("flat", "hnsw", "ivfpq")
INDEX_FILE, IDS_FILE, MANIFEST_FILE = "index.faiss", "ids.txt", "manifest.json"
#: Test hook: seconds to sleep between writing a shard's vectors and its ids file.
SLEEP_ENV = "QASTRESS_TEST_SHARD_SLEEP"
#: Names of the shards this process encoded (not skipped), in order (tests, logs).
ENCODED: list[str] = []


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


def read_passage_range(passages_tsv: Path, start: int, end: int) -> list:
    """Passages ``start`` (0-based, inclusive) to ``end`` (exclusive) of a passage TSV."""
    passages = list(itertools.islice(iter_passages(passages_tsv), start, end))
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
    """Write a shard: vectors first, then the ids file that marks it finished (both atomic)."""
    shard = Path(shard)
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(ids):
        raise ShardError(f"{shard}: {len(ids)} ids but vectors of shape {vectors.shape}")
    with atomic_write(shard, mode="wb") as handle:
        np.save(handle, vectors)
    delay = float(os.environ.get(SLEEP_ENV, "0") or 0)
    if delay > 0:
        time.sleep(delay)
    full = {**meta, "rows": int(vectors.shape[0]), "dim": int(vectors.shape[1]),
            "dtype": "float32", "ids": [str(i) for i in ids]}
    write_json(ids_path(shard), full)
    return shard_record(shard, full)


def _remove_stale_temporaries(shard: Path) -> None:
    """Temporary files a killed writer of this shard left behind."""
    for name in (shard.name, ids_path(shard).name):
        for stale in shard.parent.glob(f".{name}.*.tmp"):
            with contextlib.suppress(OSError):
                stale.unlink()


def encode_shard(passages_tsv: Path, start: int, end: int, shard_path: Path,
                 spec: EncoderSpec, batch_size: int = 64, device: str = "auto",
                 bf16: bool = False, progress: bool = False) -> dict:
    """Encode passages ``start..end`` of ``passages_tsv`` into ``shard_path`` (+ ids file).

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
    _remove_stale_temporaries(shard)
    passages = read_passage_range(passages_tsv, start, end)
    encoder = load_encoder(spec, device)
    vectors = encoder.encode_passages([p.title for p in passages], [p.text for p in passages],
                                      batch_size=batch_size, bf16=bf16, progress=progress)
    record = write_shard(shard, vectors, [p.id for p in passages], {
        "start": start, "end": end, "model": spec.name,
        "model_fingerprint": spec.fingerprint, "passages": str(passages_tsv),
        "passages_fingerprint": passages_fp, "normalized": spec.normalize,
        "bf16": bool(bf16 and encoder.device.type == "cuda"),
    })
    ENCODED.append(shard.name)
    return record


def encode_shards(passages_tsv: Path, shards_dir: Path, spec: EncoderSpec, shard_size: int,
                  batch_size: int = 64, device: str = "auto", bf16: bool = False) -> list[dict]:
    """Encode every shard of the plan in order in this process (resumes finished ones)."""
    return [encode_shard(passages_tsv, start, end, shard_path(shards_dir, number), spec,
                         batch_size=batch_size, device=device, bf16=bf16)
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


# --- FAISS index ------------------------------------------------------------------------------

def _shard_paths(shards: Sequence[Path | str | dict]) -> list[Path]:
    return [Path(s["path"] if isinstance(s, dict) else s) for s in shards]


def _auto_pq_m(dim: int) -> int:
    return next(m for m in range(max(1, dim // 8), 0, -1) if dim % m == 0)


def _sample_rows(shards: list[Path], metas: list[dict], size: int, seed: int) -> np.ndarray:
    total = sum(m["rows"] for m in metas)
    chosen = np.sort(np.random.default_rng(seed).choice(total, size=size, replace=False))
    parts, offset = [], 0
    for shard, meta in zip(shards, metas, strict=True):
        local = chosen[(chosen >= offset) & (chosen < offset + meta["rows"])] - offset
        if local.size:
            parts.append(np.asarray(np.load(shard, mmap_mode="r")[local], dtype=np.float32))
        offset += meta["rows"]
    return np.ascontiguousarray(np.concatenate(parts))


def build_faiss_index(shard_paths: Sequence[Path | str | dict], index_path: Path,
                      kind: IndexKind = "flat", model_fingerprint: str | None = None,
                      hnsw_m: int = 32, ef_construction: int = 200, ef_search: int = 128,
                      nlist: int | None = None, pq_m: int | None = None, pq_nbits: int = 8,
                      nprobe: int = 16, train_size: int = 100_000, seed: int = 0,
                      add_batch: int = 65_536) -> Path:
    """Validate the shards and build one FAISS inner-product index directory at ``index_path``.

    Shards (paths or :func:`shard_record` dicts) must share one model and dimension and cover
    consecutive passage rows (in any order given). ``kind``: ``flat`` (exact), ``hnsw``
    (``hnsw_m`` links, ``ef_construction``/``ef_search``) or ``ivfpq`` (``nlist`` lists,
    default ``~4 sqrt(N)``; ``pq_m`` sub-quantizers, default ``dim // 8``; ``pq_nbits`` bits,
    lowered when the training sample is small; trained on ``train_size`` rows sampled with
    ``seed``; searched with ``nprobe``).
    """
    import faiss

    if kind not in INDEX_KINDS:
        raise ValueError(f"index kind must be one of {INDEX_KINDS}, not {kind!r}")
    paths = _shard_paths(shard_paths)
    if not paths:
        raise ShardError("no shards to index")
    metas = [validate_shard(p, model_fingerprint=model_fingerprint) for p in paths]
    first = metas[0]
    for path, meta in zip(paths, metas, strict=True):
        if meta["dim"] != first["dim"]:
            raise ShardError(f"{path}: wrong dimension: {meta['dim']}, but {paths[0]} has "
                             f"{first['dim']}: one index, one dimension")
        if meta["model_fingerprint"] != first["model_fingerprint"]:
            raise ModelMismatchError(
                f"{path}: encoded with model {meta.get('model')!r} (fingerprint "
                f"{meta['model_fingerprint'][:12]}) but {paths[0]} with {first.get('model')!r} "
                f"(fingerprint {first['model_fingerprint'][:12]}): one index, one model")
        if meta.get("passages_fingerprint") != first.get("passages_fingerprint"):
            raise ShardError(f"{path}: encoded from another passage file than {paths[0]}")
    order = sorted(range(len(paths)), key=lambda i: metas[i]["start"])
    paths, metas = [paths[i] for i in order], [metas[i] for i in order]
    expected = 0
    for path, meta in zip(paths, metas, strict=True):
        if meta["start"] != expected:
            problem = "overlaps the previous shard" if meta["start"] < expected else "leaves a gap"
            raise ShardError(f"{path}: starts at row {meta['start']} but the shards before end "
                             f"at row {expected}: it {problem}")
        expected = meta["end"]
    ids = [pid for meta in metas for pid in meta["ids"]]
    bad = next((pid for pid in ids if not pid or any(c in pid for c in "\n\r")), None)
    if bad is not None:
        raise ShardError(f"passage id {bad!r}: ids must be non-empty single-line strings")
    if len(set(ids)) != len(ids):
        raise ShardError("a passage id occurs in more than one row of the shards")
    dim, rows = int(first["dim"]), len(ids)
    params: dict[str, Any] = {}
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
        index.hnsw.efSearch = ef_search
        params = {"hnsw_m": hnsw_m, "ef_construction": ef_construction, "ef_search": ef_search}
    else:
        n_train = min(rows, train_size)
        lists = nlist or max(1, min(int(4 * math.sqrt(rows)), rows // 39))
        lists = min(lists, n_train)
        m = pq_m or _auto_pq_m(dim)
        if dim % m:
            raise ValueError(f"pq_m={m} must divide the dimension {dim}")
        nbits = min(pq_nbits, max(1, int(math.log2(n_train))))
        if nbits != pq_nbits:
            log.warning("IVF-PQ: %d training rows, so %d bits per code instead of %d",
                        n_train, nbits, pq_nbits)
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFPQ(quantizer, dim, lists, m, nbits, faiss.METRIC_INNER_PRODUCT)
        index.train(_sample_rows(paths, metas, n_train, seed))
        index.nprobe = min(nprobe, lists)
        params = {"nlist": lists, "pq_m": m, "pq_nbits": nbits, "nprobe": index.nprobe,
                  "train_size": n_train, "seed": seed}
    for path in paths:
        vectors = np.load(path, mmap_mode="r")
        for start in range(0, vectors.shape[0], add_batch):
            index.add(np.ascontiguousarray(vectors[start:start + add_batch], dtype=np.float32))
    manifest = {
        "kind": "faiss-dense",
        "index_kind": kind,
        "metric": "inner_product",
        "model": first.get("model"),
        "model_fingerprint": first["model_fingerprint"],
        "normalized": first.get("normalized"),
        "dim": dim,
        "rows": rows,
        "shards": len(paths),
        "passages": first.get("passages"),
        "passages_fingerprint": first.get("passages_fingerprint"),
        "params": params,
        "faiss": faiss.__version__,
    }
    manifest["fingerprint"] = hashlib.sha256(json.dumps({
        "model": manifest["model_fingerprint"], "passages": manifest["passages_fingerprint"],
        "ranges": [(m["start"], m["end"]) for m in metas], "kind": kind, "params": params,
        "faiss": manifest["faiss"]}, sort_keys=True).encode()).hexdigest()
    with atomic_dir(index_path) as tmp:
        faiss.write_index(index, str(tmp / INDEX_FILE))
        write_text(tmp / IDS_FILE, "".join(f"{pid}\n" for pid in ids))
        write_json(tmp / MANIFEST_FILE, manifest, indent=2)
    return Path(index_path)


def read_index_manifest(index_dir: Path) -> dict:
    """The ``manifest.json`` of a dense index directory."""
    path = Path(index_dir) / MANIFEST_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{index_dir}: not a dense index (no {MANIFEST_FILE})")
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass
class DenseIndex:
    """An opened dense index: the FAISS index, the passage id of each row, the manifest."""

    path: Path
    index: Any
    ids: np.ndarray
    manifest: dict

    @classmethod
    def open(cls, index_dir: Path) -> DenseIndex:
        """Read ``index.faiss``, ``ids.txt`` and ``manifest.json``; check they agree."""
        import faiss

        index_dir = Path(index_dir)
        manifest = read_index_manifest(index_dir)
        index = faiss.read_index(str(index_dir / INDEX_FILE))
        with open(index_dir / IDS_FILE, encoding="utf-8") as handle:
            ids = np.array(handle.read().splitlines())
        if not index.ntotal == len(ids) == manifest["rows"] or index.d != manifest["dim"]:
            raise ValueError(f"{index_dir}: index has {index.ntotal} rows of dim {index.d}, "
                             f"{len(ids)} ids, manifest says {manifest['rows']} x "
                             f"{manifest['dim']}: rebuild the index")
        params = manifest.get("params", {})
        if "ef_search" in params:
            index.hnsw.efSearch = params["ef_search"]
        if "nprobe" in params:
            index.nprobe = params["nprobe"]
        return cls(index_dir, index, ids, manifest)

    def check_queries(self, queries: Embeddings) -> None:
        """Refuse queries of another model or dimension than the index's."""
        if queries.model_fingerprint != self.manifest["model_fingerprint"]:
            raise ModelMismatchError(
                f"{self.path} was built with model {self.manifest['model']!r} (fingerprint "
                f"{self.manifest['model_fingerprint'][:12]}) but the queries were encoded "
                f"with {queries.model_name!r} (fingerprint {queries.model_fingerprint[:12]}); "
                "encode the queries with the index's model or rebuild the index")
        if queries.vectors.shape[1] != self.index.d:
            raise ValueError(f"query vectors have dim {queries.vectors.shape[1]}, the index "
                             f"{self.path} has dim {self.index.d}")

    def search(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """FAISS ``(scores, rows)`` of the top ``k`` (at most the index size) per query."""
        k = min(k, self.index.ntotal)
        return self.index.search(np.ascontiguousarray(vectors, dtype=np.float32), k)

    def search_run(self, queries: Embeddings, k: int) -> Run:
        """``{qid: [(passage id, score), ...]}`` in rank order for every query."""
        self.check_queries(queries)
        if k < 1:
            raise ValueError(f"k must be >= 1, not {k}")
        if len(set(queries.ids)) != len(queries.ids):
            raise ValueError("query ids must be unique")
        scores, rows = self.search(queries.vectors, k)
        missing = rows < 0  # HNSW / IVF may find fewer than k (row -1)
        if not missing.any():
            docids = self.ids[rows].tolist()
            return dict(zip(queries.ids, map(list, map(zip, docids, scores.tolist())),
                            strict=True))
        docids = self.ids[np.where(missing, 0, rows)].tolist()
        return {qid: [(d, s) for d, s, gone in zip(ids, row_scores, absent, strict=True)
                      if not gone]
                for qid, ids, row_scores, absent in zip(queries.ids, docids, scores.tolist(),
                                                        missing.tolist(), strict=True)}


def dense_search(index_dir: Path, query_embeddings: Embeddings, k: int) -> Run:
    """Top-``k`` passages of each query: ``{qid: [(docid, score), ...]}`` in rank order.

    Raises :class:`ModelMismatchError` when the queries were encoded by another model than the
    index's passages (the message names both).
    """
    if not isinstance(query_embeddings, Embeddings):
        raise TypeError("query_embeddings must be Embeddings (vectors + qids + the model that "
                        "made them), e.g. from tasks.retrieval.encoders.encode_questions")
    return DenseIndex.open(index_dir).search_run(query_embeddings, k)
