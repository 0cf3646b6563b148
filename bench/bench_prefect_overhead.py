"""Benchmark: Prefect's overhead per task run -- the study flow vs the same functions called bare.

In one process, on the same parameters (``--profile``, default demo), each run cold in its own
fresh temp paths (every ``paths.*`` moved into a temp directory, so nothing is cached):

* **bare**: the study flow's body with every Prefect task and subflow call replaced by a plain
  call of its function. ``prefect.Task.__call__`` / ``.submit`` / ``.map`` / ``.with_options``
  and ``prefect.Flow.__call__`` are patched at class level inside a context manager (restored on
  exit), so every task object is covered, also ones imported inside functions and copies made by
  ``.with_options``: a call runs ``task.fn(...)``; ``.submit`` runs it at once and returns a
  finished future-like object whose ``.result()`` is the value; ``.map`` does that per element
  (``unmapped(...)`` arguments held constant). No Prefect run context exists, so artifact
  publishing is the no-op it is outside Prefect. Calls are counted.
* **prefect**: ``study(params=...)`` inside ``run_settings(paths.state)``, as ``qastress run``
  does (cache policy, persisted results, API state reports, logs, artifacts). Task runs and
  subflow runs are counted afterwards through the Prefect API.

Before timing: Prefect gets its own ``PREFECT_HOME`` in the temp directory (a fresh SQLite
database, not shared with other jobs), the ephemeral Prefect API server is started (timed and
reported separately: paid once per process), and, unless ``--no-warmup``, one untimed bare smoke
run imports the libraries, starts the JVM and loads the encoder, so neither timed run pays those
one-off costs for the other. Prints wall times, task runs, overhead in seconds, per task run (ms)
and as a percentage of the Prefect run (target < 5%), the order the runs were made in and the
time per flow. Also the CPU seconds of each run (this process and its worker processes, e.g. the
JVM worker, plus the API server process), which other jobs on the machine disturb less than wall
time -- but torch's OpenMP threads spin, and slow down badly, when the cores are oversubscribed
(``--set paraphrase.model.cpu_threads=1`` keeps the paraphraser training out of that).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _harness import (
    add_common_arguments,
    bench_params,
    flow_durations,
    isolated_workdir,
    load,
    machine,
    parse_sets,
    run_study,
    start_prefect_api,
    task_runs,
)


class _Done:
    """A finished stand-in for a ``PrefectFuture``: ``.result()`` returns the value."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def result(self, timeout: float | None = None, raise_on_failure: bool = True) -> Any:
        return self._value

    def wait(self, timeout: float | None = None) -> None:
        return None


@contextlib.contextmanager
def bare_prefect(counts: dict[str, int], flow_seconds: dict[str, float] | None = None,
                 task_seconds: dict[str, float] | None = None) -> Iterator[None]:
    """Inside: Prefect tasks and flows called as their plain functions; calls counted (and the
    seconds spent in each flow and task, by name, added to ``flow_seconds``/``task_seconds``)."""
    from prefect import Flow, Task
    from prefect.utilities.annotations import BaseAnnotation

    saved = {(cls, name): cls.__dict__[name] for cls, name in (
        (Task, "__call__"), (Task, "submit"), (Task, "map"), (Task, "with_options"),
        (Flow, "__call__"))}

    def call(self, *args, **kwargs):
        counts["task"] = counts.get("task", 0) + 1
        start = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            if task_seconds is not None:
                task_seconds[self.name] = (task_seconds.get(self.name, 0.0)
                                           + time.perf_counter() - start)

    def submit(self, *args, wait_for=None, **kwargs):
        return _Done(call(self, *args, **kwargs))

    def map_(self, *args, wait_for=None, **kwargs):
        def mapped(value):
            return isinstance(value, list | tuple)

        lengths = {len(v) for v in (*args, *kwargs.values()) if mapped(v)}
        if len(lengths) > 1:
            raise ValueError(f"mapped arguments of different lengths: {sorted(lengths)}")

        def pick(value, i):
            if isinstance(value, BaseAnnotation):
                return value.unwrap()
            return value[i] if mapped(value) else value

        n = lengths.pop() if lengths else 0
        return [_Done(call(self, *[pick(a, i) for a in args],
                           **{k: pick(v, i) for k, v in kwargs.items()})) for i in range(n)]

    def with_options(self, *args, name=None, **kwargs):
        if name is None:  # retries, cache settings, ...: nothing a bare call uses
            return self
        renamed = copy.copy(self)  # the name only labels the timings
        renamed.name = name
        return renamed

    def flow_call(self, *args, **kwargs):
        counts["flow"] = counts.get("flow", 0) + 1
        start = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            if flow_seconds is not None:
                flow_seconds[self.name] = (flow_seconds.get(self.name, 0.0)
                                           + time.perf_counter() - start)

    Task.__call__, Task.submit, Task.map, Task.with_options = call, submit, map_, with_options
    Flow.__call__ = flow_call
    try:
        yield
    finally:
        for (cls, name), value in saved.items():
            setattr(cls, name, value)


