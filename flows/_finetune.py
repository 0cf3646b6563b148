"""Fine-tune a registered DPR pair and run it on query sets through the retrieval core.

:func:`finetune_and_evaluate` is the unit of the retriever experiments (and of any table that
fine-tunes from a baseline): the cached fine-tune (:func:`tasks.training.finetune.finetune`)
-> the new pair as a registry :class:`~tasks.retrieval.retrievers.DenseRetriever` -> its runs:

- ``freeze: onlyQ`` (passage encoder frozen, saved bit-identical): the baseline's passage
  index is searched with the new question encoder
  (:func:`tasks.retrieval.frozen_index.retrieve_frozen_index`), nothing is re-encoded;
- otherwise the passages are encoded again by the retrieval core
  (:func:`flows._retrieve.prepare_indexes`: shards on the task runner -> FAISS) and searched
  (:func:`flows._retrieve.run`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows._retrieve import Collection, DenseIndexRef, prepare_indexes, run
from tasks.config import DenseConfig, NamedDenseConfig, OrchestrationConfig
from tasks.retrieval.frozen_index import retrieve_frozen_index_task
from tasks.retrieval.retrievers import (
    TRAINED_PREFIX,
    DenseRetriever,
    dense_config,
    trained_encoder_config,
)
from tasks.retriever_config import RetrieverTrainConfig
from tasks.training.finetune import finetune_task


@dataclass(frozen=True)
class Baseline:
    """The pair every fine-tune starts from: its directory and its built passage index."""

    retriever: DenseRetriever
    model_dir: Path
    index: DenseIndexRef


def baseline_of(retriever: DenseRetriever, index: DenseIndexRef) -> Baseline:
    """The saved DPR pair behind a registered dense retriever (``trained:<run>`` or any
    ``question_encoder/`` + ``ctx_encoder/`` directory pair)."""
    spec = retriever.encoder()
    if spec.kind != "dpr":
        raise ValueError(f"retriever {retriever.name!r} is a {spec.kind} encoder; fine-tuning "
                         "starts from a DPR pair (question_encoder/ + ctx_encoder/)")
    question, ctx = Path(spec.question_model), Path(spec.ctx_model)
    if question.parent != ctx.parent:
        raise ValueError(f"retriever {retriever.name!r}: {question} and {ctx} are not one saved"
                         " pair (fine-tuning starts from a directory holding both)")
    return Baseline(retriever, question.parent, index)


def finetuned_retriever(name: str, model_dir: Path, dense: DenseConfig) -> DenseRetriever:
    """A fine-tuned pair as a registry retriever (``retrieval.dense`` settings, DPR's raw dot
    product)."""
    named = trained_encoder_config(NamedDenseConfig(model=f"{TRAINED_PREFIX}{name}"), model_dir)
    return DenseRetriever(dense_config(dense, named), name=name, title=name)


def finetune_and_evaluate(name: str, train_sets: Mapping[str, Sequence[Path]],
                          config: RetrieverTrainConfig, baseline: Baseline, out_dir: Path,
                          checkpoint_dir: Path, queries: Sequence[Path],
                          run_path: Callable[[Path], Path], collection: Collection,
                          orchestration: OrchestrationConfig,
                          max_questions: Mapping[str, int | None] | None = None,
                          ) -> tuple[dict[str, Any], dict[Path, Path]]:
    """Fine-tune ``baseline`` on ``train_sets`` into ``out_dir`` and run the result on each
    query-set file; returns the fine-tune summary and ``{query file: TREC run}``
    (``run_path(query file)`` says where each run goes)."""
    summary = finetune_task(dict(train_sets), baseline.model_dir, out_dir, str(checkpoint_dir),
                            config, dict(max_questions or {}))
    retriever = finetuned_retriever(name, out_dir, baseline.retriever.config)
    runs: dict[Path, Path] = {}
    if config.freeze == "onlyQ":
        cfg, spec = retriever.config, retriever.encoder()
        for queries_file in queries:
            runs[queries_file] = retrieve_frozen_index_task(
                baseline.index.path, queries_file, run_path(queries_file), spec,
                baseline.index.spec, k=cfg.top_k, batch_size=cfg.batch_size, device=cfg.device,
                bf16=cfg.bf16, cpu_threads=cfg.cpu_threads)
        return summary, runs
    indexes = prepare_indexes([retriever], collection, orchestration)
    for queries_file in queries:
        runs[queries_file] = run(retriever, queries_file, run_path(queries_file),
                                 indexes=indexes, runs={}, orchestration=orchestration)
    return summary, runs
