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
    assert summary["total"]["stages_wall_s"] == pytest.approx(busy.wall_s + idle.wall_s)
    assert idle.start_s == pytest.approx(busy.start_s + busy.wall_s, abs=0.02)
    assert "busy" in clock.table() and "total" in clock.table()
    assert "at a time" not in clock.table()


def test_stages_timed_in_other_processes_overlap_on_one_clock():
    from tasks.pipeline.stage_clock import StageTime

    clock = StageClock(origin=1000.0, concurrent_stages=2)
    clock.add(StageTime("a", wall_s=10.0, cpu_s=9.0, start_s=1.0))
    clock.add(StageTime("b", wall_s=6.0, cpu_s=5.0, start_s=2.0))  # beside a
    clock.add(StageTime("c", wall_s=3.0, cpu_s=3.0, start_s=11.0))  # after a
    total = clock.summary()["total"]
    assert total == {"wall_s": 14.0, "cpu_s": 17.0, "stages_wall_s": 19.0}
    assert clock.summary()["concurrent_stages"] == 2
    assert "up to 2 stages at a time" in clock.table() and "19.0 s" in clock.table()


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
    assert set(speed) == {"cpu", "cpu_id", "isa", "cores", "torch_threads", "matmul_gflops",
                          "python_mops"}
    assert speed["cores"] >= 1 and speed["torch_threads"] >= 1 and speed["cpu"]
    assert speed["python_mops"] > 0


def test_the_interpreter_probe_counts_loop_iterations_per_second(monkeypatch):
    """The rate is iterations over elapsed time: with a clock that advances 1/16 s per read
    and rounds of 0.1 s, each round runs one chunk and reads the clock at 1/16 s (go on) and
    at 1/8 s (stop): 250,000 iterations in 0.125 s, 2.0 million a second."""
    from tasks.pipeline import machine_speed as probe

    ticks = iter(range(10_000))
    monkeypatch.setattr(probe.time, "perf_counter", lambda: next(ticks) * 0.0625)
    monkeypatch.setattr(probe, "_LOOP_CHUNK", 250_000)
    assert probe.python_loop_mops(seconds=0.5, rounds=5) == 2.0


def test_the_cpu_identity_tells_generations_behind_one_model_name(tmp_path):
    """Cloud VMs often show a generic model name; family, model and the ISA flags that pick
    the BLAS code path are recorded beside it (the first processor's block only)."""
    from tasks.pipeline.machine_speed import cpu_identity

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
        "model name\t: AMD EPYC Processor\nstepping\t: 1\n"
        "flags\t\t: fpu sse2 avx2 fma avx512f avx512_bf16\n\n"
        "processor\t: 1\nvendor_id\t: GenuineIntel\nflags\t\t: amx_tile\n",
        encoding="utf-8")
    assert cpu_identity(cpuinfo) == {"cpu_id": "AuthenticAMD family 25 model 17 stepping 1",
                                     "isa": ["avx2", "fma", "avx512f", "avx512_bf16"]}
    assert cpu_identity(tmp_path / "absent") == {"cpu_id": "", "isa": []}
