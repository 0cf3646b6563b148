"""The whole study (the main job): every flow of the DAG in order, on one configuration.

The flows and their order are those of the stage registry (:data:`tasks.pipeline.stages.STAGES`,
which ``dvc.yaml`` is generated from): the demo world's encyclopedia (when ``sources.world``
is ``demo``) -> BM25 index of the passages -> EntityQuestions -> DPR training -> retrieval
(BM25, dense, hybrid, DPR) -> the retriever experiments and specialised encoders; beside them,
from the demo world's reading sources, the paraphrased SQuAD test sets -> retrieval on
original vs paraphrased questions; the reader's training -> readers on original vs
paraphrased questions -> retrieve-then-read; one stage per augmentation kind -> their
comparison with the reader -> the HTML report of all of it. A stage added to the
registry runs here too.

With ``orchestration.concurrent_stages`` = 1 (or with the shard tasks on a Dask or Ray
``orchestration.task_runner``, whose cluster the stages then have to themselves) the stages
run one after the other in the flow's process, in registry order. With more, every stage is
submitted at once to a local Dask cluster of that many worker processes
(:func:`tasks.distribution.stage_runner`), each waiting for the stages whose outputs it reads
(:func:`tasks.pipeline.stage_graph.upstream_stages`, the edges of ``dvc.yaml``): Dask's
scheduler starts a stage once those are done, so the EntityQuestions branch and the paraphrase
branch run side by side; of the stages waiting for a worker, the one with the longest typical
way to the end goes first (:func:`tasks.pipeline.stage_graph.stage_priorities`). Every stage
computes the same numbers either way (same seeds, same torch thread count; the demo's and the
smoke profile's pinned scores check it).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import wait
from prefect.transactions import CommitMode, transaction

from flows._params import resolve
from tasks.config import OrchestrationConfig, Params
from tasks.io.atomic import write_json
from tasks.layout import Layout
from tasks.pipeline.machine_speed import machine_speed
from tasks.pipeline.stage_clock import StageClock, StageTime
from tasks.pipeline.stage_graph import stage_priorities, upstream_stages, with_upstream
from tasks.pipeline.stages import STAGES, Stage
from tasks.reporting.timeline import write_stage_timeline


def flow_at(path: str) -> Any:
    """The Prefect flow object at ``module:attribute``."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


@task(name="stage", task_run_name="{name}", cache_policy=NO_CACHE)
def run_stage(name: str, flow_path: str, params: Params, origin: float) -> StageTime:
    """Run stage ``name``'s flow (``module:attribute``) in this process and time it on the
    study's clock (``origin``: the study's start). Not cached itself: its flow's tasks are.

    The flow runs in an eager transaction: every task of it writes its cache record as it
    completes. Inside this task's own transaction the records would wait for the whole stage
    to end (Prefect commits nested transactions with their parent), so a study killed in the
    middle of a stage would redo all of that stage's finished tasks."""
    clock = StageClock(origin=origin)
    with clock.stage(name), transaction(commit_mode=CommitMode.EAGER):
        flow_at(flow_path)(params=params)
    return clock.stages[0]


def stage_workers(orchestration: OrchestrationConfig) -> int:
    """How many stages run at once: ``concurrent_stages``, but 1 when the shard tasks go to a
    Dask or Ray cluster (inside a stage's worker, prefect-dask would find the stage cluster)."""
    if orchestration.task_runner != "thread":
        return 1
    return orchestration.concurrent_stages


def run_in_order(stages: Sequence[Stage], params: Params, clock: StageClock) -> None:
    """Run the stages' flows one after the other in this process."""
    for one in stages:
        with clock.stage(one.name):
            flow_at(one.flow)(params=params)


def run_concurrently(stages: Sequence[Stage], params: Params, clock: StageClock,
                     workers: int) -> None:
    """Submit every stage to a local cluster of ``workers`` processes, each waiting for the
    stages it reads from; record their times; raise the first failed stage's error (in
    registry order) once every stage has finished or been skipped for a failed input.

    Each stage carries a Dask priority (:func:`tasks.pipeline.stage_graph.stage_priorities`):
    of the stages waiting for a free worker, the one with the longest typical way to the end
    starts first (without it, Dask breaks the tie by its random task keys)."""
    import dask

    from tasks.distribution import stage_runner
    from tasks.retrieval.jvm import shutdown_jvm_worker

    edges = upstream_stages(stages)
    priorities = stage_priorities(stages)
    futures: dict[str, Any] = {}
    with stage_runner(workers, before_close=shutdown_jvm_worker) as runner:
        for one in stages:
            with dask.annotate(priority=priorities[one.name]):
                futures[one.name] = runner.submit(
                    run_stage, {"name": one.name, "flow_path": one.flow, "params": params,
                                "origin": clock.origin},
                    wait_for=[futures[name] for name in edges[one.name]])
        wait(list(futures.values()))
        failed = [one.name for one in stages if not futures[one.name].state.is_completed()]
        for one in stages:
            if one.name not in failed:
                clock.add(futures[one.name].result())
        if failed:
            print(f"stages not completed: {failed}")
            futures[failed[0]].result()  # raises that stage's error
            raise RuntimeError(f"stage {failed[0]!r} did not complete")


