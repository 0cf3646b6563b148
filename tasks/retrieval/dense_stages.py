"""The dense retrieval stage as named steps, each a plain function with a cached task on top.

Steps: plan passage shards -> encode each shard (one task per shard, so shards can be
submitted to any Prefect task runner, e.g. prefect-dask's ``DaskTaskRunner``) -> build the
FAISS index -> encode the questions and retrieve the top-k passages (TREC run). Evaluation
reuses :func:`tasks.retrieval.stages.evaluate_run`. Then: reciprocal rank fusion of runs (the
hybrid retriever), the comparison of retrievers (paired bootstrap CIs of top-k differences)
and the accuracy-vs-k figure.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.config import DenseConfig
from tasks.distribution import submit_in_waves
from tasks.evaluation.has_answer import HasAnswerMode
from tasks.evaluation.topk import bootstrap_difference, hits_at_k
from tasks.io.atomic import write_json
from tasks.io.trec import read_trec_run, write_trec_run
from tasks.orchestration import artifact_task
from tasks.reporting.figures import write_accuracy_vs_k
from tasks.reporting.tables import (
    difference_rows,
    publish_table_artifact,
    write_comparison_report,
)
from tasks.retrieval.dense_index import (
    build_faiss_index,
    dense_search,
    encode_shard,
    ids_path,
    plan_shards,
    shard_path,
)
from tasks.retrieval.encoders import EncoderSpec, encode_questions, resolve_encoder_spec
from tasks.retrieval.evaluate import evaluate_relations, passages_by_id
from tasks.retrieval.fusion import reciprocal_rank_fusion
from tasks.retrieval.stages import load_questions, split_queries


def resolve_dense_encoder(cfg: DenseConfig) -> EncoderSpec:
    """The configured encoder, resolved to local files with its content fingerprint.

    Not a cached task on purpose: the fingerprint (model files) is what later cache keys use.
    """
    return resolve_encoder_spec(cfg.model, cfg.ctx_model, pooling=cfg.pooling,
                                max_length=cfg.max_length, normalize=cfg.normalize,
                                name=cfg.model_name)


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
                         device: str = "auto", bf16: bool = False) -> dict:
    """Encode one shard of passages (``shard`` = its vectors and ids files, the outputs)."""
    return encode_shard(passages_tsv, start, end, shard[0], spec, batch_size=batch_size,
                        device=device, bf16=bf16)


def encode_all_shards(passages_tsv: Path, shards_dir: Path, spec: EncoderSpec,
                      cfg: DenseConfig, concurrency: int | None = None) -> list[dict]:
    """Submit one shard task per shard, ``concurrency`` (default ``cfg.concurrent_shards``) at
    a time; their records.

    Call inside a flow: the tasks run on the flow's task runner (threads by default; a
    ``DaskTaskRunner`` spreads them over processes or machines).
    """
    plan = plan_passage_shards_task(passages_tsv, cfg.shard_size)
    return submit_in_waves(
        lambda number, shard: encode_passage_shard_task.submit(
            passages_tsv, *shard, shard_files(shards_dir, number), spec,
            batch_size=cfg.batch_size, device=cfg.device, bf16=cfg.bf16),
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


def retrieve_dense(index_dir: Path, questions_dir: Path, run_path: Path, spec: EncoderSpec,
                   k: int = 100, batch_size: int = 64, device: str = "auto",
                   bf16: bool = False) -> Path:
    """Encode every test question and write its top-``k`` passages as one TREC run."""
    qids, texts = split_queries(questions_dir)
    embeddings = encode_questions(spec, texts, qids, batch_size=batch_size, device=device,
                                  bf16=bf16)
    run = dense_search(index_dir, embeddings, k)
    write_trec_run(run_path, run, tag=run_tag("dense", spec.name))
    return run_path


def fuse_runs(run_paths: list[Path], run_path: Path, k: int = 60,
              depth: int | None = None) -> Path:
    """Reciprocal rank fusion of TREC runs into one TREC run (the hybrid retriever)."""
    fused = reciprocal_rank_fusion([read_trec_run(p) for p in run_paths], k=k, depth=depth)
    write_trec_run(run_path, fused, tag=f"rrf_k={k}")
    return run_path


def question_hits(run: Mapping, questions: Mapping, passages: Mapping, k: int,
                  mode: HasAnswerMode = "string") -> list[int]:
    """0/1 per question (relation order, then file order): an answer in the top ``k``."""
    truncated = {qid: list(hits)[:k] for qid, hits in run.items()}
    evaluations = evaluate_relations(truncated, questions, passages, [k], mode)
    return [hit for e in evaluations.values() for hit in hits_at_k(e.first_hits, k)]


def compare_retrievers(run_paths: dict[str, Path], metrics_paths: dict[str, Path],
                       questions_dir: Path, passages_tsv: Path, comparison_path: Path,
                       report_path: Path, ks: Sequence[int], k: int = 20,
                       mode: HasAnswerMode = "string", n_bootstrap: int = 1000,
                       seed: int = 0, confidence: float = 0.95) -> dict:
    """Top-``k`` accuracy per retriever and, for each pair, the difference with a paired
    bootstrap CI over questions; JSON (``dvc metrics``) + Markdown table + Prefect artifact."""
    import json

    names = list(run_paths)
    runs = {name: read_trec_run(path) for name, path in run_paths.items()}
    questions = load_questions(questions_dir)
    wanted = {pid for run in runs.values() for hits in run.values() for pid, _ in hits[:k]}
    passages = passages_by_id(passages_tsv, wanted)
    hits = {name: question_hits(run, questions, passages, k, mode) for name, run in runs.items()}
    n_questions = len(next(iter(hits.values())))
    pairs = {}
    for a, b in itertools.combinations(names, 2):
        diff, low, high = bootstrap_difference(hits[a], hits[b], n=n_bootstrap, seed=seed,
                                               confidence=confidence)
        pairs[f"{a}_vs_{b}"] = {
            "a": a, "b": b, "difference": round(100 * diff, 2), "ci_low": round(100 * low, 2),
            "ci_high": round(100 * high, 2), "significant": bool(low > 0 or high < 0),
        }
    comparison = {
        "k": k,
        "statistic": f"top-{k} accuracy over all questions (percent); A - B in points",
        "questions": n_questions,
        "n_bootstrap": n_bootstrap,
        "seed": seed,
        "confidence": confidence,
        "accuracy": {name: round(100 * sum(h) / max(1, len(h)), 2) for name, h in hits.items()},
        "pairs": pairs,
    }
    write_json(comparison_path, comparison, indent=2)
    metrics = {name: json.loads(Path(metrics_paths[name]).read_text(encoding="utf-8"))
               for name in names}
    write_comparison_report(metrics, comparison, ks, report_path,
                            "EntityQuestions: BM25 vs dense vs hybrid retrieval")
    header, rows = difference_rows(comparison)
    publish_table_artifact("retrieval-comparison", header, rows,
                           f"Top-{k} accuracy differences with {round(100 * confidence)}% "
                           "bootstrap CIs")
    return comparison


def plot_accuracy(metrics_paths: dict[str, Path], ks: Sequence[int], png_path: Path,
                  csv_path: Path) -> list[Path]:
    """Accuracy vs k per retriever: PNG and CSV (``dvc plots``)."""
    import json

    metrics = {name: json.loads(Path(path).read_text(encoding="utf-8"))
               for name, path in metrics_paths.items()}
    return write_accuracy_vs_k(metrics, ks, png_path, csv_path)


plan_passage_shards_task = artifact_task(plan_passage_shards, name="plan passage shards")
encode_passage_shard_task = artifact_task(encode_passage_shard, outputs=("shard",),
                                          name="encode passage shard", retries=1)
build_dense_index_task = artifact_task(build_dense_index, outputs=("index_dir",),
                                       name="build dense index")
retrieve_dense_task = artifact_task(retrieve_dense, outputs=("run_path",), name="retrieve dense")
fuse_runs_task = artifact_task(fuse_runs, outputs=("run_path",), name="fuse runs")
compare_retrievers_task = artifact_task(compare_retrievers,
                                        outputs=("comparison_path", "report_path"),
                                        name="compare retrievers")
plot_accuracy_task = artifact_task(plot_accuracy, outputs=("png_path", "csv_path"),
                                   name="plot accuracy vs k")
