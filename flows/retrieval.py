"""Flow: retrieve passages for EntityQuestions and measure top-k accuracy (paper §3, Table 1).

Retrievers (``retrieval.retrievers``, from the registry of :mod:`tasks.retrieval.retrievers`):

- **bm25**: Pyserini/Lucene over title + text, default parameters (the index of the
  ``bm25-index`` flow, or a Pyserini prebuilt index) -> batches of questions, one task each on
  the task runner -> TREC run.
- **dense** (and every ``retrieval.dense_retrievers`` entry, e.g. a fine-tuned DPR pair):
  passages encoded in shards (one task per shard) by the retriever's bi-encoder (offline
  default all-MiniLM-L6-v2) -> its own FAISS index -> questions encoded and searched -> TREC
  run.
- **hybrid** (every ``retrieval.hybrids`` entry): reciprocal rank fusion (k =
  ``retrieval.rrf_k``) of the runs of two registered retrievers.

Two query sets go through the same core (``flows/_retrieve.py``): the test split and, for
Figure 1, the rand-ent / train-ent bucket files of ``retrieval.bucket_relations``. The passages
every run retrieved are read from ``psgs_w100.tsv`` once (``results/retrieval/passages.parquet``).
Then: each test run -> DPR-style result JSON per relation (``has_answer`` by the DPR simple
tokenizer) -> top-k accuracy per relation and macro average (``metrics/retrieval_<name>.json``)
and the first-hit rank of every question (``test.hits.parquet``) -> Markdown table and Prefect
table artifact. With more than one retriever: paired bootstrap 95% CIs of the top-k difference
of every pair, from those first hits (``metrics/retrieval_comparison.json`` + Markdown), and
the accuracy-vs-k figure (PNG + CSV for ``dvc plots``). Bucket runs -> top-k
accuracy per bucket (``metrics/retrieval_buckets.json``) -> one panel per relation (PNG + CSV).

The paraphrased SQuAD sets are evaluated by ``flows/paraphrased_retrieval.py``, after the
paraphrase flow has written them.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import raw_input, resolve
from flows._retrieve import (
    Collection,
    collect_passages,
    prepare_indexes,
    run_all,
    save_query_set,
)
from flows.bm25_index import bm25_index
from tasks.config import Params
from tasks.layout import Layout
from tasks.reporting.tables import publish_link_artifact
from tasks.retrieval.buckets import evaluate_buckets_task, plot_buckets_task
from tasks.retrieval.comparison import compare_retrievers_task, plot_accuracy_task
from tasks.retrieval.query_sets import bucket_query_set, eq_split
from tasks.retrieval.relation_results import evaluate_run_task, report_topk_task
from tasks.retrieval.retrievers import (
    BM25Retriever,
    Retriever,
    describe_retrievers,
    registry_from_config,
    short_title,
)


def passage_collection(params: Params, layout: Layout, retrievers: list[Retriever]) -> Collection:
    """``psgs_w100``: the BM25 index of the ``bm25-index`` flow (built here only when missing
    and needed) or a Pyserini prebuilt index; dense indexes under ``data/indexes/dense/``
    (encoded here, or a retriever's ``prebuilt_index``)."""
    bm25 = params.retrieval.bm25
    index: str | Path | None = None
    if any(isinstance(r, BM25Retriever) for r in retrievers):
        index = bm25.prebuilt_index or layout.bm25_index
        if not bm25.prebuilt_index and not (layout.bm25_index / "manifest.json").is_file():
            index = Path(bm25_index(params=params))
    return Collection("psgs_w100", raw_input(params, "passages"), index,
                      lambda model: (layout.dense_shards(model), layout.dense_index(model)),
                      takes_prebuilt=True, token_cache=layout.token_cache)


def report_test_split(params: Params, layout: Layout, retrievers: list[Retriever],
                      names: list[str], runs: dict[str, Path], queries: Path,
                      passages: Path, notes: str = "") -> dict[str, dict]:
    """Each test run -> DPR result JSON + top-k metrics + table; the comparison of the
    retrievers (paired bootstrap CIs, with ``notes`` on what they are) and the accuracy-vs-k
    figure."""
    cfg = params.retrieval
    titles = {r.name: r.title for r in retrievers}
    metrics: dict[str, dict] = {}
    for name in names:
        metrics[name] = evaluate_run_task(
            runs[name], queries, passages, results_dir=layout.retrieval_results(name),
            metrics_path=layout.retrieval_metrics(name), retriever=name, ks=list(cfg.ks),
            mode=cfg.has_answer_mode, result_ctxs=cfg.result_ctxs,
            hits_path=layout.retrieval_hits(name))
        report_topk_task(metrics[name], list(cfg.ks), layout.retrieval_report(name),
                         f"EntityQuestions top-k retrieval accuracy ({titles[name]})")
        macro = metrics[name]["macro"].get(f"top{cfg.headline_k}")
        print(f"{name} macro top-{cfg.headline_k}: {macro}% -> {layout.retrieval_report(name)}")
    metrics_paths = {name: layout.retrieval_metrics(name) for name in names}
    png = layout.retrieval_accuracy_plot
    plot_accuracy_task(metrics_paths, list(cfg.ks), png, png.with_suffix(".csv"))
    publish_link_artifact("figure-retrieval-accuracy-vs-k", png,
                          "Top-k retrieval accuracy vs k (macro average over relations)")
    if len(names) > 1:
        shorts = {r.name: short_title(r) for r in retrievers}
        comparison = compare_retrievers_task(
            {name: layout.retrieval_hits(name) for name in names}, metrics_paths,
            comparison_path=layout.retrieval_comparison,
            report_path=layout.retrieval_comparison_report, ks=list(cfg.ks),
            k=cfg.headline_k, notes=notes,
            title="EntityQuestions: " + " vs ".join(shorts[n] for n in names) + " retrieval")
        for pair in comparison["pairs"].values():
            print(f"top-{cfg.headline_k} {pair['a']} - {pair['b']}: {pair['difference']:+.2f} "
                  f"points, 95% CI [{pair['ci_low']:+.2f}, {pair['ci_high']:+.2f}]")
    return metrics


def report_buckets(params: Params, layout: Layout, names: list[str], runs: dict[str, Path],
                   queries: Path, passages: Path) -> dict:
    """Figure 1: bucket runs -> accuracy per bucket (``metrics/retrieval_buckets.json``) ->
    PNG + CSV."""
    cfg = params.retrieval
    metrics = evaluate_buckets_task(
        {name: runs[name] for name in names}, queries, passages,
        metrics_path=layout.retrieval_buckets_metrics, ks=list(cfg.ks),
        mode=cfg.has_answer_mode, bucket_order=params.entity_questions.bucket_order,
        questions_table=layout.questions_table, k=cfg.headline_k)
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
    """Run the configured retrievers on the EntityQuestions test split (and the frequency
    buckets) and compare them.

    Returns ``{retriever: metrics}`` (the JSON written to ``metrics/retrieval_<name>.json``).
    """
    params = resolve(params, profile, params_file)
    layout, cfg = Layout(params), params.retrieval
    names = list(dict.fromkeys(cfg.retrievers))
    registry = registry_from_config(cfg, layout.trained_retriever)
    retrievers = registry.needed(names)
    # the questions first: without the entity-questions stage's dataset, fail before indexing
    test = save_query_set(eq_split(layout.eq_dataset), layout.retrieval_queries("test"))
    collection = passage_collection(params, layout, retrievers)
    indexes = prepare_indexes(retrievers, collection, params.orchestration)

    runs = run_all(retrievers, test, lambda name: layout.retrieval_results(name) / "test.trec",
                   indexes=indexes, orchestration=params.orchestration)
    bucket_runs: dict[str, Path] = {}
    if cfg.bucket_relations and cfg.bucket_sets:
        buckets = save_query_set(bucket_query_set(
            layout.eq_dataset, cfg.bucket_sets, cfg.bucket_relations,
            params.entity_questions.n_buckets), layout.retrieval_queries("buckets"))
        bucket_runs = run_all(retrievers, buckets,
                              lambda name: layout.retrieval_buckets_results / f"{name}.trec",
                              indexes=indexes, orchestration=params.orchestration)
    passages = collect_passages([*runs.values(), *bucket_runs.values()], collection,
                                layout.retrieval_passages)

    metrics = report_test_split(params, layout, retrievers, names, runs, test, passages,
                                notes=describe_retrievers(registry, names))
    if bucket_runs:
        report_buckets(params, layout, names, bucket_runs, buckets, passages)
    return metrics


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("retrieval")
