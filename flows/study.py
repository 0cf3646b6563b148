"""The whole study (the main job): every flow of the DAG in order, on one configuration.

The flows and their order are those of the stage registry (:data:`tasks.pipeline.stages.STAGES`,
which ``dvc.yaml`` is generated from): demo world (when ``sources.world`` is ``demo``) -> BM25
index of the passages -> EntityQuestions -> retrieval (BM25, dense, hybrid) -> paraphrased
SQuAD test sets -> retrieval on original vs paraphrased questions -> the HTML report of all of
it. A stage added to the registry runs here too.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from prefect import flow

from flows._params import resolve
from tasks.config import Params
from tasks.io.atomic import write_json
from tasks.layout import Layout
from tasks.pipeline.machine_speed import machine_speed
from tasks.pipeline.stage_clock import StageClock
from tasks.pipeline.stages import STAGES, Stage


def stage_flow(stage: Stage) -> Any:
    """The Prefect flow object of a registry stage."""
    return getattr(importlib.import_module(stage.module), stage.attribute)


@flow(name="study", log_prints=True)
def study(params: Params | None = None, profile: str | None = None,
          params_file: str | None = None) -> dict[str, str]:
    """Run the study end to end and return where its outputs are."""
    params = resolve(params, profile, params_file)
    layout = Layout(params)
    clock = StageClock()
    machine = machine_speed()  # the machine's speed today: wall times compare only with it
    for stage in STAGES:
        if stage.when(params):
            with clock.stage(stage.name):
                stage_flow(stage)(params=params)
    machine["matmul_gflops_end"] = machine_speed()["matmul_gflops"]
    write_json(layout.study_timings, {**clock.summary(), "machine": machine}, indent=2)
    print(f"time per stage (-> {layout.study_timings}):\n{clock.table()}\n"
          f"machine: {machine['cpu']}, {machine['cores']} cores, float32 matmul "
          f"{machine['matmul_gflops']} GFLOP/s at the start, "
          f"{machine['matmul_gflops_end']} at the end ({machine['torch_threads']} threads)")
    outputs = {
        "questions": str(layout.eq_dataset),
        "EQ summary": str(layout.eq_summary),
        **{f"{name} results": str(layout.retrieval_results(name))
           for name in params.retrieval.retrievers},
        **{f"{name} top-k": str(layout.retrieval_report(name))
           for name in params.retrieval.retrievers},
        "comparison": str(layout.retrieval_comparison_report),
        "figure": str(layout.retrieval_accuracy_plot),
        "paraphrased sets": str(layout.paraphrase_test_sets),
        "paraphrase report": str(layout.paraphrase_report),
        "metrics": str(params.paths.metrics),
        "report": str(layout.report_html),
        "timings": str(layout.study_timings),
    }
    for name, path in outputs.items():
        print(f"{name:>15}: {Path(path).resolve()}")
    return outputs


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("study")