def server_cpu_seconds() -> float:
    """CPU seconds used so far by the ephemeral API server process (and its children)."""
    from prefect.server.api.server import SubprocessASGIServer

    process = SubprocessASGIServer().server_process
    if process is None:
        return 0.0
    try:
        import psutil

        server = psutil.Process(process.pid)
        total = sum(server.cpu_times()[:2])
        for child in server.children(recursive=True):
            total += sum(child.cpu_times()[:2])
        return total
    except Exception:  # psutil missing or the process gone: fall back to /proc
        try:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return float("nan")


def worker_cpu_seconds() -> float:
    """CPU seconds of this process's child processes other than the API server (e.g. the JVM
    worker that runs Pyserini): live ones through psutil, finished ones through getrusage."""
    import resource

    from prefect.server.api.server import SubprocessASGIServer

    total = sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])
    server = SubprocessASGIServer().server_process
    try:
        import psutil

        for child in psutil.Process().children(recursive=True):
            if server is not None and child.pid == server.pid:
                continue
            with contextlib.suppress(psutil.Error):
                if server is None or child.ppid() != server.pid:
                    total += sum(child.cpu_times()[:2])
    except ImportError:
        pass
    return total


@contextlib.contextmanager
def cpu_meter(into: dict[str, float]) -> Iterator[None]:
    """CPU seconds of this process (all threads) and its workers, and of the API server."""
    process, server = time.process_time() + worker_cpu_seconds(), server_cpu_seconds()
    yield
    into["process"] = time.process_time() + worker_cpu_seconds() - process
    into["server"] = server_cpu_seconds() - server


def run_bare(params, flow_seconds: dict[str, float] | None = None,
             task_seconds: dict[str, float] | None = None) -> tuple[float, dict[str, int]]:
    """The study with every task and subflow called bare: wall seconds and call counts."""
    from flows.study import study  # looked up at run time: its subflows as they are now
    from tasks.orchestration import run_settings

    counts: dict[str, int] = {}
    with run_settings(params.paths.state), bare_prefect(counts, flow_seconds, task_seconds):
        start = time.perf_counter()
        study(params=params)
        seconds = time.perf_counter() - start
    return seconds, counts


