"""FAISS indexes over the passage shards (:mod:`tasks.retrieval.dense_shards`); dense search.

:func:`build_faiss_index` validates the shards
(:func:`~tasks.retrieval.dense_shards.validate_shard`) and writes an index directory (built
under a temporary name, moved into place when complete) in the layout of Pyserini's dense
indexes, so ``pyserini.search.faiss.FaissSearcher(index_dir, query_encoder)`` opens it too::

    index           the FAISS index: flat inner product (exact; default), HNSW (IndexHNSWFlat,
                    inner product) or IVF-PQ (IndexIVFPQ, inner product, trained on a seeded
                    sample)
    docid           the passage id of each index row, one a line
    manifest.json   model name + fingerprint, dim, rows, kind, parameters, ``fingerprint``

An index built elsewhere (:mod:`tasks.retrieval.prebuilt_dense`) is a directory holding only
the manifest, whose ``source`` names the directory with ``index`` and ``docid``
(:func:`index_files`).

:func:`dense_search` refuses queries encoded by another model than the one the index was built
with, naming both.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tasks.io.atomic import atomic_dir, write_json, write_text
from tasks.retrieval.dense_shards import ModelMismatchError, ShardError, validate_shard
from tasks.retrieval.encoders import Embeddings

log = logging.getLogger(__name__)

Run = dict[str, list[tuple[str, float]]]
IndexKind = Literal["flat", "hnsw", "ivfpq"]
INDEX_KINDS = ("flat", "hnsw", "ivfpq")
#: File names as Pyserini's ``FaissSearcher.load_index`` reads them, and our manifest.
INDEX_FILE, IDS_FILE, MANIFEST_FILE = "index", "docid", "manifest.json"


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


def read_faiss_index(path: Path) -> Any:
    """The FAISS index in ``path``, memory-mapped read-only where FAISS can (faiss 1.15 maps
    flat, HNSW and IVF-PQ indexes): opening takes no time and makes no copy of the vectors,
    however large the index, and processes that search one index share the page cache. An
    index FAISS cannot map is read into memory."""
    import faiss

    try:
        return faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
    except RuntimeError:
        return faiss.read_index(str(path))


def index_files(index_dir: Path, manifest: dict | None = None) -> tuple[Path, Path]:
    """``(index, docid)`` files of a dense index directory: its own, or those of the
    directory its manifest's ``source`` names (a prebuilt index, not copied)."""
    index_dir = Path(index_dir)
    manifest = read_index_manifest(index_dir) if manifest is None else manifest
    root = Path(manifest["source"]) if manifest.get("source") else index_dir
    files = root / INDEX_FILE, root / IDS_FILE
    missing = [str(path) for path in files if not path.is_file()]
    if missing and manifest.get("source"):
        raise FileNotFoundError(f"{index_dir} stands for the prebuilt index {root}, but "
                                f"{', '.join(missing)} is gone: fetch that index again")
    return files


@dataclass
class DenseIndex:
    """An opened dense index: the FAISS index, the passage id of each row, the manifest."""

    path: Path
    index: Any
    ids: np.ndarray
    manifest: dict

    @classmethod
    def open(cls, index_dir: Path) -> DenseIndex:
        """Read ``index``, ``docid`` (here or in the manifest's ``source``) and
        ``manifest.json``; check they agree."""
        index_dir = Path(index_dir)
        manifest = read_index_manifest(index_dir)
        index_file, ids_file = index_files(index_dir, manifest)
        index = read_faiss_index(index_file)
        with open(ids_file, encoding="utf-8") as handle:
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
