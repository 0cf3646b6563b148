"""Flow: build EntityQuestions from knowledge-base triples (Sciavolino et al., 2021, §2-§4).

1. Stream T-REx: one fact per (relation, subject), answers = the objects' labels (+ aliases).
2. Keep the relations with enough facts and distinct answers (the 24 of the paper by default).
3. Sample train/dev/test per relation (up to 8,000 / 1,000 / 1,000), no subject in two splits.
4. Cut each relation's facts into 8 buckets of equal cumulative subject frequency (hyperlink
   counts); rand-ent samples up to 1,000 facts per bucket.
5. Link entities in the NQ training questions; train-ent keeps, per bucket, the facts whose
   subject was linked.
6. No-overlap train/dev sets: subjects sharing no token with any test subject (§4.1); the same
   sets rendered with the "similar" templates (P19, P159, P170).
7. Write the official layout and a Parquet table of every question; DPR retriever-training JSON
   for the train/dev files; a summary (Markdown + Prefect table artifact) and its numbers
   (``metrics/entity_questions.json``: counts, the linker's precision/recall).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import raw_files, raw_input, resolve
from tasks.config import Params
from tasks.layout import Layout
from tasks.questions.buckets import bucket_facts_task
from tasks.questions.dpr_training import dpr_training_task
from tasks.questions.facts import collect_facts_task, remembered_facts_tables
from tasks.questions.linking import link_nq_task
from tasks.questions.metrics import dpr_training_totals, write_eq_metrics_task
from tasks.questions.overlap import no_overlap_task
from tasks.questions.relations import select_relations_task
from tasks.questions.splits import split_facts_task
from tasks.questions.summary import summary_task
from tasks.questions.writers import write_dataset_task
from tasks.reporting.tables import publish_table_artifact


def _raw(params: Params, value: str | None) -> Path | None:
    if value is None:
        return None
    path = Path(value)
    return path if path.is_absolute() else params.paths.raw / path


def _bm25_index(params: Params, step=lambda task: task) -> str | Path | None:
    """The index for DPR hard negatives: configured, the study's BM25 index, or none.

    The study's index is requested with exactly the arguments of the ``bm25-index`` flow, so
    it is built once and served from the task cache everywhere else.
    """
    cfg = params.entity_questions
    if cfg.dpr_hard_negatives == 0:
        return None
    if cfg.dpr_bm25_index:  # an index directory (relative to paths.raw) or a prebuilt name
        local = _raw(params, cfg.dpr_bm25_index)
        return local if local is not None and local.exists() else cfg.dpr_bm25_index
    if params.retrieval.bm25.prebuilt_index:
        return params.retrieval.bm25.prebuilt_index
    from tasks.retrieval.bm25 import build_bm25_index_task, export_collection_task

    bm25, layout = params.retrieval.bm25, Layout(params)
    collection = step(export_collection_task)(params.raw_path("passages"), layout.collection_dir)
    return step(build_bm25_index_task)(collection, layout.bm25_index, threads=bm25.threads,
                                       heap=bm25.java_heap)


def construct(params: Params, plain: bool = False) -> dict[str, int]:
    """The construction as a sequence of named steps; ``plain`` runs them without Prefect."""
    def step(task):  # the cached Prefect task, or the plain function under it
        return task.fn if plain else task

    layout, cfg = Layout(params), params.entity_questions
    work = layout.eq_work
    facts, splits, buckets = (work / "facts.parquet", work / "splits.parquet",
                              work / "buckets.parquet")
    links, no_overlap = work / "nq-train.links.jsonl", work / "no-overlap.parquet"
    for source in ("entity_labels", "hyperlink_counts", "nq_train",
                   *(("passages",) if cfg.dpr_training else ())):
        raw_input(params, source)  # every input there before the first step's work
    trex = raw_files(params, "trex", layout.trex_files())

    with remembered_facts_tables():  # facts.parquet read once by the steps after it
        fact_stats = step(collect_facts_task)(
            trex, params.raw_path("entity_labels"), facts, list(cfg.relations), cfg.on_bad_record,
            cfg.answer_aliases)
        relations = step(select_relations_task)(
            facts, work / "relations.json", list(cfg.relations), cfg.min_triples,
            cfg.min_distinct_answers)
        step(split_facts_task)(
            facts, relations, splits,
            {"test": cfg.facts_per_relation, "dev": cfg.dev_per_relation,
             "train": cfg.train_per_relation}, cfg.seed, cfg.disjoint_scope)
        bucket_info = step(bucket_facts_task)(
            facts, params.raw_path("hyperlink_counts"), relations, buckets, cfg.n_buckets,
            cfg.bucket_order, cfg.hyperlink_key, cfg.on_bad_record)
        linking = step(link_nq_task)(
            params.raw_path("nq_train"), params.raw_path("entity_labels"),
            params.raw_path("hyperlink_counts"), links, work / "linking-eval.json", cfg.linker,
            _raw(params, cfg.linker_output), _raw(params, cfg.linker_truth), cfg.hyperlink_key,
            cfg.linker_min_chars, cfg.linker_max_ngram, cfg.on_bad_record)
        step(no_overlap_task)(
            facts, splits, relations, no_overlap,
            {"train": cfg.no_overlap_train, "dev": cfg.no_overlap_dev,
             "test": cfg.no_overlap_test}, cfg.seed)
        counts = step(write_dataset_task)(
            facts, relations, splits, buckets, links, no_overlap, layout.eq_dataset,
            layout.questions_table, cfg.per_bucket, cfg.seed, cfg.n_buckets)
    dpr = None
    if cfg.dpr_training:
        dpr = step(dpr_training_task)(
            layout.eq_dataset, params.raw_path("passages"), layout.eq_dpr,
            cfg.dpr_max_positives, cfg.dpr_hard_negatives, cfg.dpr_bm25_depth,
            _bm25_index(params, step), params.retrieval.bm25.threads, cfg.on_bad_record)
        totals = dpr_training_totals(dpr)
        print(f"DPR training JSON: {totals['examples']} examples of {totals['questions']} "
              f"train/dev questions; {totals['without_positive']} without a passage that "
              f"mentions the subject and holds an answer (no example); "
              f"{totals['passages_skipped']} passage records skipped")
    table = step(summary_task)(
        work / "relations.json", fact_stats, bucket_info, linking, counts, layout.eq_summary,
        cfg.bucket_order)
    step(write_eq_metrics_task)(work / "relations.json", fact_stats, linking, counts,
                                layout.eq_metrics, dpr)
    publish_table_artifact("entityquestions-summary", table["header"], table["rows"],
                           "EntityQuestions construction: questions per relation and set")
    tests = {relation: entry["test"] for relation, entry in counts.items()}
    print(f"{sum(tests.values())} test questions over {len(tests)} relations -> "
          f"{layout.eq_dataset}; summary: {layout.eq_summary}")
    return tests


@flow(name="entity-questions", log_prints=True)
def entity_questions(params: Params | None = None, profile: str | None = None,
                     params_file: str | None = None) -> dict[str, int]:
    """Build every EntityQuestions file; return the number of test questions per relation."""
    return construct(resolve(params, profile, params_file))


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("entity-questions")
