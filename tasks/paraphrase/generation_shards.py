"""Paraphrase generation in shards of questions: one task per shard, then one merge.

Steps: plan the shards (``paraphrase.generation_shard_questions`` questions of the suggestions
table each, in order of first appearance) -> generate each shard (a cached task that loads the
paraphraser and writes its own candidates table, so shards spread over the task runner's
workers and an interrupted generation resumes at the first unfinished shard) -> merge the
shard tables, in order, into the candidates table and add up their counts. Every count is per
question (duplicates are counted within a question), so the sums equal one unsharded run's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from models.threads import torch_threads
from tasks.config import ParaphraseConfig
from tasks.distribution import submit_in_waves
from tasks.io.tables import read_table, write_table
from tasks.orchestration import artifact_task
from tasks.paraphrase.generation import (
    CANDIDATES_SCHEMA,
    COUNT_KEYS,
    GeneratorKind,
    generate_candidates,
    load_generator,
    question_order,
)


def plan_generation_shards(suggestions_path: Path,
                           questions_per_shard: int) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` question ranges of at most ``questions_per_shard`` covering the
    questions of the suggestions table (none for an empty table)."""
    if questions_per_shard < 1:
        raise ValueError(f"questions_per_shard must be >= 1, got {questions_per_shard}")
    n = len(question_order(read_table(suggestions_path, columns=["qid"]).to_pylist()))
    return [(start, min(start + questions_per_shard, n))
            for start in range(0, n, questions_per_shard)]


def shard_path(shards_dir: Path, number: int) -> Path:
    """The candidates table of shard ``number``."""
    return shards_dir / f"shard_{number:05d}.parquet"


def generate_shard(suggestions_path: Path, start: int, end: int, out_path: Path,
                   kind: GeneratorKind, model_dir: Path | None, ppdb_table: Path,
                   beam_size: int | None, without_suggestion: bool = True,
                   max_n: int = 6, threads: int | None = 1) -> dict[str, Any]:
    """Load the paraphraser of ``kind`` and paraphrase questions ``start:end`` with ``threads``
    torch CPU threads (``None``: torch's setting); the counts and the shard's table (``path``).
    """
    generator = load_generator(kind, model_dir, ppdb_table, max_n)
    try:
        with torch_threads(threads):
            counts = generate_candidates(suggestions_path, out_path, generator, beam_size,
                                         without_suggestion, questions=(start, end))
    finally:
        table = getattr(generator, "table", None)
        if table is not None:
            table.close()
    return {**counts, "path": str(out_path)}


def merge_candidate_shards(shards: list[dict[str, Any]], out_path: Path) -> dict[str, Any]:
    """The shard tables, in order, as one candidates table; the shards' counts added up."""
    rows: list[dict[str, Any]] = []
    counts: dict[str, Any] = dict.fromkeys(COUNT_KEYS, 0)
    for shard in shards:
        rows.extend(read_table(Path(shard["path"])).to_pylist())
        for key, value in shard.items():
            if key != "path":
                counts[key] = counts.get(key, 0) + value
    if counts["candidates"] != len(rows):
        raise ValueError(f"the shard tables hold {len(rows)} candidates but their counts say "
                         f"{counts['candidates']}: a shard table was changed after it "
                         "was written (delete the shards directory and rerun)")
    write_table(out_path, rows, schema=CANDIDATES_SCHEMA)
    return counts


def generate_all_shards(suggestions_path: Path, out_path: Path, kind: GeneratorKind,
                        model_dir: Path | None, ppdb_table: Path, cfg: ParaphraseConfig,
                        without_suggestion: bool, concurrency: int | None = None
                        ) -> dict[str, Any]:
    """Submit one generation task per shard, ``concurrency`` (default
    ``cfg.concurrent_generation_shards``) at a time, then merge them into ``out_path``.

    Call inside a flow: the tasks run on the flow's task runner (threads by default; a
    ``DaskTaskRunner`` spreads them over processes or machines, each loading the paraphraser).
    """
    plan = plan_generation_shards_task(suggestions_path, cfg.generation_shard_questions)
    shards_dir = out_path.with_name(f"{out_path.stem}.shards")
    shards = submit_in_waves(
        lambda number, shard: generate_shard_task.submit(
            suggestions_path, start=shard[0], end=shard[1],
            out_path=shard_path(shards_dir, number), kind=kind, model_dir=model_dir,
            ppdb_table=ppdb_table, beam_size=cfg.beam_size,
            without_suggestion=without_suggestion, max_n=cfg.max_ngram,
            threads=cfg.generation_threads),
        plan, concurrency or cfg.concurrent_generation_shards)
    return merge_candidate_shards_task(shards, out_path)


plan_generation_shards_task = artifact_task(plan_generation_shards,
                                            name="plan generation shards")
generate_shard_task = artifact_task(generate_shard, outputs=("out_path",),
                                    name="generate paraphrase shard")
merge_candidate_shards_task = artifact_task(merge_candidate_shards, outputs=("out_path",),
                                            name="merge paraphrase shards")
