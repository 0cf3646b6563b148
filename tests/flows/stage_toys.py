"""Toy stage flows for the concurrent study test: each records when it ran (wall clock) and in
which process, under ``params.paths.data``; ``toy_fail`` raises."""

from __future__ import annotations

import json
import os
import time

from prefect import flow

HOLD_S = 2.0  # long enough for two toy stages on two workers to overlap


def _record(params, name: str) -> None:
    start = time.time()
    time.sleep(HOLD_S)
    out = params.paths.data / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"start": start, "end": time.time(), "pid": os.getpid(),
                               "wait_policy": os.environ.get("OMP_WAIT_POLICY"),
                               "omp_threads": os.environ.get("OMP_NUM_THREADS")}))


@flow(name="toy a")
def toy_a(params) -> None:
    _record(params, "a")


@flow(name="toy b")
def toy_b(params) -> None:
    _record(params, "b")


@flow(name="toy c")
def toy_c(params) -> None:
    assert (params.paths.data / "a.json").exists(), "toy c ran before its input"
    _record(params, "c")


@flow(name="toy fail")
def toy_fail(params) -> None:
    raise ValueError("toy stage broke")