def warm_up(root: Path) -> float:
    """One untimed bare smoke run: imports, JVM start, encoder load. Seconds it took."""
    import importlib
    import pkgutil

    from models.flair_import import import_flair

    start = time.perf_counter()
    for package in ("flows", "tasks", "models"):
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, prefix=f"{package}."):
            with contextlib.suppress(Exception):
                importlib.import_module(info.name)
    with contextlib.suppress(ImportError):
        import_flair()  # the demo profile's adversarial taggers; smoke skips them
    run_bare(bench_params(root, "smoke"))
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(
        parser, "params profile of both timed runs: demo (default, ~6 min per run on 2 cores) "
        "or smoke (seconds, a quick check)", "override a parameter for both runs (repeatable)")
    parser.add_argument("--order", choices=("bare-first", "prefect-first"),
                        default="bare-first",
                        help="which timed run goes first (default: bare-first, so the Prefect "
                             "run's asynchronous event tail cannot slow the bare run)")
    parser.add_argument("--no-warmup", action="store_true",
                        help="skip the untimed bare smoke warm-up run")
    args = parser.parse_args(argv)

    work = isolated_workdir("qastress-bench-overhead-", args.workdir, args.keep)
    overrides = parse_sets(args.sets)
    try:
        print(f"machine: {machine()}", flush=True)
        print(f"load average (1/5/15 min) at start: {load()}", flush=True)
        api_s, _ = start_prefect_api()
        print(f"Prefect API start-up (ephemeral server, once per process): {api_s:.1f} s",
              flush=True)
        if not args.no_warmup:
            print(f"warm-up: bare smoke run, untimed: {warm_up(work / 'warmup'):.1f} s",
                  flush=True)
        order = ["bare", "prefect"] if args.order == "bare-first" else ["prefect", "bare"]
        wall: dict[str, float] = {}
        loads: dict[str, str] = {}
        cpu: dict[str, dict[str, float]] = {}
        bare_flows: dict[str, float] = {}
        bare_tasks: dict[str, float] = {}
        bare_counts: dict[str, int] = {}
        prefect_state = None
        for name in order:
            params = bench_params(work / name, args.profile, overrides)
            print(f"--- {name} run ({args.profile}) under {work / name}", flush=True)
            cpu[name] = {}
            with cpu_meter(cpu[name]):
                if name == "bare":
                    wall[name], bare_counts = run_bare(params, bare_flows, bare_tasks)
                else:
                    wall[name], prefect_state = run_study(params)
            loads[name] = load()
            print(f"--- {name} run: {wall[name]:.1f} s; load average after: {loads[name]}",
                  flush=True)
        records, n_flows = task_runs(prefect_state.state_details.flow_run_id)
        n_tasks = len(records)
        not_completed = sorted({(r.task, r.state) for r in records if r.state != "Completed"})

        overhead = wall["prefect"] - wall["bare"]
        print()
        print(f"profile: {args.profile}; order: {' then '.join(order)} "
              f"({'no warm-up' if args.no_warmup else 'after an untimed bare smoke warm-up'}); "
              "each run cold in its own temp paths")
        print(f"{'run':<9}{'wall (s)':>10}{'CPU (s)':>9}{'API CPU':>9}{'task runs':>11}"
              f"{'flow runs':>11}  load after")
        print(f"{'bare':<9}{wall['bare']:>10.1f}{cpu['bare']['process']:>9.1f}"
              f"{cpu['bare']['server']:>9.1f}{bare_counts.get('task', 0):>11}"
              f"{bare_counts.get('flow', 0):>11}  {loads['bare']}")
        print(f"{'prefect':<9}{wall['prefect']:>10.1f}{cpu['prefect']['process']:>9.1f}"
              f"{cpu['prefect']['server']:>9.1f}{n_tasks:>11}{n_flows:>11}  {loads['prefect']}")
        if bare_counts.get("task", 0) != n_tasks:
            print(f"note: task calls in the bare run ({bare_counts.get('task', 0)}) != task runs "
                  f"recorded by Prefect ({n_tasks})")
        if not_completed:
            print(f"note: task runs not in state Completed: {not_completed}")
        per_task = overhead / n_tasks if n_tasks else float("nan")
        print(f"overhead: {overhead:+.1f} s = {1000 * per_task:+.0f} ms per task run = "
              f"{100 * overhead / wall['prefect']:+.2f}% of the Prefect run (target < 5%)")
        print(f"ratio prefect/bare: {wall['prefect'] / wall['bare']:.3f}")
        cpu_total = {name: sum(cpu[name].values()) for name in cpu}
        cpu_overhead = cpu_total["prefect"] - cpu_total["bare"]
        print(f"CPU time (this process + API server): {cpu_overhead:+.1f} s = "
              f"{1000 * cpu_overhead / n_tasks if n_tasks else float('nan'):+.0f} ms per task run "
              f"= {100 * cpu_overhead / cpu_total['prefect']:+.2f}% of the Prefect run's CPU "
              "(less sensitive to other jobs' load than wall time)")
        print(f"with the one-off API start-up ({api_s:.1f} s): {overhead + api_s:+.1f} s = "
              f"{100 * (overhead + api_s) / (wall['prefect'] + api_s):+.2f}% of the run")
        prefect_flows = flow_durations(prefect_state.state_details.flow_run_id)
        print("per flow (s; a subflow's time is also in its parent's; Prefect: run start to end):")
        print(f"  {'flow':<24}{'bare':>8}{'prefect':>9}{'diff':>8}")
        for flow_name in sorted(set(bare_flows) | set(prefect_flows),
                                key=lambda n: -prefect_flows.get(n, 0.0)):
            b = bare_flows.get(flow_name, float("nan"))
            p = prefect_flows.get(flow_name, float("nan"))
            print(f"  {flow_name:<24}{b:>8.1f}{p:>9.1f}{p - b:>+8.1f}")
        prefect_tasks: dict[str, float] = {}
        for r in records:
            prefect_tasks[r.task] = prefect_tasks.get(r.task, 0.0) + r.seconds
        inside = sum(prefect_tasks.values()) - sum(bare_tasks.values())
        print(f"inside task runs (Prefect: each run's start to end; bare: the call): "
              f"{sum(bare_tasks.values()):.1f} s bare, {sum(prefect_tasks.values()):.1f} s Prefect "
              f"({inside:+.1f} s); outside them: {overhead - inside:+.1f} s")
        print("tasks with the largest differences (s, summed over runs of the name):")
        print(f"  {'task':<40}{'bare':>8}{'prefect':>9}{'diff':>8}")
        names = set(bare_tasks) | set(prefect_tasks)
        for task_name in sorted(names, key=lambda n: -abs(prefect_tasks.get(n, 0.0)
                                                          - bare_tasks.get(n, 0.0)))[:10]:
            b, p = bare_tasks.get(task_name, 0.0), prefect_tasks.get(task_name, 0.0)
            print(f"  {task_name[:40]:<40}{b:>8.1f}{p:>9.1f}{p - b:>+8.1f}")
        by_task: dict[str, int] = {}
        for r in records:
            by_task[r.task] = by_task.get(r.task, 0) + 1
        median = statistics.median(by_task.values()) if by_task else 0
        print(f"task runs by name ({len(by_task)} names, median {median:.0f} runs per name): "
              + ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(by_task.items())))
    finally:
        if args.keep:
            print(f"kept {work}")


if __name__ == "__main__":
    main()
