"""Dense retrieval as named steps, each a plain function with a cached task on top.

Steps: plan passage shards -> encode each shard (one task per shard, so shards can be
submitted to any Prefect task runner, e.g. prefect-dask's ``DaskTaskRunner``) -> build the
FAISS index -> encode the questions of a query set and retrieve their top-k passages (TREC
run). Shards: :mod:`tasks.retrieval.dense_shards`; the index: :mod:`tasks.retrieval.faiss_index`.
"""

from __future__ import annotations

import re
from pathlib import Path

from tasks.config import DenseConfig
from tasks.distribution import submit_in_waves
from tasks.io.trec import write_trec_run
from tasks.orchestration import artifact_task
from tasks.retrieval.dense_shards import encode_shard, ids_path, plan_shards, shard_path
from tasks.retrieval.encoders import EncoderSpec, encode_questions
from tasks.retrieval.faiss_index import build_faiss_index, dense_search
from tasks.retrieval.query_sets import read_query_set


def index_options(cfg: DenseConfig) -> dict:
    """Keyword arguments of :func:`build_faiss_index` from the config."""
    return {"kind": cfg.index, "hnsw_m": cfg.hnsw_m, "ef_search": cfg.ef_search,
            "nlist": cfg.nlist, "pq_m": cfg.pq_m, "nprobe": cfg.nprobe}


def shard_files(shards_dir: Path, number: int) -> tuple[Path, Path]:
    """``(vectors, ids)`` files of shard ``number``."""
    vectors = shard_path(shards_dir, number)
    return vectors, ids_path(vectors)


def plan_passage_shards(passages_tsv: Path, shard_size: int) -> list[tuple[int, int]]:
    """Row ranges of the passage shards."""
    return plan_shards(passages_tsv, shard_size)


def encode_passage_shard(passages_tsv: Path, start: int, end: int,
                         shard: tuple[Path, Path], spec: EncoderSpec, batch_size: int = 64,
                         device: str = "auto", bf16: bool = False,
                         cpu_threads: int | None = None,
                         token_cache: str | Path | None = None) -> dict:
    """Encode one shard of passages (``shard`` = its vectors and ids files, the outputs) with
    ``cpu_threads`` torch CPU threads (None: the machine's count), its token ids shared
    through ``token_cache`` (:func:`tasks.retrieval.dense_shards.encode_shard`)."""
    return encode_shard(passages_tsv, start, end, shard[0], spec, batch_size=batch_size,
                        device=device, bf16=bf16, cpu_threads=cpu_threads,
                        token_cache=token_cache)


def encode_all_shards(passages_tsv: Path, shards_dir: Path, spec: EncoderSpec,
                      cfg: DenseConfig, concurrency: int | None = None,
                      token_cache: Path | None = None) -> list[dict]:
    """Submit one shard task per shard, ``concurrency`` (default ``cfg.concurrent_shards``) at
    a time; their records. ``token_cache``: a directory where the shards' token ids are
    shared with the other encodings of the same passages (None: none).

    Call inside a flow: the tasks run on the flow's task runner (threads by default; a
    ``DaskTaskRunner`` spreads them over processes or machines).
    """
    plan = plan_passage_shards_task(passages_tsv, cfg.shard_size)
    return submit_in_waves(
        lambda number, shard: encode_passage_shard_task.submit(
            passages_tsv, *shard, shard_files(shards_dir, number), spec,
            batch_size=cfg.batch_size, device=cfg.device, bf16=cfg.bf16,
            cpu_threads=cfg.cpu_threads,
            # a str, not a Path: the task's cache key must not hash the cache's contents
            token_cache=None if token_cache is None else str(token_cache)),
        plan, concurrency or cfg.concurrent_shards)


def build_dense_index(shards: list[dict], index_dir: Path, spec: EncoderSpec,
                      kind: str = "flat", hnsw_m: int = 32, ef_search: int = 128,
                      nlist: int | None = None, pq_m: int | None = None,
                      nprobe: int = 16) -> Path:
    """One FAISS index over the shards (records from :func:`encode_passage_shard`)."""
    return build_faiss_index(shards, index_dir, kind=kind, model_fingerprint=spec.fingerprint,
                             hnsw_m=hnsw_m, ef_search=ef_search, nlist=nlist, pq_m=pq_m,
                             nprobe=nprobe)


def run_tag(prefix: str, name: str) -> str:
    """A TREC run tag (no white space)."""
    return re.sub(r"\s+", "_", f"{prefix}_{name}")


def retrieve_dense(index_dir: Path, queries: Path, run_path: Path, spec: EncoderSpec,
                   k: int = 100, batch_size: int = 64, device: str = "auto",
                   bf16: bool = False, cpu_threads: int | None = None) -> Path:
    """Encode every question of a query-set file (``cpu_threads`` torch CPU threads, None: the
    machine's count) and write its top-``k`` passages as one TREC run."""
    query_set = read_query_set(queries)
    embeddings = encode_questions(spec, query_set.texts, query_set.qids, batch_size=batch_size,
                                  device=device, bf16=bf16, cpu_threads=cpu_threads)
    write_trec_run(run_path, dense_search(index_dir, embeddings, k),
                   tag=run_tag("dense", spec.name))
    return run_path


plan_passage_shards_task = artifact_task(plan_passage_shards, name="plan passage shards")
encode_passage_shard_task = artifact_task(encode_passage_shard, outputs=("shard",),
                                          name="encode passage shard", retries=1)
build_dense_index_task = artifact_task(build_dense_index, outputs=("index_dir",),
                                       name="build dense index")
retrieve_dense_task = artifact_task(retrieve_dense, outputs=("run_path",), name="retrieve dense")
