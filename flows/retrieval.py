"""Flow: retrieve passages for EntityQuestions and measure top-k accuracy (paper §3, Table 1).

Retrievers (``retrieval.retrievers``):

- **bm25**: Pyserini/Lucene over title + text, default parameters (the index of the
  ``bm25-index`` flow, or a Pyserini prebuilt index) -> batches of questions, one task each on
  the task runner -> TREC run.
- **dense**: passages encoded in shards (one task per shard) by a bi-encoder (DPR pair or one
  shared encoder; offline default all-MiniLM-L6-v2) -> FAISS index -> questions encoded and
  searched -> TREC run.
- **hybrid**: reciprocal rank fusion (k = 60) of the bm25 and dense runs.

Each run -> DPR-style result JSON per relation (``has_answer`` by the DPR simple tokenizer) ->
top-k accuracy per relation and macro average (``metrics/retrieval_<name>.json``) -> Markdown
table and Prefect table artifact. With more than one retriever: paired bootstrap 95% CIs of the
top-k difference of every pair (``metrics/retrieval_comparison.json`` + Markdown), and the
accuracy-vs-k figure (PNG + CSV for ``dvc plots``). Then Figure 1: the rand-ent / train-ent
bucket files of ``retrieval.bucket_relations`` with the same indexes and encoder -> top-k
accuracy per bucket (``metrics/retrieval_buckets.json``) -> one panel per relation (PNG + CSV).

The paraphrased SQuAD sets are evaluated by ``flows/paraphrased_retrieval.py``, after the
paraphrase flow has written them.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import resolve
from flows.bm25_index import bm25_index
from flows.bm25_search import search_bm25_on
from flows.encode_passages import encode_passages_on
from tasks.config import Params
from tasks.layout import Layout
from tasks.reporting.tables import publish_link_artifact
from tasks.retrieval.buckets import (
    evaluate_buckets_task,
    plot_buckets_task,
    retrieve_bm25_buckets_task,
    retrieve_dense_buckets_task,
)
from tasks.retrieval.dense_stages import (
    build_dense_index_task,
    compare_retrievers_task,
    fuse_runs_task,
    index_options,
    plot_accuracy_task,
    resolve_dense_encoder,
    retrieve_dense_task,
)
from tasks.retrieval.encoders import EncoderSpec
from tasks.retrieval.stages import (
    evaluate_run_task,
    report_topk_task,
)

TITLES = {"bm25": "BM25", "dense": "dense", "hybrid": "hybrid: BM25 + dense, RRF"}
RRF_K = 60


def bm25_run(params: Params, layout: Layout) -> tuple[Path, str | Path]:
    """BM25: the index of the ``bm25-index`` flow (built here only when missing) -> batches of
    questions searched on the task runner -> TREC run.

    Returns the run and the index (a directory or a prebuilt index name).
    """
    bm25 = params.retrieval.bm25
    index: str | Path = bm25.prebuilt_index or layout.bm25_index
    if not bm25.prebuilt_index and not (layout.bm25_index / "manifest.json").is_file():
        index = Path(bm25_index(params=params))
    run = search_bm25_on(params.orchestration, index, layout.eq_dataset,
                         layout.retrieval_results("bm25") / "test.trec", bm25)
    return run, index


def dense_run(params: Params, layout: Layout) -> tuple[Path, Path, EncoderSpec]:
    """Dense: shard tasks -> FAISS index -> question encoding + search -> TREC run.

    Returns the run, the FAISS index and the encoder.
    """
    dense = params.retrieval.dense
    spec = resolve_dense_encoder(dense)
    passages = params.raw_path("passages")
    shards = encode_passages_on(params.orchestration, passages, layout.dense_shards(),
                                spec, dense)
    index = build_dense_index_task(shards, layout.dense_index(), spec, **index_options(dense))
    print(f"dense index ({dense.index}, {spec.describe()}): {index}")
    run = retrieve_dense_task(index, layout.eq_dataset,
                              layout.retrieval_results("dense") / "test.trec", spec,
                              k=dense.top_k, batch_size=dense.batch_size, device=dense.device,
                              bf16=dense.bf16)
    return run, index, spec


def bucket_evaluation(params: Params, layout: Layout, retrievers: list[str],
                      bm25_index_ref: str | Path | None,
                      dense: tuple[Path, EncoderSpec] | None) -> dict:
    """Figure 1: the rand-ent / train-ent bucket questions of ``retrieval.bucket_relations``
    retrieved with the same indexes and encoder as the test split -> accuracy per bucket
    (``metrics/retrieval_buckets.json``) -> PNG + CSV."""
    cfg, eq = params.retrieval, params.entity_questions
    where = layout.retrieval_buckets_results
    scope = {"sets": list(cfg.bucket_sets), "relations": list(cfg.bucket_relations),
             "n_buckets": eq.n_buckets}
    runs: dict[str, Path] = {}
    if bm25_index_ref is not None:
        bm25 = cfg.bm25
        runs["bm25"] = retrieve_bm25_buckets_task(
            bm25_index_ref, layout.eq_dataset, where / "bm25.trec", **scope, k=bm25.top_k,
            k1=bm25.k1, b=bm25.b, threads=bm25.threads, heap=bm25.java_heap)
    if dense is not None:
        index, spec = dense
        runs["dense"] = retrieve_dense_buckets_task(
            index, layout.eq_dataset, where / "dense.trec", spec, **scope, k=cfg.dense.top_k,
            batch_size=cfg.dense.batch_size, device=cfg.dense.device, bf16=cfg.dense.bf16)
    if "hybrid" in retrievers:
        runs["hybrid"] = fuse_runs_task([runs["bm25"], runs["dense"]], where / "hybrid.trec",
                                        k=RRF_K, depth=max(cfg.bm25.top_k, cfg.dense.top_k))
    metrics = evaluate_buckets_task(
        {name: runs[name] for name in retrievers}, layout.eq_dataset, params.raw_path("passages"),
        layout.retrieval_buckets_metrics, **scope, ks=list(cfg.ks), mode=cfg.has_answer_mode,
        bucket_order=eq.bucket_order, questions_table=layout.questions_table)
    png = layout.retrieval_buckets_plot
    plot_buckets_task(layout.retrieval_buckets_metrics, cfg.headline_k, png,
                      png.with_suffix(".csv"))
    publish_link_artifact("figure-retrieval-buckets", png,
                          f"Figure 1: top-{cfg.headline_k} accuracy per subject-frequency bucket")
    print(f"accuracy per bucket ({', '.join(cfg.bucket_sets)}; "
          f"{', '.join(cfg.bucket_relations)}) -> {layout.retrieval_buckets_metrics}, {png}")
    return metrics


@flow(name="retrieval", log_prints=True)
def retrieval(params: Params | None = None, profile: str | None = None,
              params_file: str | None = None) -> dict:
    """Run the configured retrievers on the EntityQuestions test split and compare them.

    Returns ``{retriever: metrics}`` (the JSON written to ``metrics/retrieval_<name>.json``).
    """
    params = resolve(params, profile, params_file)
    layout, cfg = Layout(params), params.retrieval
    passages = params.raw_path("passages")
    retrievers = list(dict.fromkeys(cfg.retrievers))
    runs: dict[str, Path] = {}
    bm25_index_ref: str | Path | None = None
    dense: tuple[Path, EncoderSpec] | None = None
    if {"bm25", "hybrid"} & set(retrievers):
        runs["bm25"], bm25_index_ref = bm25_run(params, layout)
    if {"dense", "hybrid"} & set(retrievers):
        runs["dense"], dense_index, spec = dense_run(params, layout)
        dense = (dense_index, spec)
    if "hybrid" in retrievers:
        runs["hybrid"] = fuse_runs_task([runs["bm25"], runs["dense"]],
                                        layout.retrieval_results("hybrid") / "test.trec",
                                        k=RRF_K, depth=max(cfg.bm25.top_k, cfg.dense.top_k))
    metrics: dict[str, dict] = {}
    for name in retrievers:
        metrics[name] = evaluate_run_task(runs[name], layout.eq_dataset, passages,
                                          layout.retrieval_results(name),
                                          layout.retrieval_metrics(name), name, list(cfg.ks),
                                          cfg.has_answer_mode, cfg.result_ctxs)
        report_topk_task(metrics[name], list(cfg.ks), layout.retrieval_report(name),
                         f"EntityQuestions top-k retrieval accuracy ({TITLES[name]})")
        macro = metrics[name]["macro"].get(f"top{cfg.headline_k}")
        print(f"{name} macro top-{cfg.headline_k}: {macro}% -> {layout.retrieval_report(name)}")
    metrics_paths = {name: layout.retrieval_metrics(name) for name in retrievers}
    png = layout.retrieval_accuracy_plot
    plot_accuracy_task(metrics_paths, list(cfg.ks), png, png.with_suffix(".csv"))
    publish_link_artifact("figure-retrieval-accuracy-vs-k", png,
                          "Top-k retrieval accuracy vs k (macro average over relations)")
    if len(retrievers) > 1:
        comparison = compare_retrievers_task(
            {name: runs[name] for name in retrievers}, metrics_paths, layout.eq_dataset,
            passages, layout.retrieval_comparison, layout.retrieval_comparison_report,
            list(cfg.ks), k=cfg.headline_k, mode=cfg.has_answer_mode)
        for pair in comparison["pairs"].values():
            print(f"top-{cfg.headline_k} {pair['a']} - {pair['b']}: {pair['difference']:+.2f} "
                  f"points, 95% CI [{pair['ci_low']:+.2f}, {pair['ci_high']:+.2f}]")
    if cfg.bucket_relations and cfg.bucket_sets:
        bucket_evaluation(params, layout, retrievers, bm25_index_ref, dense)
    return metrics


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("retrieval")
