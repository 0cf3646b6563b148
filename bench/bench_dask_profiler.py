"""Benchmark: a stage's pure-Python work in a Dask worker, with Dask's profiler on and off.

Dask workers run a statistical profiler that walks every thread's stack every 10 ms
(``distributed.worker.profile``), holding the GIL while it does. The study's stage cluster
(:func:`tasks.distribution.stage_runner`) turns it off. This script times the same CPU-bound
Python loop, called ``--depth`` frames down (a stage runs under Prefect's and the study's
frames), three ways on the same machine in the same run:

* bare: in this process, no Dask (the floor);
* Dask's default: a one-worker ``LocalCluster`` (worker process, one thread), profiler on;
* the stage cluster's setting: the same cluster with ``distributed.worker.profile.enabled``
  false.

Each way runs ``--repeats`` times, interleaved, each on a fresh cluster; the median CPU time of
the worker process while the task runs (all its threads: the stage's and the profiler's,
measured inside the worker) is kept, every run printed. On 2 cores with two stages running,
the profiler's CPU is taken from the other stage. Prints seconds and the ratios. Example:
``python bench/bench_dask_profiler.py --loops 30000000 --repeats 3``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time


def _deep(depth: int, loops: int) -> int:
    if depth:
        return _deep(depth - 1, loops)
    total = 0
    for i in range(loops):
        total += i * i % 7
    return total


def timed_work(depth: int, loops: int) -> float:
    """CPU seconds of the whole process (all its threads: the profiler's too) while the loop
    runs ``depth`` frames down."""
    start = time.process_time()
    _deep(depth, loops)
    return time.process_time() - start


def on_cluster(profiler: bool, depth: int, loops: int) -> float:
    import dask
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.worker.profile.enabled": profiler}), \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                         dashboard_address=None, host="127.0.0.1") as cluster, \
            Client(cluster) as client:
        return client.submit(timed_work, depth, loops, pure=False).result()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loops", type=int, default=30_000_000,
                        help="iterations of the Python loop (default 30M, ~2 s)")
    parser.add_argument("--depth", type=int, default=80,
                        help="frames above the loop (default 80, a stage's depth)")
    parser.add_argument("--repeats", type=int, default=6, help="runs per way (median kept)")
    args = parser.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), args.depth + 200))

    ways = {"bare (no Dask)": lambda: timed_work(args.depth, args.loops),
            "Dask default (profiler on)": lambda: on_cluster(True, args.depth, args.loops),
            "stage cluster (profiler off)": lambda: on_cluster(False, args.depth, args.loops)}
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.repeats):
        for name, run in ways.items():
            times[name].append(run())
    print(f"{args.loops:,} loop iterations {args.depth} frames down "
          f"({platform.processor() or platform.machine()}, median of {args.repeats})")
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(f"  {name:30s} {median[name]:7.2f} s  ({', '.join(f'{v:.2f}' for v in values)})")
    bare = median["bare (no Dask)"]
    print(f"  profiler on / bare {median['Dask default (profiler on)'] / bare:.3f}; "
          f"profiler off / bare {median['stage cluster (profiler off)'] / bare:.3f}")


if __name__ == "__main__":
    main()
