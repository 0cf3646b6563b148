"""Subflow: BM25 search of a query set (test split, buckets, ...) in batches on the task runner.

One task per batch (``retrieval.bm25.batch_size`` questions), submitted
``max(retrieval.bm25.concurrent_batches, runner slots)`` at a time to the runner named by
``orchestration.task_runner``: threads in this process (sharing its JVM worker), a Dask cluster
(a JVM per worker) or Ray. Finished batches are cached and kept on disk; their runs are merged,
in order, into the set's TREC run.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from tasks.config import BM25Config, OrchestrationConfig
from tasks.distribution import run_on_runner
from tasks.retrieval.bm25_batches import search_all_batches


@flow(name="search BM25 batches", log_prints=True)
def search_bm25_batches(index: str | Path, queries: Path, run_path: Path,
                        bm25: BM25Config, concurrency: int | None = None) -> Path:
    """Search every batch of a query set (a query-set file) and merge the runs; returns
    ``run_path``."""
    return search_all_batches(index, queries, run_path, bm25, concurrency=concurrency)


def search_bm25_on(orchestration: OrchestrationConfig, index: str | Path, queries: Path,
                   run_path: Path, bm25: BM25Config) -> Path:
    """Run :func:`search_bm25_batches` on the task runner of ``orchestration``."""
    return run_on_runner(search_bm25_batches, orchestration, bm25.concurrent_batches,
                         f"BM25 search of {queries.stem} in batches of {bm25.batch_size} "
                         "questions", index, queries, run_path, bm25)
