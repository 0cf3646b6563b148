"""Lucene runs in one JVM worker process beside the pipeline, never in the pipeline's process."""

from __future__ import annotations

import os

import pytest

from tasks.retrieval import jvm


def _fail() -> None:
    os._exit(3)  # a worker that dies (a JVM crash) without a Python exception


def test_jvm_work_runs_in_one_persistent_child_process():
    first = jvm.in_jvm_process(os.getpid)
    assert first != os.getpid()
    assert jvm.in_jvm_process(os.getpid) == first  # the same worker: one JVM start per process


def test_a_dead_worker_is_a_clear_error_and_the_next_call_starts_a_new_one():
    before = jvm.in_jvm_process(os.getpid)
    with pytest.raises(jvm.JvmError, match="JVM worker process died while running _fail"):
        jvm.in_jvm_process(_fail)
    assert jvm.in_jvm_process(os.getpid) not in (before, os.getpid())


def _pid_in_jvm_worker(results) -> None:
    results.put((os.getpid(), jvm.in_jvm_process(os.getpid)))


def test_a_daemonic_process_runs_the_work_itself():
    """A daemonic process (a Dask worker) may not start children: it holds the JVM itself."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    daemon = context.Process(target=_pid_in_jvm_worker, args=(results,), daemon=True)
    daemon.start()
    own, worker = results.get(timeout=120)
    daemon.join(timeout=60)
    assert daemon.exitcode == 0 and own == worker == daemon.pid
