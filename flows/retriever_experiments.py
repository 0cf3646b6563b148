"""Flow: the retriever training experiments of Sciavolino et al. (2021), Tables 2-3, Figure 2.

Every fine-tune starts from the baseline DPR pair (``retriever_experiments.baseline``, DPR-NQ of
the train-retriever flow) and is evaluated through the retrieval core:

- **Table 2, pattern vs entity**: per relation (P19, P159, P170), fine-tune on its no-overlap
  train set rendered with the test template and with the ``_similar`` template, in the modes
  full / onlyQ (passage encoder frozen: the baseline's index is reused) / onlyP; top-k on the
  relation's no-overlap test set beside BM25 and the baseline.
- **Table 3, single vs multi-task**: fine-tune on one relation's train split alone and mixed
  with the NQ-style training data; top-k on every EntityQuestions test relation (macro) and on
  the NQ-style dev set.
- **Figure 2**: t-SNE of positive passages of NQ-style vs the relation's questions, by the
  baseline's passage encoder and by the single-relation fine-tuned one.

With ``retriever_experiments.extra_seeds`` (not in the paper) every fine-tune that ran is
trained again per seed (``<job>-seed<S>``) and the rows and key differences are summarised
over the seeds (:mod:`tasks.training.experiment_seeds`): one draw's bootstrap CIs cover the
questions, not the training.

A training set without examples (today: the demo world's no-overlap sets of P19/P159/P170)
leaves its row in the table as "0 training questions: not run". Numbers come with question
counts and paired bootstrap CIs (``metrics/retriever_experiments.json``, Markdown tables).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from prefect import flow

from flows._finetune import Baseline, baseline_of, finetune_and_evaluate, pair_retriever
from flows._params import resolve
from flows._retrieve import Collection, collect_passages, prepare_indexes, run, save_query_set
from flows.retrieval import passage_collection
from tasks.config import Params
from tasks.io.atomic import write_json
from tasks.io.dpr import iter_dpr_examples
from tasks.io.entityquestions import EQQuestion, read_eq_file
from tasks.layout import Layout
from tasks.questions.writers import main_file, no_overlap_file
from tasks.reporting.tables import publish_link_artifact
from tasks.retrieval.query_sets import QuerySet, eq_split
from tasks.retrieval.retrievers import DenseRetriever, registry_from_config
from tasks.training.experiment_plan import (
    Job,
    capped,
    job_name,
    job_sizes,
    multitask_jobs,
    not_run_reason,
    pattern_jobs,
    runnable,
)
from tasks.training.experiment_results import write_experiment_results_task
from tasks.training.experiment_seeds import seed_model
from tasks.training.experiment_tables import NQ_DEV
from tasks.training.finetune import finetune_config
from tasks.training.tsne import tsne_figure_task


def query_sets(params: Params, layout: Layout, jobs: list[Job]) -> dict[str, Path]:
    """``pattern``: each Table 2 relation's no-overlap test set; ``multitask``: the test split
    of every relation and the NQ-style dev questions (:data:`NQ_DEV`); saved as files."""
    out: dict[str, Path] = {}
    folder = layout.experiment_results / "queries"
    relations = list(dict.fromkeys(j.relation for j in jobs if j.table == "pattern"))
    if relations:
        groups = {r: read_eq_file(layout.eq_dataset / no_overlap_file(r, "test"))
                  for r in relations}
        out["pattern"] = save_query_set(QuerySet("pattern", groups, "no-overlap test"),
                                        folder / "pattern.json")
    if any(j.table == "multitask" for j in jobs):
        test = eq_split(layout.eq_dataset)
        nq = [EQQuestion(e.question, e.answers)
              for e in iter_dpr_examples(params.raw_path("nq_dev"))]
        out["multitask"] = save_query_set(
            QuerySet("multitask", {**test.groups, NQ_DEV: nq}, "test split + NQ-style dev"),
            folder / "multitask.json")
    return out


def plan(params: Params, layout: Layout) -> tuple[list[Job], dict[str, dict]]:
    """The jobs and, per job, its status, training-set sizes and questions taken."""
    cfg = params.retriever_experiments
    jobs = (pattern_jobs(cfg, layout.eq_dataset, layout.eq_dpr)
            + multitask_jobs(cfg, layout.eq_dataset, layout.eq_dpr, params.raw_path("nq_train")))
    status: dict[str, dict] = {}
    for job in jobs:
        sizes = job_sizes(job)
        ok = runnable(sizes)
        status[job.name] = {
            "status": "ran" if ok else not_run_reason(sizes),
            "train_questions": sum(capped(sizes, job.max_questions).values()) if ok else 0,
            "sizes": {n: {"questions": s.questions, "examples": s.examples}
                      for n, s in sizes.items()}}
        print(f"{job.name}: " + (f"{status[job.name]['train_questions']} training questions"
                                 if ok else status[job.name]["status"]))
    return jobs, status


def finetune_job(params: Params, layout: Layout, job: Job, name: str, seed: int,
                 baseline: Baseline, collection: Collection, queries: dict[str, Path]
                 ) -> tuple[dict, dict[Path, Path]]:
    """Fine-tune ``job`` with ``seed`` into the model ``name`` and run it on its query set
    (Table 2: the no-overlap test sets; Table 3: every test relation and NQ-style dev)."""
    cfg = params.retriever_experiments
    wanted = "pattern" if job.table == "pattern" else "multitask"
    files = [queries[wanted]] if wanted in queries else []
    config = finetune_config(params.retriever_training.dpr, cfg.finetune, job.mode)
    config = config.model_copy(update={"seed": seed})
    runs_dir = layout.experiment_results / "runs"
    return finetune_and_evaluate(
        name, job.train_sets, config, baseline, out_dir=layout.experiment_model(name),
        checkpoint_dir=layout.experiment_checkpoints(name), queries=files,
        run_path=lambda q: runs_dir / q.stem / f"{name}.trec", collection=collection,
        orchestration=params.orchestration, max_questions=job.max_questions)


def figure2(params: Params, layout: Layout, baseline: Baseline,
            status: dict[str, dict]) -> dict | None:
    """Figure 2 from the single-relation fine-tune of ``tsne.relation`` (None: disabled; a
    ``status`` saying why when that fine-tune did not run)."""
    cfg = params.retriever_experiments.tsne
    if not cfg.enabled:
        return None
    after = layout.experiment_model(job_name("multitask", cfg.relation, "single", "full"))
    job = status.get(after.name, {"status": "not planned"})
    if job["status"] != "ran":
        return {"status": f"{after.name}: {job['status']}"}
    split_file = params.raw_path("nq_dev" if cfg.split == "dev" else "nq_train")
    sets = {"NQ-style": split_file,
            cfg.relation: layout.eq_dpr / main_file(cfg.relation, cfg.split)}
    encoders = {f"before: {baseline.retriever.name}": baseline.index.spec,
                f"after: fine-tuned on {cfg.relation}": pair_retriever(
                    after.name, after, baseline.retriever.config).encoder()}
    png = layout.experiment_tsne_plot
    summary = tsne_figure_task(sets, encoders, png, layout.experiment_results / "tsne.json",
                               passages_per_set=cfg.passages_per_set, perplexity=cfg.perplexity,
                               seed=cfg.seed, device=baseline.retriever.config.device,
                               cpu_threads=baseline.retriever.config.cpu_threads)
    summary = {"status": "ran", **summary}
    publish_link_artifact("figure-retriever-tsne", png,
                          "Figure 2: t-SNE of passage embeddings before/after fine-tuning")
    return summary


@flow(name="retriever-experiments", log_prints=True)
def retriever_experiments(params: Params | None = None, profile: str | None = None,
                          params_file: str | None = None) -> dict:
    """Tables 2-3 and Figure 2; returns the metrics written to
    ``metrics/retriever_experiments.json``."""
    params = resolve(params, profile, params_file)
    layout, cfg = Layout(params), params.retriever_experiments
    if not cfg.enabled:
        metrics = {"enabled": False, "note": "retriever_experiments.enabled is false"}
        write_json(layout.experiment_metrics, metrics, indent=2)
        return metrics
    registry = registry_from_config(params.retrieval, layout.trained_retriever)
    base_retriever, bm25 = registry[cfg.baseline], registry["bm25"]
    if not isinstance(base_retriever, DenseRetriever):
        raise ValueError(f"retriever_experiments.baseline {cfg.baseline!r} is not a dense "
                         "retriever")
    collection = passage_collection(params, layout, [bm25])
    own = dataclasses.replace(collection, dense_paths=lambda name: (
        (layout.dense_shards(name), layout.dense_index(name)) if name == cfg.baseline
        else layout.experiment_dense(name)))
    indexes = prepare_indexes([bm25, base_retriever], own, params.orchestration)
    baseline = baseline_of(base_retriever, indexes[cfg.baseline])

    jobs, status = plan(params, layout)
    queries = query_sets(params, layout, jobs)
    runs_dir = layout.experiment_results / "runs"
    runs: dict[str, dict[str, Path]] = {name: {} for name in queries}
    for name, path in queries.items():
        for retriever in ([bm25, base_retriever] if name == "pattern" else [base_retriever]):
            runs[name][retriever.name] = run(
                retriever, path, runs_dir / name / f"{retriever.name}.trec", indexes=indexes,
                runs={}, orchestration=params.orchestration)
    main_seed = params.retriever_training.dpr.seed
    seeds = (main_seed, *cfg.extra_seeds)
    for seed in seeds:
        for job in jobs:
            if status[job.name]["status"] != "ran":
                continue
            name = seed_model(job.name, seed, main_seed)
            summary, job_runs = finetune_job(params, layout, job, name=name, seed=seed,
                                             baseline=baseline, collection=own, queries=queries)
            if seed == main_seed:
                status[job.name].update(summary)
            for queries_file, run_path in job_runs.items():
                runs[queries_file.stem][name] = run_path
    passages = collect_passages([p for by in runs.values() for p in by.values()], own,
                                layout.experiment_results / "passages.parquet")
    tsne = figure2(params, layout, baseline, status)
    metrics = write_experiment_results_task(
        jobs, status, runs, queries, passages, metrics_path=layout.experiment_metrics,
        report_path=layout.experiment_report, baseline=cfg.baseline, k=cfg.k,
        mode=params.retrieval.has_answer_mode, nq_mode=cfg.multitask.nq_has_answer_mode,
        boot={"n": cfg.n_bootstrap, "seed": cfg.bootstrap_seed, "confidence": cfg.confidence},
        extra={"figure2": tsne}, seeds=seeds, main_seed=main_seed)
    print(f"retriever experiments: {len(jobs)} jobs, not run: {metrics['not_run'] or 'none'} "
          f"-> {layout.experiment_metrics}, {layout.experiment_report}")
    return metrics


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("retriever-experiments")
