"""BM25 retrieval of a query set in batches: one task per batch, then one merge.

Steps: plan the batches (``retrieval.bm25.batch_size`` questions each, in the order of the
query-set file of :mod:`tasks.retrieval.query_sets`) -> search
each batch (a cached task writing its own TREC run, so batches spread over the task runner's
workers and an interrupted search resumes at the first unfinished batch) -> merge the batch
runs, in order, into the set's TREC run -- the same file one search of all questions writes.
"""

from __future__ import annotations

from pathlib import Path

from tasks.config import BM25Config
from tasks.distribution import submit_in_waves
from tasks.io.trec import read_trec_run, write_trec_run
from tasks.orchestration import TRANSIENT, artifact_task
from tasks.retrieval.bm25 import bm25_run_tag, bm25_search
from tasks.retrieval.query_sets import query_slice, read_query_set


def plan_query_batches(queries: Path, batch_size: int) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` question ranges of at most ``batch_size`` covering the query
    set (a file of :func:`~tasks.retrieval.query_sets.write_query_set`)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    n = len(read_query_set(queries))
    return [(start, min(start + batch_size, n)) for start in range(0, n, batch_size)]


def batch_path(batches_dir: Path, number: int) -> Path:
    """The TREC run file of batch ``number``."""
    return batches_dir / f"batch_{number:05d}.trec"


def search_bm25_batch(index: str | Path, queries: Path, start: int, end: int,
                      out_path: Path, k: int = 100, k1: float = 0.9, b: float = 0.4,
                      threads: int = 2, heap: str = "2g") -> Path:
    """Top-``k`` BM25 passages of questions ``start:end`` of the query set, as a TREC run."""
    qids, texts = query_slice(queries, start, end)
    run = bm25_search(index, texts, qids, k=k, k1=k1, b=b, threads=threads, heap=heap)
    return write_trec_run(out_path, run, tag=bm25_run_tag(k1, b))


def merge_batch_runs(batch_runs: list[Path], run_path: Path, tag: str) -> Path:
    """The batch runs, read (and checked) in order, written as one TREC run."""
    merged: dict[str, list[tuple[str, float]]] = {}
    for path in batch_runs:
        for qid, ranking in read_trec_run(path).items():
            if qid in merged:
                raise ValueError(f"{path}: query {qid!r} is also in an earlier batch")
            merged[qid] = ranking
    return write_trec_run(run_path, merged, tag=tag)


def search_all_batches(index: str | Path, queries: Path, run_path: Path, cfg: BM25Config,
                       concurrency: int | None = None) -> Path:
    """Submit one search task per batch, ``concurrency`` (default ``cfg.concurrent_batches``)
    at a time, then merge their runs into ``run_path``.

    Call inside a flow: the tasks run on the flow's task runner (threads by default, where they
    share this process's JVM worker; a ``DaskTaskRunner`` gives each worker its own JVM).
    """
    plan = plan_query_batches_task(queries, cfg.batch_size)
    batches_dir = run_path.with_name(f"{run_path.stem}.batches")
    paths = submit_in_waves(
        lambda number, batch: search_bm25_batch_task.submit(
            index, queries, *batch, batch_path(batches_dir, number), k=cfg.top_k,
            k1=cfg.k1, b=cfg.b, threads=cfg.threads, heap=cfg.java_heap),
        plan, concurrency or cfg.concurrent_batches)
    return merge_batch_runs_task(paths, run_path, bm25_run_tag(cfg.k1, cfg.b))


plan_query_batches_task = artifact_task(plan_query_batches, name="plan BM25 batches")
# Lucene tasks start the JVM: retried as transient (TRANSIENT).
search_bm25_batch_task = artifact_task(search_bm25_batch, outputs=("out_path",),
                                       name="search BM25 batch", **TRANSIENT)
merge_batch_runs_task = artifact_task(merge_batch_runs, outputs=("run_path",),
                                      name="merge BM25 batches")
