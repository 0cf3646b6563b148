"""The study's per-stage clock: wall and CPU seconds, recorded even when a stage fails."""

from __future__ import annotations

import time

import pytest

from tasks.pipeline.stage_clock import StageClock


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_cpu_time_follows_work_and_sleep_is_wall_only():
    clock = StageClock()
    with clock.stage("busy"):
        _spin(0.3)
    with clock.stage("idle"):
        time.sleep(0.3)
    busy, idle = clock.stages
    assert busy.cpu_s >= 0.25 and busy.wall_s >= 0.25
    assert idle.wall_s >= 0.25 and idle.cpu_s < 0.15
    summary = clock.summary()
    assert [s["stage"] for s in summary["stages"]] == ["busy", "idle"]
    assert summary["total"]["wall_s"] == pytest.approx(busy.wall_s + idle.wall_s, abs=0.02)
    assert "busy" in clock.table() and "total" in clock.table()


def test_a_failing_stage_is_still_recorded():
    clock = StageClock()
    with pytest.raises(RuntimeError), clock.stage("broken"):
        raise RuntimeError("boom")
    assert [s.stage for s in clock.stages] == ["broken"]


def test_the_machine_speed_probe_measures_matrix_products():
    from tasks.pipeline.machine_speed import machine_speed, matmul_gflops

    fast = matmul_gflops(seconds=0.2, rounds=2)
    small = matmul_gflops(seconds=0.2, rounds=2, size=8)  # tiny products: overhead dominates
    assert fast > 0 and small > 0 and small < fast
    speed = machine_speed(seconds=0.2)
    assert set(speed) == {"cpu", "cores", "torch_threads", "matmul_gflops"}
    assert speed["cores"] >= 1 and speed["torch_threads"] >= 1 and speed["cpu"]
