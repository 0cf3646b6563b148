"""Flow: does paraphrasing questions hurt retrievers, and which more? (after Gan & Ng, 2019)

The original and paraphrased SQuAD questions of the paraphrase flow's test sets
(``data/paraphrasing-squad/<set>_{orig,para}.json``, paired by position) are one query set,
retrieved by the configured retrievers over the collection of their contexts (a small BM25
index and a flat dense index per encoder under ``data/indexes/paraphrased/``) with the same
core as the test split (``flows/_retrieve.py``) -> top-k accuracy of orig and para and their
difference with a paired bootstrap CI (``metrics/retrieval_paraphrased.json`` + Markdown +
Prefect table artifact). Skipped, with a note, while no set holds a question.
"""

from __future__ import annotations

from prefect import flow

from flows._params import resolve, stage_output
from flows._retrieve import Collection, prepare_indexes, run_all, save_query_set
from tasks.config import Params
from tasks.io.atomic import write_json, write_text
from tasks.layout import Layout
from tasks.retrieval.bm25 import build_bm25_index_task, export_collection_task
from tasks.retrieval.paraphrased import (
    discover_paraphrase_sets,
    evaluate_paraphrased_runs_task,
    paraphrase_collection_task,
    paraphrased_questions,
)
from tasks.retrieval.retrievers import BM25Retriever, Retriever, registry_from_config


def skip_note(layout: Layout) -> None:
    """The paraphrase flow accepted no paraphrased set: say so in the metrics JSON and the
    report."""
    print(f"paraphrased sets: no <set>_orig.json + <set>_para.json pair with questions in "
          f"{layout.paraphrase_test_sets} (the paraphrase flow accepted none); skipped.")
    note = f"no paraphrased set with questions in {layout.paraphrase_test_sets}"
    write_json(layout.retrieval_paraphrased_metrics, {"sets": {}, "note": note}, indent=2)
    write_text(layout.retrieval_paraphrased_report,
               f"# Original vs paraphrased questions\n\nNot evaluated: {note}.\n")


def context_collection(params: Params, layout: Layout, set_files: dict,
                       retrievers: list[Retriever]) -> Collection:
    """The distinct contexts of the orig files as a passage TSV, with a small BM25 index
    (when a retriever needs it) and flat dense indexes under ``data/indexes/paraphrased/``."""
    root, bm25 = layout.paraphrased_index_root, params.retrieval.bm25
    tsv = paraphrase_collection_task(set_files, layout.paraphrased_collection)
    index = None
    if any(isinstance(r, BM25Retriever) for r in retrievers):
        json_dir = export_collection_task.with_options(name="paraphrased: export collection")(
            tsv, root / "collection")
        index = build_bm25_index_task.with_options(name="paraphrased: build BM25 index")(
            json_dir, root / "bm25", threads=bm25.threads, heap=bm25.java_heap)
    return Collection("paraphrased contexts", tsv, index,
                      lambda model: (root / "dense" / model / "shards",
                                     root / "dense" / model / "index"), index_kind="flat")


def paraphrased_evaluation(params: Params, layout: Layout, names: list[str]) -> dict | None:
    """Original vs paraphrased SQuAD questions over their contexts, with every retriever;
    ``None`` (and a note) when the paraphrase flow accepted no set; a
    :class:`MissingInputError` when it has not run."""
    cfg = params.retrieval
    set_files = discover_paraphrase_sets(stage_output(
        layout.paraphrase_test_sets, "paraphrased sets", "paraphrase"))
    if not set_files:
        skip_note(layout)
        return None
    retrievers = registry_from_config(cfg, layout.trained_retriever).needed(names)
    collection = context_collection(params, layout, set_files, retrievers)
    indexes = prepare_indexes(retrievers, collection, params.orchestration)
    where = layout.retrieval_paraphrased_results
    queries = save_query_set(paraphrased_questions(set_files), where / "queries.json")
    runs = run_all(retrievers, queries, lambda name: where / f"{name}.trec", indexes=indexes,
                   orchestration=params.orchestration)
    metrics = evaluate_paraphrased_runs_task(
        {name: runs[name] for name in names}, queries, collection.passages,
        metrics_path=layout.retrieval_paraphrased_metrics,
        report_path=layout.retrieval_paraphrased_report, ks=list(cfg.ks), k=cfg.headline_k,
        mode=cfg.has_answer_mode)
    for set_name, block in metrics["sets"].items():
        for name, r in block["retrievers"].items():
            print(f"{set_name} {name} top-{cfg.headline_k} orig - para: {r['difference']:+.2f} "
                  f"points, 95% CI [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]")
    print(f"orig vs paraphrased -> {layout.retrieval_paraphrased_report}")
    return metrics


@flow(name="paraphrased-retrieval", log_prints=True)
def paraphrased_retrieval(params: Params | None = None, profile: str | None = None,
                          params_file: str | None = None) -> dict | None:
    """Retrieval accuracy on original vs paraphrased questions (``None`` when the paraphrase flow
    accepted no set)."""
    params = resolve(params, profile, params_file)
    if not params.retrieval.paraphrased_sets:
        print("retrieval.paraphrased_sets is off: skipped")
        return None
    return paraphrased_evaluation(params, Layout(params),
                                  list(dict.fromkeys(params.retrieval.retrievers)))


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("paraphrased-retrieval")
