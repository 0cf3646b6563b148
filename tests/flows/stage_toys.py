"""Toy stage flows for the concurrent study test. ``toy_a`` and ``toy_b`` meet: each marks its
start and then waits for the other's mark, so they both finish only if they ran at the same time
(alone, one gives up after ``MEET_TIMEOUT_S``); each records when and in which process it ran,
under ``params.paths.data``. ``toy_c`` checks its input; ``toy_fail`` raises;
``toy_after_fail`` must never run. ``toy_first`` records when it ran; ``toy_busy`` holds its
worker for ``BUSY_S`` while ``toy_short_way`` waits; ``toy_long_way`` records when it ran;
``toy_idle`` does nothing."""

from __future__ import annotations

import json
import os
import time

import dask
from prefect import flow

MEET_TIMEOUT_S = 60.0
BUSY_S = 2.0


def _meet(params, name: str, partner: str) -> None:
    start = time.time()
    data = params.paths.data
    data.mkdir(parents=True, exist_ok=True)
    (data / f"{name}.started").touch()
    while not (data / f"{partner}.started").exists():
        if time.time() - start > MEET_TIMEOUT_S:
            raise TimeoutError(f"toy {name} ran alone: {partner} did not start beside it")
        time.sleep(0.1)
    _record(params, name, start)


def _record(params, name: str, start: float) -> None:
    params.paths.data.mkdir(parents=True, exist_ok=True)
    (params.paths.data / f"{name}.json").write_text(json.dumps(
        {"start": start, "end": time.time(), "pid": os.getpid(),
         "wait_policy": os.environ.get("OMP_WAIT_POLICY"),
         "omp_threads": os.environ.get("OMP_NUM_THREADS"),
         "dask_profiler": dask.config.get("distributed.worker.profile.enabled"),
         "system_monitor": dask.config.get("distributed.admin.system-monitor.interval"),
         "tick": dask.config.get("distributed.admin.tick.interval")}))


@flow(name="toy a")
def toy_a(params) -> None:
    _meet(params, "a", "b")


@flow(name="toy b")
def toy_b(params) -> None:
    _meet(params, "b", "a")


@flow(name="toy c")
def toy_c(params) -> None:
    assert (params.paths.data / "a.json").exists(), "toy c ran before its input"
    _record(params, "c", time.time())


@flow(name="toy after fail")
def toy_after_fail(params) -> None:
    (params.paths.data / "never").write_text("ran after a failed input")


@flow(name="toy fail")
def toy_fail(params) -> None:
    raise ValueError("toy stage broke")


@flow(name="toy first")
def toy_first(params) -> None:
    _record(params, "first", time.time())


@flow(name="toy busy")
def toy_busy(params) -> None:
    """Holds the only worker while the others queue behind it."""
    start = time.time()
    time.sleep(BUSY_S)
    _record(params, "busy", start)


@flow(name="toy short way")
def toy_short_way(params) -> None:
    _record(params, "short_way", time.time())


@flow(name="toy idle")
def toy_idle(params) -> None:
    pass


@flow(name="toy long way")
def toy_long_way(params) -> None:
    _record(params, "long_way", time.time())
