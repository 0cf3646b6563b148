"""Where shard-parallel tasks run: Prefect task runners chosen from ``params.orchestration``.

- ``thread``: Prefect's ``ThreadPoolTaskRunner`` in the flow's process (the default);
- ``dask``: prefect-dask's ``DaskTaskRunner`` on a ``distributed.LocalCluster`` (scheduler and
  dashboard bound to loopback) or on an existing cluster given by ``dask.address``;
- ``ray``: prefect-ray's ``RayTaskRunner`` (optional extra ``qastress[ray]``).

Task runs in worker processes report to the Prefect API of the flow: prefect-dask ships the
flow's settings context with every task. Without a configured server, :func:`shared_api` starts
one temporary API server for the whole run (robustly: :mod:`tasks.temporary_api`) and points
the flow, every worker and every subprocess at it.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from tasks.config import OrchestrationConfig
from tasks.temporary_api import LOOPBACK, free_port, temporary_api  # noqa: F401

T = TypeVar("T")


def submit_in_waves(submit: Callable[[int, T], Any], plan: Sequence[T], width: int) -> list:
    """Call ``submit(number, item)`` (a task's ``.submit``, returning a future) for every item
    of ``plan``, ``width`` at a time, and return the results in plan order. A wave's futures
    are all resolved before the next wave is submitted: at most ``width`` shards are in flight
    (and in memory), and the first failure stops the stage."""
    results: list = []
    width = max(1, width)
    for first in range(0, len(plan), width):
        futures = [submit(number, item)
                   for number, item in enumerate(plan[first:first + width], start=first)]
        results.extend(future.result() for future in futures)
    return results


def task_runner_for(cfg: OrchestrationConfig) -> Any:
    """The Prefect task runner named by ``cfg.task_runner`` (not yet started)."""
    if cfg.task_runner == "thread":
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=cfg.max_workers)
    if cfg.task_runner == "dask":
        from prefect_dask import DaskTaskRunner

        dask = cfg.dask
        if dask.address:
            return DaskTaskRunner(address=dask.address)
        return DaskTaskRunner(
            cluster_class="distributed.LocalCluster",
            cluster_kwargs={
                "n_workers": dask.n_workers,
                "threads_per_worker": dask.threads_per_worker,
                "processes": dask.processes,
                "host": LOOPBACK,
                "dashboard_address": dask.dashboard_address,
            },
        )
    try:
        from prefect_ray import RayTaskRunner
    except ImportError as exc:
        raise RuntimeError("orchestration.task_runner is 'ray' but prefect-ray is not "
                           "installed: pip install 'qastress[ray]'") from exc
    ray = cfg.ray
    if ray.address:
        return RayTaskRunner(address=ray.address)
    init_kwargs: dict[str, Any] = {"dashboard_host": LOOPBACK}
    if ray.num_cpus:
        init_kwargs["num_cpus"] = ray.num_cpus
    return RayTaskRunner(init_kwargs=init_kwargs)


def runner_width(cfg: OrchestrationConfig) -> int | None:
    """Task slots of the runner when known (local clusters and threads), else None."""
    if cfg.task_runner == "dask" and not cfg.dask.address:
        return cfg.dask.n_workers * cfg.dask.threads_per_worker
    if cfg.task_runner == "thread":
        return cfg.max_workers
    if cfg.task_runner == "ray" and not cfg.ray.address:
        return cfg.ray.num_cpus
    return None


def describe_runner(cfg: OrchestrationConfig) -> str:
    """One line for logs: which runner and where."""
    if cfg.task_runner == "dask":
        where = cfg.dask.address or (f"local cluster, {cfg.dask.n_workers} "
                                     f"{'processes' if cfg.dask.processes else 'threads'}")
        return f"dask ({where})"
    if cfg.task_runner == "ray":
        return f"ray ({cfg.ray.address or 'local'})"
    return "threads (in-process)"


def run_on_runner(subflow: Any, cfg: OrchestrationConfig, concurrent: int, what: str,
                  *args: Any, **kwargs: Any) -> Any:
    """Call the shard-parallel ``subflow(*args, concurrency=width, **kwargs)`` on the task
    runner of ``cfg``, ``width = max(concurrent, the runner's slots)``; prints ``what`` and where
    it runs."""
    width = max(concurrent, runner_width(cfg) or 1)
    print(f"{what} on {describe_runner(cfg)}, {width} at a time")
    return subflow.with_options(task_runner=task_runner_for(cfg))(*args, concurrency=width,
                                                                  **kwargs)


@contextlib.contextmanager
def shared_api(cfg: OrchestrationConfig) -> Iterator[str]:
    """Give the run one Prefect API that every process of it reaches; yields its URL.

    ``cfg.api_url`` wins, then a configured ``PREFECT_API_URL``. With neither, one temporary
    API server is started for the run (:func:`tasks.temporary_api.temporary_api`: wall-clock
    timeout ``cfg.api_startup_timeout_s``, ``cfg.api_start_attempts`` attempts) and stopped
    after it, whatever the runner: the flow, its task threads, worker processes and any
    subprocess get its URL (settings and environment), so none starts a temporary API of its
    own. Raises :class:`tasks.temporary_api.ApiStartError` when it cannot start.
    """
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS,
        temporary_settings,
    )

    url = cfg.api_url or PREFECT_API_URL.value()
    timeout = max(1, math.ceil(cfg.api_startup_timeout_s))  # Prefect's own fallback: same
    with _exported(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.name, str(timeout)), \
            temporary_settings(updates={PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS:
                                        timeout}):
        if url:
            with _exported("PREFECT_API_URL", url), \
                    temporary_settings(updates={PREFECT_API_URL: url}):
                yield url
            return
        with temporary_api(cfg.api_startup_timeout_s, cfg.api_start_attempts) as api, \
                _exported("PREFECT_API_URL", api.api_url), \
                temporary_settings(updates={PREFECT_API_URL: api.api_url}):
            yield api.api_url


@contextlib.contextmanager
def _exported(name: str, value: str) -> Iterator[None]:
    """Environment variable ``name=value`` (for processes started by the run), then restored."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


#: The stage cluster's own periodic work, set down from Dask's defaults. Every Dask server (the
#: scheduler and both nannies in the flow's process, each worker in its own) checks its event
#: loop every 20 ms (``admin.tick``: a warning when a tick comes ``tick.limit`` late, and the
#: stage cluster's limit is an hour) and reads its CPU, memory, open files and the host's
#: network and disk counters from ``/proc`` every 500 ms (``admin.system-monitor``: the
#: dashboard's plots and the heartbeats' metrics; no dashboard here, no memory limit). An idle
#: two-worker cluster used 5.4 CPU-s a minute that way and 0.8 with these, CPU taken from the
#: stages on 2 cores; two torch trainings side by side took the same time either way
#: (bench/bench_dask_idle_cluster.py, bench/RESULTS.md, Session 47).
STAGE_CLUSTER_HOUSEKEEPING: dict[str, Any] = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "10s",
    "distributed.admin.system-monitor.disk": False,
}

#: Dask settings of the study's stage cluster (:func:`stage_runner`), besides its workers'
#: environment.
_STAGE_CLUSTER_SETTINGS: dict[str, Any] = {
    **STAGE_CLUSTER_HOUSEKEEPING,
    # a stage may start processes of its own (side-by-side tagger training, DDP)
    "distributed.worker.daemon": False,
    # a stage holds a worker's only thread for minutes: not a stalled event loop
    "distributed.admin.tick.limit": "1h",
    # Ready stages wait in the scheduler's queue, highest priority first, and a worker gets the
    # next one only when its stage is done. Dask queues only "root-ish" tasks: those of a task
    # group of more than twice the cluster's threads whose groups of dependencies hold fewer
    # than this many tasks. The stages are one group that depends on itself, so the bound
    # must exceed the number of stages (the first stage, ready when the group is still one
    # task, goes straight to a worker). Otherwise a stage ready while both workers are busy is
    # sent to one at once and started there before a stage of higher priority that becomes
    # ready when the running one ends.
    "distributed.scheduler.rootish-taskgroup-dependencies": 1_000_000,
    "distributed.scheduler.worker-saturation": 1.0,
    # Dask's statistical profiler (for the dashboard's profile page; the stage cluster has no
    # dashboard) walks every thread's stack every 10 ms: 3 % of a demo run's CPU samples
    # under py-spy, CPU taken from the stage beside it on 2 cores (bench/bench_dask_profiler.py,
    # bench/RESULTS.md, Session 44)
    "distributed.worker.profile.enabled": False,
}


@contextlib.contextmanager
def stage_runner(workers: int, before_close: Callable[[], Any] | None = None) -> Iterator[Any]:
    """A started ``DaskTaskRunner`` for whole stages: a local cluster of ``workers`` worker
    processes with one task thread each, bound to loopback, no dashboard, no memory limit (a
    stage's peak memory is its own business, not a reason to restart it).

    Worker processes run with the flow's environment (torch's thread count included) plus
    ``OMP_WAIT_POLICY=PASSIVE`` unless the environment sets it: with OpenMP's default
    spin-waiting, two stages whose torch threads outnumber the cores take 1.6-2x as long as one
    after the other; with passive waiting they finish sooner than in sequence.

    ``before_close`` runs on every worker before the cluster closes, which kills a worker slow
    to exit: a worker must stop there what it started that would outlive it (the study stops
    the JVM process a worker started for Lucene). Then the worker's heap is frozen
    (:func:`prepare_worker_exit`), so that its exit fits in Dask's 4 s.
    """
    import dask
    from prefect_dask import DaskTaskRunner

    # Dask's default worker environment pins OMP/MKL/OpenBLAS to 1 thread; a stage must run with
    # the threads it has in the flow's process, or torch's floating-point sums (and every number
    # downstream) change. What the workers get instead: OpenMP threads that sleep when idle, so
    # two stages' torch teams share the cores (bench/RESULTS.md, Session 25).
    environ = {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
    settings = {**_STAGE_CLUSTER_SETTINGS, "distributed.nanny.pre-spawn-environ": environ}
    chatter = logging.getLogger("distributed")  # the cluster's start and close, line by line
    level = chatter.level
    chatter.setLevel(max(level, logging.WARNING))
    # prefect-dask logs the client's dashboard link, formatted from Dask's template even when
    # the cluster has no dashboard: the scheduler's HTTP server (health, metrics) answers that
    # URL with 404
    runner_log = logging.getLogger("prefect.task_runner.dask")
    no_link = _DropDashboardLink()
    runner_log.addFilter(no_link)
    try:
        with dask.config.set(settings):
            runner = DaskTaskRunner(
                cluster_class="distributed.LocalCluster",
                cluster_kwargs={"n_workers": workers, "threads_per_worker": 1,
                                "processes": True, "host": LOOPBACK, "dashboard_address": None,
                                "memory_limit": 0,
                                # the scheduler's HTTP server (health, metrics) runs without a
                                # dashboard too: on a free loopback port, not Dask's 8787
                                "scheduler_kwargs": {"dashboard": False,
                                                     "dashboard_address": f"{LOOPBACK}:0"}})
            with runner:
                try:
                    yield runner
                finally:
                    # never masks the stages' own error
                    runner.client.run(prepare_worker_exit, before_close, on_error="ignore")
    finally:
        chatter.setLevel(level)
        runner_log.removeFilter(no_link)


class _DropDashboardLink(logging.Filter):
    """Drops prefect-dask's "The Dask dashboard is available at ..." record."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("The Dask dashboard is available")


def prepare_worker_exit(before_close: Callable[[], Any] | None = None) -> None:
    """Ready a stage worker for the cluster's close: call ``before_close``, then move every object
    the worker holds into the garbage collector's permanent generation (``gc.freeze``).

    At interpreter exit Python runs one last collection over every tracked object; a worker
    that had run the demo's stages spent more than Dask's 4 s in it (py-spy: the main thread in
    ``gc_collect_main`` during finalisation) and was killed, with a warning, after its results
    were written (bench/RESULTS.md, Session 27). Frozen objects are not walked; the operating
    system takes back their memory with the process.
    """
    if before_close is not None:
        before_close()
    gc.freeze()
