"""Subflow: encode the passage collection in shards on the configured task runner.

One task per shard (``retrieval.dense.shard_size`` passages), submitted
``max(retrieval.dense.concurrent_shards, runner slots)`` at a time to the runner named by
``orchestration.task_runner``: threads in this process, a Dask cluster (local or by address) or
Ray. Finished shards are cached and kept on disk, so an interrupted encoding resumes at the
first unfinished shard.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from tasks.config import DenseConfig, OrchestrationConfig
from tasks.distribution import run_on_runner
from tasks.retrieval.dense_encoding import encode_all_shards
from tasks.retrieval.encoders import EncoderSpec


@flow(name="encode passages", log_prints=True)
def encode_passages(passages: Path, shards_dir: Path, spec: EncoderSpec, dense: DenseConfig,
                    concurrency: int | None = None,
                    token_cache: Path | None = None) -> list[dict]:
    """Encode every passage shard; returns the shard records (vectors, ids, counts).
    ``token_cache``: where the shards' token ids are shared between encodings (None: none)."""
    return encode_all_shards(passages, shards_dir, spec, dense, concurrency=concurrency,
                             token_cache=token_cache)


def encode_passages_on(orchestration: OrchestrationConfig, passages: Path, shards_dir: Path,
                       spec: EncoderSpec, dense: DenseConfig,
                       token_cache: Path | None = None) -> list[dict]:
    """Run :func:`encode_passages` on the task runner of ``orchestration``."""
    return run_on_runner(encode_passages, orchestration, dense.concurrent_shards,
                         "encoding passage shards", passages, shards_dir, spec, dense,
                         token_cache=token_cache)
