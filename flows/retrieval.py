"""Flow: retrieve passages for EntityQuestions and measure top-k accuracy (paper §3, Table 1).

BM25 (Pyserini/Lucene over title + text, default parameters) -> TREC run -> DPR-style result
JSON per relation (``has_answer`` by the DPR simple tokenizer) -> top-k accuracy per relation
and macro average -> Markdown table and Prefect table artifact.
"""

from __future__ import annotations

from prefect import flow

from flows._params import resolve
from tasks.config import Params
from tasks.layout import Layout
from tasks.retrieval.stages import (
    build_bm25_index_task,
    evaluate_run_task,
    export_collection_task,
    report_topk_task,
    retrieve_bm25_task,
)


@flow(name="retrieval", log_prints=True)
def retrieval(params: Params | None = None, profile: str | None = None,
              params_file: str | None = None) -> dict:
    """BM25 retrieval and top-k evaluation of the EntityQuestions test split."""
    params = resolve(params, profile, params_file)
    layout, bm25, cfg = Layout(params), params.retrieval.bm25, params.retrieval
    passages = params.raw_path("passages")
    index = bm25.prebuilt_index or build_bm25_index_task(
        export_collection_task(passages, layout.collection_dir), layout.bm25_index,
        threads=bm25.threads, heap=bm25.java_heap)
    results = layout.retrieval_results("bm25")
    run = retrieve_bm25_task(index, layout.eq_dataset, results / "test.trec", k=bm25.top_k,
                             k1=bm25.k1, b=bm25.b, threads=bm25.threads, heap=bm25.java_heap)
    metrics = evaluate_run_task(run, layout.eq_dataset, passages, results,
                                layout.retrieval_metrics("bm25"), "bm25", list(cfg.ks),
                                cfg.has_answer_mode)
    report_topk_task(metrics, list(cfg.ks), layout.retrieval_report("bm25"),
                     "EntityQuestions top-k retrieval accuracy (BM25)")
    macro = metrics["macro"].get(f"top{cfg.headline_k}")
    print(f"BM25 macro top-{cfg.headline_k}: {macro}% -> {layout.retrieval_report('bm25')}")
    return metrics


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("retrieval")
