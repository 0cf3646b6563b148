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

The script restarts itself once with the JVM's ``libjsig.so`` preloaded (``--no-jsig``: not), a
safeguard: PyTorch Lightning's signal teardown resets SIGSEGV to ``SIG_DFL``, which removes the
JVM's own handler and kills a process that runs Pyserini after the paraphraser training (the
project now keeps the JVM in a worker process, see ``tasks/retrieval/jvm.py``).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]
PATH_KEYS = ("data", "results", "metrics", "plots", "reports", "state")


def bench_params(root: Path, profile: str, overrides: dict[str, Any] | None = None):
    """The profile's params with every ``paths.*`` inside ``root`` (as the smoke tests do)."""
    from tasks.config import load_params

    moved = {f"paths.{name}": str(root / name) for name in PATH_KEYS}
    return load_params(PROJECT_ROOT / "params.yaml", profile=profile,
                       overrides={**(overrides or {}), **moved})


def parse_sets(items: list[str]) -> dict[str, Any]:
    """``["a.b=1"]`` -> ``{"a.b": 1}`` (values parsed as YAML, like ``qastress --set``)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out


class _Done:
    """A finished stand-in for a ``PrefectFuture``: ``.result()`` returns the value."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def result(self, timeout: float | None = None, raise_on_failure: bool = True) -> Any:
        return self._value

    def wait(self, timeout: float | None = None) -> None:
        return None


@contextlib.contextmanager
def bare_prefect(counts: dict[str, int],
                 flow_seconds: dict[str, float] | None = None) -> Iterator[None]:
    """Inside: Prefect tasks and flows called as their plain functions; calls counted (and the
    seconds spent in each flow, by flow name, added to ``flow_seconds``)."""
    from prefect import Flow, Task
    from prefect.utilities.annotations import BaseAnnotation

    saved = {(cls, name): cls.__dict__[name] for cls, name in (
        (Task, "__call__"), (Task, "submit"), (Task, "map"), (Task, "with_options"),
        (Flow, "__call__"))}

    def call(self, *args, **kwargs):
        counts["task"] = counts.get("task", 0) + 1
        return self.fn(*args, **kwargs)

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

    def with_options(self, *args, **kwargs):
        return self  # names, retries, cache settings: nothing a bare call uses

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


def study_flow():
    """The study flow, whatever subflows it calls now (looked up at run time)."""
    from flows.study import study

    return study


def start_prefect_api() -> float:
    """Start the ephemeral Prefect API (once per process); seconds it took."""
    from prefect.client.orchestration import get_client

    start = time.perf_counter()
    with get_client(sync_client=True) as client:
        client.hello()
    return time.perf_counter() - start


def flow_run_tree(client, root_id) -> list:
    """The flow run ``root_id`` and every (sub)flow run under it."""
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    runs, frontier = [client.read_flow_run(root_id)], [root_id]
    while frontier:
        children = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=frontier)))
        runs.extend(children)
        frontier = [run.id for run in children]
    return runs


def task_run_states(flow_run_id, settle_s: float = 60.0) -> tuple[list[tuple[str, str]], int]:
    """``([(task name, state name)], number of flow runs)`` over the run and its subflows.

    The placeholder task runs that stand for subflows in their parent are left out. Prefect 3
    records task runs from events, asynchronously: polls until two reads agree (or ``settle_s``).
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter

    def read() -> tuple[list[tuple[str, str]], int]:
        with get_client(sync_client=True) as client:
            flows = flow_run_tree(client, flow_run_id)
            placeholders = {run.parent_task_run_id for run in flows}
            states: list[tuple[str, str]] = []
            page = 200
            for run in flows:
                offset = 0
                while True:
                    batch = client.read_task_runs(
                        flow_run_filter=FlowRunFilter(id={"any_": [run.id]}), limit=page,
                        offset=offset)
                    states.extend((t.name.rsplit("-", 1)[0], t.state.name if t.state else "?")
                                  for t in batch if t.id not in placeholders)
                    if len(batch) < page:
                        break
                    offset += page
        return sorted(states), len(flows)

    deadline = time.monotonic() + settle_s
    previous = read()
    while time.monotonic() < deadline:
        time.sleep(2.0)
        current = read()
        if current == previous and all(s not in ("Pending", "Running", "?")
                                       for _, s in current[0]):
            return current
        previous = current
    return previous


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


def flow_durations(flow_run_id) -> dict[str, float]:
    """Seconds from start to end of each (sub)flow run of the tree, summed by flow name."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        names = {f.id: f.name for f in client.read_flows()}
        seconds: dict[str, float] = {}
        for run in flow_run_tree(client, flow_run_id):
            if run.start_time and run.end_time:
                name = names.get(run.flow_id, "?")
                seconds[name] = (seconds.get(name, 0.0)
                                 + (run.end_time - run.start_time).total_seconds())
    return seconds


def run_bare(params, flow_seconds: dict[str, float] | None = None
             ) -> tuple[float, dict[str, int]]:
    from tasks.orchestration import run_settings

    counts: dict[str, int] = {}
    study = study_flow()
    with run_settings(params.paths.state), bare_prefect(counts, flow_seconds):
        start = time.perf_counter()
        study(params=params)
        seconds = time.perf_counter() - start
    return seconds, counts


def run_prefect(params) -> tuple[float, Any]:
    from tasks.orchestration import run_settings

    study = study_flow()
    with run_settings(params.paths.state):
        start = time.perf_counter()
        state = study(params=params, return_state=True)
        seconds = time.perf_counter() - start
    if not state.is_completed():
        raise SystemExit(f"the Prefect study run did not complete: {state}")
    return seconds, state


