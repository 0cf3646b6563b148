"""The study's concurrent mode (``orchestration.concurrent_stages`` > 1) on toy stages: stages
that read nothing of each other run at the same time in different worker processes, a stage
waits for the stages whose outputs it reads, the workers keep the flow's thread settings and
sleep when idle, a failed stage fails the run with its own error after the others ran, and of
the stages waiting for a worker the one with the longest typical way to the end starts first."""

from __future__ import annotations

import json
import os

import pytest

from tasks.pipeline.stage_clock import StageClock
from tasks.pipeline.stages import Stage

A = Stage(name="a", flow="stage_toys:toy_a", description="", params=(),
          outs=("${paths.data}/a",))
B = Stage(name="b", flow="stage_toys:toy_b", description="", params=(),
          outs=("${paths.data}/b",))
C = Stage(name="c", flow="stage_toys:toy_c", description="", params=(),
          deps=("${paths.data}/a",), outs=("${paths.data}/c",))
FAIL = Stage(name="fail", flow="stage_toys:toy_fail", description="", params=(),
             deps=("${paths.data}/b",), outs=("${paths.data}/never",))
AFTER_FAIL = Stage(name="after_fail", flow="stage_toys:toy_after_fail", description="",
                   params=(), deps=("${paths.data}/never",))

# after FIRST, BUSY and SHORT_WAY are ready; LONG_WAY, after BUSY, has the longer way to the end
FIRST = Stage(name="first", flow="stage_toys:toy_first", description="", params=(),
              outs=("${paths.data}/first",), typical_s=1)
BUSY = Stage(name="busy", flow="stage_toys:toy_busy", description="", params=(),
             deps=("${paths.data}/first",), outs=("${paths.data}/busy",), typical_s=100)
SHORT_WAY = Stage(name="short_way", flow="stage_toys:toy_short_way", description="", params=(),
                  deps=("${paths.data}/first",), typical_s=1)
LONG_WAY = Stage(name="long_way", flow="stage_toys:toy_long_way", description="", params=(),
                 deps=("${paths.data}/busy",), typical_s=10)
# more stages than Dask's default bound for queuing on the scheduler (5 in the group's inputs)
IDLE = tuple(Stage(name=f"idle_{i}", flow="stage_toys:toy_idle", description="", params=(),
                   deps=("${paths.data}/first",)) for i in (1, 2))


@pytest.fixture
def toy_params(tmp_path):
    from tasks.params_loading import load_params

    return load_params(overrides={"paths.data": str(tmp_path / "data")})


def _ran(params, name: str) -> dict:
    return json.loads((params.paths.data / f"{name}.json").read_text())


def test_stages_overlap_wait_for_their_inputs_and_a_failure_fails_the_run(prefect_api,
                                                                           toy_params):
    """One run (one cluster): a and b meet, c follows a, fail (after b) raises and after_fail,
    which reads what fail would have written, never runs; the run raises fail's own error once
    the others are done."""
    from flows.study import run_concurrently

    clock = StageClock(concurrent_stages=2)
    with pytest.raises(ValueError, match="toy stage broke"):
        run_concurrently([A, B, FAIL, AFTER_FAIL, C], toy_params, clock, workers=2)
    a, b, c = (_ran(toy_params, name) for name in "abc")  # a and b met: they overlapped
    assert a["pid"] != b["pid"] and c["start"] >= a["end"]
    assert a["wait_policy"] == os.environ.get("OMP_WAIT_POLICY", "PASSIVE")
    assert a["omp_threads"] == os.environ.get("OMP_NUM_THREADS")  # not Dask's 1
    assert a["dask_profiler"] is False  # no stack walk every 10 ms beside the stage
    assert a["system_monitor"] == "10s"  # not /proc read every 500 ms
    assert a["tick"] == "1s"  # not an event-loop check every 20 ms
    assert [s.stage for s in clock.stages] == ["a", "b", "c"]  # registry order, fail left out
    timed = {s.stage: s for s in clock.stages}  # on the study's clock, as they ran
    assert timed["a"].start_s < timed["b"].start_s + timed["b"].wall_s
    assert timed["b"].start_s < timed["a"].start_s + timed["a"].wall_s
    assert timed["c"].start_s >= timed["a"].start_s + timed["a"].wall_s - 0.05
    assert "2 stages at a time" in clock.table()
    assert not (toy_params.paths.data / "never").exists()


def test_stages_run_one_at_a_time_when_shards_go_to_a_cluster():
    from flows.study import stage_workers
    from tasks.config import OrchestrationConfig

    assert stage_workers(OrchestrationConfig()) == 1
    assert stage_workers(OrchestrationConfig(concurrent_stages=3)) == 3
    assert stage_workers(OrchestrationConfig(concurrent_stages=3, task_runner="dask")) == 1
    assert stage_workers(OrchestrationConfig(concurrent_stages=2, task_runner="ray")) == 1


def test_the_stage_with_the_longest_way_to_the_end_starts_first(prefect_api, toy_params):
    """One worker. SHORT_WAY is ready while BUSY runs; LONG_WAY becomes ready when BUSY ends and
    starts first, as it has the longer way to the end: ready stages wait in the scheduler's
    queue by priority (without priorities Dask picks by its random task keys; without the
    queue, the worker would already hold SHORT_WAY and start it at once)."""
    from flows.study import run_concurrently

    run_concurrently([FIRST, BUSY, SHORT_WAY, *IDLE, LONG_WAY], toy_params, StageClock(),
                     workers=1)
    busy, short, long = (_ran(toy_params, name) for name in ("busy", "short_way", "long_way"))
    assert busy["end"] <= long["start"] < short["start"]
