"""Benchmark: what a two-worker Dask cluster costs while its workers wait, with Dask's periodic
work at its defaults and at the stage cluster's settings.

Every Dask server (the scheduler and the nannies, in the client's process for a
``LocalCluster``; each worker, in its own process) checks its event loop every 20 ms
(``distributed.admin.tick``) and reads its CPU, memory and open files and the host's network and
disk counters from ``/proc`` every 500 ms (``distributed.admin.system-monitor``). The study's
stage cluster (:func:`tasks.distribution.stage_runner`) ticks every second and reads every 10 s
without the disk counters (:data:`tasks.distribution.STAGE_CLUSTER_HOUSEKEEPING`). This script
starts a cluster like the stage cluster (2 worker processes of one thread each, nannies, no
dashboard, no memory limit, Dask's profiler off) both ways, interleaved, on the same machine in
the same run, and measures the CPU time (user + system, ``psutil``) of this process and of the
worker processes over ``--seconds`` in which each worker runs a task that sleeps: the cluster's
own CPU while its stages would be computing. Each way runs ``--repeats`` times on a fresh
cluster; the median is kept and every run printed, with CPU-seconds per minute and the ratio.
Example: ``python bench/bench_dask_idle_cluster.py --seconds 30 --repeats 3``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def _cpu(processes: list) -> float:
    total = 0.0
    for process in processes:
        times = process.cpu_times()
        total += times.user + times.system
    return total


def idle_cluster_cpu(settings: dict, seconds: float) -> float:
    """CPU seconds of this process and the cluster's workers over ``seconds`` of sleeping
    tasks, with ``settings`` applied to the cluster."""
    import dask
    import psutil
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.worker.profile.enabled": False, **settings}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None, host="127.0.0.1", memory_limit=0) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(2)
        pids = client.run(os.getpid).values()
        processes = [psutil.Process(), *(psutil.Process(pid) for pid in pids)]
        time.sleep(1.0)  # the workers' start-up is not the idle cluster's cost
        before = _cpu(processes)
        futures = [client.submit(_sleep, seconds, pure=False, workers=[address])
                   for address in client.scheduler_info()["workers"]]
        client.gather(futures)
        return _cpu(processes) - before


def main(argv: list[str] | None = None) -> None:
    from tasks.distribution import STAGE_CLUSTER_HOUSEKEEPING

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0,
                        help="how long the workers' tasks sleep per run (default 30)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per way (median kept)")
    args = parser.parse_args(argv)

    ways = {"Dask default": {}, "stage cluster": dict(STAGE_CLUSTER_HOUSEKEEPING)}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.repeats):
        for name, settings in ways.items():
            times[name].append(idle_cluster_cpu(settings, args.seconds))
    print(f"a 2-worker cluster's own CPU over {args.seconds:.0f} s of sleeping tasks "
          f"({platform.processor() or platform.machine()}, median of {args.repeats})")
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        per_minute = median[name] / args.seconds * 60
        print(f"  {name:28s} {median[name]:6.2f} CPU-s ({per_minute:5.2f} per minute; "
              f"{', '.join(f'{v:.2f}' for v in values)})")
    default, stage = median["Dask default"], median["stage cluster"]
    print(f"  stage cluster / Dask default {stage / default:.3f}" if default else
          "  Dask default used no measurable CPU")


if __name__ == "__main__":
    main()