def warm_up(root: Path) -> float:
    """One untimed bare smoke run: imports, JVM start, encoder load. Seconds it took."""
    import importlib
    import pkgutil

    start = time.perf_counter()
    for package in ("flows", "tasks", "models"):
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, prefix=f"{package}."):
            with contextlib.suppress(Exception):
                importlib.import_module(info.name)
    with contextlib.suppress(ImportError):
        import flair  # noqa: F401  (the demo profile's adversarial taggers; smoke skips them)
    run_bare(bench_params(root, "smoke"))
    return time.perf_counter() - start


def libjsig() -> Path | None:
    """The JVM's signal-chaining library of the Java runtime Pyserini will use (or ``None``)."""
    from tasks.retrieval.jvm import choose_java_home

    home = choose_java_home()
    for candidate in (home / "lib" / "libjsig.so", home / "lib" / "server" / "libjsig.so"):
        if candidate.is_file():
            return candidate
    return None


def reexec_with_jsig() -> None:
    """Restart this process with the JVM's ``libjsig.so`` preloaded (once).

    PyTorch Lightning's ``Trainer`` (the paraphraser training) restores, on teardown, every signal
    to the handler *Python* knew before -- ``SIG_DFL`` for SIGSEGV/SIGBUS -- which removes the
    JVM's own native handlers; the JVM relies on catching SIGSEGV (implicit null checks,
    safepoints), so a later Pyserini call in the same process (the paraphrased-retrieval flow)
    can kill it with a segmentation fault. ``libjsig`` (JVM signal chaining) keeps the JVM's
    handlers installed and chains the others behind them.
    """
    if "libjsig" in os.environ.get("LD_PRELOAD", ""):
        return
    library = libjsig()
    if library is None:
        print("warning: no libjsig.so in the Java runtime: the JVM may crash after Lightning "
              "training (see --no-jsig)", flush=True)
        return
    preload = " ".join(filter(None, [str(library), os.environ.get("LD_PRELOAD")]))
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "LD_PRELOAD": preload})


def machine() -> str:
    import torch

    return (f"{platform.platform()}, {os.cpu_count()} CPUs, python "
            f"{platform.python_version()}, torch {torch.__version__} "
            f"({torch.get_num_threads()} threads), prefect {_prefect_version()}")


def _prefect_version() -> str:
    import prefect

    return prefect.__version__


def load() -> str:
    return "/".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="demo",
                        help="params profile of both timed runs: demo (default, ~6 min per run "
                             "on 2 cores) or smoke (seconds, a quick check)")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="override a parameter for both runs (repeatable)")
    parser.add_argument("--order", choices=("bare-first", "prefect-first"),
                        default="bare-first",
                        help="which timed run goes first (default: bare-first, so the Prefect "
                             "run's asynchronous event tail cannot slow the bare run)")
    parser.add_argument("--no-warmup", action="store_true",
                        help="skip the untimed bare smoke warm-up run")
    parser.add_argument("--workdir", type=Path,
                        help="parent of the temp directory (default: the system temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the temp directory")
    parser.add_argument("--no-jsig", action="store_true",
                        help="do not restart with the JVM's libjsig.so preloaded (without it the "
                             "JVM can segfault after the paraphraser's Lightning training)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(PROJECT_ROOT))
    if not args.no_jsig:
        reexec_with_jsig()

    work = Path(tempfile.mkdtemp(prefix="qastress-bench-overhead-", dir=args.workdir))
    os.environ["PREFECT_HOME"] = str(work / "prefect-home")  # before Prefect is imported
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "300")  # migrations
    os.environ.pop("PREFECT_API_URL", None)
    if not args.keep:  # registered first, so it runs after the API server's own exit handler
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    import tasks  # noqa: F401  (offline/telemetry environment before Prefect is imported)

    overrides = parse_sets(args.sets)
    try:
        print(f"machine: {machine()}", flush=True)
        print(f"load average (1/5/15 min) at start: {load()}", flush=True)
        print("JVM signal chaining (LD_PRELOAD libjsig.so): "
              f"{'on' if 'libjsig' in os.environ.get('LD_PRELOAD', '') else 'off'}", flush=True)
        api_s = start_prefect_api()
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
        bare_counts: dict[str, int] = {}
        prefect_state = None
        for name in order:
            params = bench_params(work / name, args.profile, overrides)
            print(f"--- {name} run ({args.profile}) under {work / name}", flush=True)
            cpu[name] = {}
            with cpu_meter(cpu[name]):
                if name == "bare":
                    wall[name], bare_counts = run_bare(params, bare_flows)
                else:
                    wall[name], prefect_state = run_prefect(params)
            loads[name] = load()
            print(f"--- {name} run: {wall[name]:.1f} s; load average after: {loads[name]}",
                  flush=True)
        states, n_flows = task_run_states(prefect_state.state_details.flow_run_id)
        n_tasks = len(states)
        not_completed = sorted({(n, s) for n, s in states if s != "Completed"})

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
        by_task: dict[str, int] = {}
        for task_name, _ in states:
            by_task[task_name] = by_task.get(task_name, 0) + 1
        median = statistics.median(by_task.values()) if by_task else 0
        print(f"task runs by name ({len(by_task)} names, median {median:.0f} runs per name): "
              + ", ".join(f"{k} x{v}" if v > 1 else k for k, v in sorted(by_task.items())))
    finally:
        if args.keep:
            print(f"kept {work}")


if __name__ == "__main__":
    main()
