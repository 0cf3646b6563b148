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
from tasks.distribution import describe_runner, runner_width, task_runner_for
from tasks.retrieval.dense_stages import encode_all_shards
from tasks.retrieval.encoders import EncoderSpec


@flow(name="encode passages", log_prints=True)
def encode_passages(passages: Path, shards_dir: Path, spec: EncoderSpec, dense: DenseConfig,
                    concurrency: int | None = None) -> list[dict]:
    """Encode every passage shard; returns the shard records (vectors, ids, counts)."""
    return encode_all_shards(passages, shards_dir, spec, dense, concurrency=concurrency)


def encode_passages_on(orchestration: OrchestrationConfig, passages: Path, shards_dir: Path,
                       spec: EncoderSpec, dense: DenseConfig) -> list[dict]:
    """Run :func:`encode_passages` on the task runner of ``orchestration``."""
    width = max(dense.concurrent_shards, runner_width(orchestration) or 1)
    print(f"encoding passage shards on {describe_runner(orchestration)}, {width} at a time")
    runner = task_runner_for(orchestration)
    return encode_passages.with_options(task_runner=runner)(
        passages, shards_dir, spec, dense, concurrency=width)
