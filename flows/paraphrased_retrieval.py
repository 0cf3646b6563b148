"""Flow: does paraphrasing questions hurt retrievers, and which more? (after Gan & Ng, 2019)

The original and paraphrased SQuAD questions of the paraphrase flow's test sets
(``data/paraphrasing-squad/<set>_{orig,para}.json``, paired by position) are retrieved by the
configured retrievers over the collection of their contexts (a small BM25 index and a dense
index under ``data/indexes/paraphrased/``) -> top-k accuracy of orig and para and their
difference with a paired bootstrap CI (``metrics/retrieval_paraphrased.json`` + Markdown +
Prefect table artifact). Skipped, with a note, while no set holds a question.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import resolve
from flows.retrieval import RRF_K
from tasks.config import Params
from tasks.io.atomic import write_json, write_text
from tasks.layout import Layout
from tasks.retrieval.dense_stages import fuse_runs_task, resolve_dense_encoder
from tasks.retrieval.encoders import EncoderSpec
from tasks.retrieval.paraphrased import (
    build_paraphrase_dense_index_task,
    discover_paraphrase_sets,
    evaluate_paraphrased_runs_task,
    paraphrase_collection_task,
    retrieve_bm25_paraphrased_task,
    retrieve_dense_paraphrased_task,
)
from tasks.retrieval.stages import build_bm25_index_task, export_collection_task


def paraphrased_evaluation(params: Params, layout: Layout, retrievers: list[str],
                           spec: EncoderSpec | None) -> dict | None:
    """Original vs paraphrased SQuAD questions over their contexts, with every retriever;
    ``None`` (and a note) when the paraphrase flow has not written the sets yet."""
    cfg = params.retrieval
    set_files = discover_paraphrase_sets(layout.paraphrase_test_sets)
    if not set_files:
        print(f"paraphrased sets: no <set>_orig.json + <set>_para.json pair with questions in "
              f"{layout.paraphrase_test_sets} yet (the paraphrase flow writes them); skipped. "
              "Run `qastress stage paraphrased-retrieval` after the paraphrase flow.")
        note = f"no paraphrased set with questions in {layout.paraphrase_test_sets}"
        write_json(layout.retrieval_paraphrased_metrics, {"sets": {}, "note": note}, indent=2)
        write_text(layout.retrieval_paraphrased_report,
                   f"# Original vs paraphrased questions\n\nNot evaluated: {note}.\n")
        return None
    root, where = layout.paraphrased_index_root, layout.retrieval_paraphrased_results
    collection = paraphrase_collection_task(set_files, layout.paraphrased_collection)
    runs: dict[str, Path] = {}
    if {"bm25", "hybrid"} & set(retrievers):
        bm25 = cfg.bm25
        json_dir = export_collection_task.with_options(name="paraphrased: export collection")(
            collection, root / "collection")
        index = build_bm25_index_task.with_options(name="paraphrased: build BM25 index")(
            json_dir, root / "bm25", threads=bm25.threads, heap=bm25.java_heap)
        runs["bm25"] = retrieve_bm25_paraphrased_task(
            index, set_files, where / "bm25.trec", k=bm25.top_k, k1=bm25.k1, b=bm25.b,
            threads=bm25.threads, heap=bm25.java_heap)
    if {"dense", "hybrid"} & set(retrievers):
        dense = cfg.dense
        spec = spec or resolve_dense_encoder(dense)
        options = {"batch_size": dense.batch_size, "device": dense.device, "bf16": dense.bf16}
        index = build_paraphrase_dense_index_task(
            collection, root / "dense" / dense.model_name / "shards",
            root / "dense" / dense.model_name / "index", spec, **options)
        runs["dense"] = retrieve_dense_paraphrased_task(index, set_files, where / "dense.trec",
                                                        spec, k=dense.top_k, **options)
    if "hybrid" in retrievers:
        runs["hybrid"] = fuse_runs_task.with_options(name="paraphrased: fuse runs")(
            [runs["bm25"], runs["dense"]], where / "hybrid.trec", k=RRF_K,
            depth=max(cfg.bm25.top_k, cfg.dense.top_k))
    metrics = evaluate_paraphrased_runs_task(
        {name: runs[name] for name in retrievers}, set_files, collection,
        layout.retrieval_paraphrased_metrics, layout.retrieval_paraphrased_report,
        list(cfg.ks), k=cfg.headline_k, mode=cfg.has_answer_mode)
    for set_name, block in metrics["sets"].items():
        for name, r in block["retrievers"].items():
            print(f"{set_name} {name} top-{cfg.headline_k} orig - para: {r['difference']:+.2f} "
                  f"points, 95% CI [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]")
    print(f"orig vs paraphrased -> {layout.retrieval_paraphrased_report}")
    return metrics


@flow(name="paraphrased-retrieval", log_prints=True)
def paraphrased_retrieval(params: Params | None = None, profile: str | None = None,
                          params_file: str | None = None) -> dict | None:
    """Retrieval accuracy on original vs paraphrased questions (``None`` when no sets yet)."""
    params = resolve(params, profile, params_file)
    if not params.retrieval.paraphrased_sets:
        print("retrieval.paraphrased_sets is off: skipped")
        return None
    return paraphrased_evaluation(params, Layout(params),
                                  list(dict.fromkeys(params.retrieval.retrievers)), None)


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("paraphrased-retrieval")
