"""Fine-tune a saved DPR pair and run it on query sets through the retrieval core.

:func:`finetune_pair` is the one fine-tune step of the retriever experiments (Tables 2-3) and
of the specialised question encoders (Table 4): the cached fine-tune
(:func:`tasks.training.finetune.finetune`) of a saved pair with a freeze mode -> with ``freeze:
onlyQ`` the passage encoder checked bit-identical to the start pair's -> the new pair as a
registry :class:`~tasks.retrieval.retrievers.DenseRetriever` (:func:`pair_retriever`).

:func:`finetune_and_evaluate` (Tables 2-3) then runs it on query-set files as TREC runs:

- ``freeze: onlyQ``: the baseline's passage index is searched with the new question encoder
  (:func:`tasks.retrieval.frozen_index.retrieve_frozen_index`), nothing is re-encoded;
- otherwise the passages are encoded again by the retrieval core
  (:func:`flows._retrieve.prepare_indexes`: shards on the task runner -> FAISS) and searched
  (:func:`flows._retrieve.run`).

Table 4 searches one opened passage index with many question encoders instead
(:class:`tasks.training.specialised.SharedPassageIndex`, ``flows/specialised_encoders.py``).
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
from tasks.training.finetune import check_passage_encoder_identical, finetune_task


@dataclass(frozen=True)
class Baseline:
    """The pair every fine-tune starts from: its directory and its built passage index."""

    retriever: DenseRetriever
    model_dir: Path
    index: DenseIndexRef


@dataclass(frozen=True)
class FineTuned:
    """A fine-tuned pair: its registry retriever, the fine-tune summary and, for ``freeze:
    onlyQ``, how many passage-encoder tensors were checked bit-identical (else None)."""

    retriever: DenseRetriever
    summary: dict[str, Any]
    passage_tensors_compared: int | None


def baseline_of(retriever: DenseRetriever, index: DenseIndexRef) -> Baseline:
    """The saved pair behind a registered dense retriever (``trained:<run>`` or any
    ``question_encoder/`` + ``ctx_encoder/`` directory pair: DPR checkpoints or plain
    encoders)."""
    spec = retriever.encoder()
    if spec.kind == "shared":
        raise ValueError(f"retriever {retriever.name!r} is a shared encoder; fine-tuning "
                         "starts from a pair (question_encoder/ + ctx_encoder/)")
    question, ctx = Path(spec.question_model), Path(spec.ctx_model)
    if question.parent != ctx.parent:
        raise ValueError(f"retriever {retriever.name!r}: {question} and {ctx} are not one saved"
                         " pair (fine-tuning starts from a directory holding both)")
    return Baseline(retriever, question.parent, index)


def pair_retriever(name: str, model_dir: Path, dense: DenseConfig) -> DenseRetriever:
    """A saved pair (trained or fine-tuned) as a registry retriever named ``name``
    (``retrieval.dense`` settings: batching, length, index, threads; DPR's raw dot product)."""
    named = trained_encoder_config(NamedDenseConfig(model=f"{TRAINED_PREFIX}{name}"), model_dir)
    return DenseRetriever(dense_config(dense, named), name=name, title=name)


def finetune_pair(name: str, train_sets: Mapping[str, Sequence[Path]],
                  config: RetrieverTrainConfig, pair_dir: Path, out_dir: Path,
                  checkpoint_dir: Path, dense: DenseConfig,
                  max_questions: Mapping[str, int | None] | None = None) -> FineTuned:
    """Fine-tune the pair saved at ``pair_dir`` on ``train_sets`` (``config.freeze``: full /
    onlyQ / onlyP) into ``out_dir``, resumable from ``checkpoint_dir`` (cached); with onlyQ,
    raise unless the saved passage encoder equals ``pair_dir``'s bit for bit. Returns the new
    pair as the retriever ``name``."""
    summary = finetune_task(dict(train_sets), Path(pair_dir), Path(out_dir), str(checkpoint_dir),
                            config, dict(max_questions or {}))
    compared = None
    if config.freeze == "onlyQ":
        from models.retriever.export import CTX_DIR

        compared = check_passage_encoder_identical(Path(pair_dir) / CTX_DIR,
                                                   Path(out_dir) / CTX_DIR)
    return FineTuned(pair_retriever(name, Path(out_dir), dense), summary, compared)


def finetune_and_evaluate(name: str, train_sets: Mapping[str, Sequence[Path]],
                          config: RetrieverTrainConfig, baseline: Baseline, out_dir: Path,
                          checkpoint_dir: Path, queries: Sequence[Path],
                          run_path: Callable[[Path], Path], collection: Collection,
                          orchestration: OrchestrationConfig,
                          max_questions: Mapping[str, int | None] | None = None,
                          ) -> tuple[dict[str, Any], dict[Path, Path]]:
    """Fine-tune ``baseline`` on ``train_sets`` into ``out_dir`` (:func:`finetune_pair`) and
    run the result on each query-set file; returns the fine-tune summary and ``{query file:
    TREC run}`` (``run_path(query file)`` says where each run goes)."""
    tuned = finetune_pair(name, train_sets, config, pair_dir=baseline.model_dir, out_dir=out_dir,
                          checkpoint_dir=checkpoint_dir, dense=baseline.retriever.config,
                          max_questions=max_questions)
    summary, retriever = tuned.summary, tuned.retriever
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
