"""Subflow: paraphrase the questions of a suggestions table in shards on the task runner.

One task per shard (``paraphrase.generation_shard_questions`` questions), submitted
``max(paraphrase.concurrent_generation_shards, runner slots)`` at a time to the runner named by
``orchestration.task_runner``: threads in this process, a Dask cluster or Ray; each task loads
the paraphraser. Finished shards are cached and kept on disk; their tables are merged, in
order, into the candidates table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow

from tasks.config import OrchestrationConfig, ParaphraseConfig
from tasks.distribution import run_on_runner
from tasks.paraphrase.generation import GeneratorKind
from tasks.paraphrase.generation_shards import generate_all_shards


@flow(name="generate paraphrases", log_prints=True)
def generate_paraphrases(suggestions_path: Path, out_path: Path, kind: GeneratorKind,
                         model_dir: Path | None, ppdb_table: Path, paraphrase: ParaphraseConfig,
                         without_suggestion: bool, concurrency: int | None = None
                         ) -> dict[str, Any]:
    """Paraphrase every shard of questions and merge them; returns the generation counts.

    (``paraphrase``, not ``cfg``: :func:`tasks.distribution.run_on_runner` passes the subflow's
    arguments by keyword next to its own ``cfg``.)"""
    return generate_all_shards(suggestions_path, out_path, kind, model_dir, ppdb_table,
                               paraphrase, without_suggestion, concurrency=concurrency)


def generate_paraphrases_on(orchestration: OrchestrationConfig, suggestions_path: Path,
                            out_path: Path, model_dir: Path | None, ppdb_table: Path,
                            cfg: ParaphraseConfig, without_suggestion: bool) -> dict[str, Any]:
    """Run :func:`generate_paraphrases` (paraphraser ``cfg.generator``) on the task runner of
    ``orchestration``."""
    return run_on_runner(
        generate_paraphrases, orchestration, cfg.concurrent_generation_shards,
        f"paraphrase generation in shards of {cfg.generation_shard_questions} questions",
        suggestions_path=suggestions_path, out_path=out_path, kind=cfg.generator,
        model_dir=model_dir, ppdb_table=ppdb_table, paraphrase=cfg,
        without_suggestion=without_suggestion)