def study_outputs(params: Params) -> dict[str, tuple[str | None, Path]]:
    """``{label: (the stage that writes it, path)}`` of the outputs the study prints at its
    end; the stage is None for what the study itself writes (or every stage adds to)."""
    layout = Layout(params)
    retrievers = params.retrieval.retrievers
    return {
        "questions": ("entity_questions", layout.eq_dataset),
        "EQ summary": ("entity_questions", layout.eq_summary),
        **{f"{name} results": ("retrieval", layout.retrieval_results(name))
           for name in retrievers},
        **{f"{name} top-k": ("retrieval", layout.retrieval_report(name)) for name in retrievers},
        "comparison": ("retrieval", layout.retrieval_comparison_report),
        "figure": ("retrieval", layout.retrieval_accuracy_plot),
        "paraphrased sets": ("paraphrase", layout.paraphrase_test_sets),
        "paraphrase report": ("paraphrase", layout.paraphrase_report),
        "metrics": (None, params.paths.metrics),
        "report": ("report", layout.report_html),
        "timings": (None, layout.study_timings),
        "timeline": (None, layout.study_timeline),
    }


@flow(name="study", log_prints=True)
def study(params: Params | None = None, profile: str | None = None,
          params_file: str | None = None, until: list[str] | None = None) -> dict[str, str]:
    """Run the study end to end and return where its outputs are.

    ``until``: run only these stages and the stages they read from, directly or not (what
    ``dvc repro STAGE ...`` runs), e.g. ``["retrieval"]`` for the EntityQuestions retrieval
    and what it needs; the default runs every stage the configuration enables."""
    params = resolve(params, profile, params_file)
    layout = Layout(params)
    machine = machine_speed()  # the machine's speed today: wall times compare only with it
    workers = stage_workers(params.orchestration)
    if workers < params.orchestration.concurrent_stages:
        print(f"stages run one at a time: orchestration.concurrent_stages "
              f"({params.orchestration.concurrent_stages}) needs the shard tasks on threads, "
              f"not on {params.orchestration.task_runner}")
    clock = StageClock(concurrent_stages=workers)
    stages = [one for one in STAGES if one.when(params)]
    if until:
        stages = with_upstream(stages, until)
        print(f"stages up to {', '.join(until)}: {', '.join(one.name for one in stages)}")
    if workers > 1:
        run_concurrently(stages, params, clock, workers)
    else:
        run_in_order(stages, params, clock)
    end = machine_speed()
    machine["matmul_gflops_end"] = end["matmul_gflops"]
    machine["python_mops_end"] = end["python_mops"]
    timings = {**clock.summary(), "machine": machine}
    write_json(layout.study_timings, timings, indent=2)
    write_stage_timeline(timings, layout.study_timeline,
                         title=f"Study timeline ({params.profile} profile, {workers} stage "
                               f"worker{'s' if workers > 1 else ''})")
    print(f"time per stage (-> {layout.study_timings}):\n{clock.table()}\n"
          f"machine: {machine['cpu']} ({machine['cpu_id'] or 'no cpuinfo'}; ISA "
          f"{' '.join(machine['isa']) or '-'}), {machine['cores']} cores, float32 matmul "
          f"{machine['matmul_gflops']} GFLOP/s at the start, "
          f"{machine['matmul_gflops_end']} at the end ({machine['torch_threads']} threads); "
          f"Python loop {machine['python_mops']} -> {machine['python_mops_end']} M iterations/s")
    ran = {one.name for one in stages}
    outputs = {label: str(path) for label, (stage, path) in study_outputs(params).items()
               if stage is None or stage in ran}
    for name, path in outputs.items():
        print(f"{name:>15}: {Path(path).resolve()}")
    return outputs


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("study")
