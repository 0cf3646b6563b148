"""Benchmark: a fully cached rerun of the study vs its cold run (Prefect task cache).

In one process, on one configuration (``--profile``, default demo) with every ``paths.*`` in a
fresh temp directory: the ephemeral Prefect API is started (timed, reported apart: paid once per
process), then ``study(params=...)`` runs inside ``run_settings(paths.state)`` as ``qastress
run`` does -- cold (nothing cached; includes the process's one-off imports, JVM start and model
loads), then again with every result in the cache. Prints both wall times and their fraction
(target <= 5%), and lists the task runs of the second run that were NOT served from cache
(state other than ``Cached``), read through the Prefect API over the study flow run and all its
subflow runs.

Unless ``--no-cli-rerun``, a third, cached run is made the way a user makes it: ``python -m
flows.cli run`` in a new process (imports, parameter loading, flow run), pointed at the already
running API through ``PREFECT_API_URL`` (so the API start-up printed above is not in it).

Prefect gets its own ``PREFECT_HOME`` in the temp directory (a fresh database, not shared with
other jobs on the machine).

The script restarts itself once with the JVM's ``libjsig.so`` preloaded (``--no-jsig``: not), a
safeguard: PyTorch Lightning's signal teardown resets SIGSEGV to ``SIG_DFL``, which removes the
JVM's own handler and kills a process that runs Pyserini after the paraphraser training (the
project now keeps the JVM in a worker process, see ``tasks/retrieval/jvm.py``).
"""

from __future__ import annotations

import argparse
import atexit
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]
PATH_KEYS = ("data", "results", "metrics", "plots", "reports", "state")
TARGET = 0.05


def path_overrides(root: Path) -> dict[str, str]:
    return {f"paths.{name}": str(root / name) for name in PATH_KEYS}


def bench_params(root: Path, profile: str, overrides: dict[str, Any] | None = None):
    """The profile's params with every ``paths.*`` inside ``root`` (as the smoke tests do)."""
    from tasks.config import load_params

    return load_params(PROJECT_ROOT / "params.yaml", profile=profile,
                       overrides={**(overrides or {}), **path_overrides(root)})


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


def start_prefect_api() -> tuple[float, str]:
    """Start the ephemeral Prefect API (once per process); seconds it took and its URL."""
    from prefect.client.orchestration import get_client

    start = time.perf_counter()
    with get_client(sync_client=True) as client:
        client.hello()
        url = str(client.api_url)
    return time.perf_counter() - start, url.rstrip("/")


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


def task_run_states(flow_run_id, settle_s: float = 60.0) -> list[tuple[str, str, str]]:
    """``[(flow name, task name, state name)]`` over the run and its subflow runs.

    The placeholder task runs that stand for subflows in their parent are left out. Prefect 3
    records task runs from events, asynchronously: polls until two reads agree (or ``settle_s``).
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter

    def read() -> list[tuple[str, str, str]]:
        with get_client(sync_client=True) as client:
            flows = flow_run_tree(client, flow_run_id)
            placeholders = {run.parent_task_run_id for run in flows}
            flow_names = {f.id: f.name for f in client.read_flows()}
            states: list[tuple[str, str, str]] = []
            page = 200
            for run in flows:
                offset = 0
                while True:
                    batch = client.read_task_runs(
                        flow_run_filter=FlowRunFilter(id={"any_": [run.id]}), limit=page,
                        offset=offset)
                    states.extend((flow_names.get(run.flow_id, "?"),
                                   t.name.rsplit("-", 1)[0], t.state.name if t.state else "?")
                                  for t in batch if t.id not in placeholders)
                    if len(batch) < page:
                        break
                    offset += page
        return sorted(states)

    deadline = time.monotonic() + settle_s
    previous = read()
    while time.monotonic() < deadline:
        time.sleep(2.0)
        current = read()
        if current == previous and all(s not in ("Pending", "Running", "?")
                                       for *_, s in current):
            return current
        previous = current
    return previous


def latest_study_run_id():
    """The id of the newest ``study`` flow run known to the API."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowFilter
    from prefect.client.schemas.sorting import FlowRunSort

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_filter=FlowFilter(name={"any_": ["study"]}),
                                     sort=FlowRunSort.EXPECTED_START_TIME_DESC, limit=1)
    return runs[0].id if runs else None


def run_study(params) -> tuple[float, Any]:
    """``study(params=...)`` inside ``run_settings(paths.state)``: seconds and final state."""
    from flows.study import study
    from tasks.orchestration import run_settings

    with run_settings(params.paths.state):
        start = time.perf_counter()
        state = study(params=params, return_state=True)
        seconds = time.perf_counter() - start
    if not state.is_completed():
        raise SystemExit(f"the study run did not complete: {state}")
    return seconds, state


def run_cli(root: Path, profile: str, sets: list[str], api_url: str) -> float:
    """``python -m flows.cli run`` in a new process on the same paths; its wall seconds."""
    command = [sys.executable, "-m", "flows.cli", "run", "--profile", profile]
    for item in [*sets, *(f"{k}={v}" for k, v in path_overrides(root).items())]:
        command += ["--set", item]
    env = dict(os.environ, PREFECT_API_URL=api_url)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return seconds


def not_cached(states: list[tuple[str, str, str]]) -> list[str]:
    return [f"{flow} / {name}: {state}" for flow, name, state in states if state != "Cached"]


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
    import prefect
    import torch

    return (f"{platform.platform()}, {os.cpu_count()} CPUs, python "
            f"{platform.python_version()}, torch {torch.__version__} "
            f"({torch.get_num_threads()} threads), prefect {prefect.__version__}")


def load() -> str:
    return "/".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="demo",
                        help="params profile: demo (default, ~6 min cold on 2 cores) or smoke "
                             "(a quick check)")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="override a parameter (repeatable; values parsed as YAML)")
    parser.add_argument("--no-cli-rerun", action="store_true",
                        help="skip the cached rerun through `python -m flows.cli run`")
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

    work = Path(tempfile.mkdtemp(prefix="qastress-bench-rerun-", dir=args.workdir))
    os.environ["PREFECT_HOME"] = str(work / "prefect-home")  # before Prefect is imported
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "300")  # migrations
    os.environ.pop("PREFECT_API_URL", None)
    if not args.keep:  # registered first, so it runs after the API server's own exit handler
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    import tasks  # noqa: F401  (offline/telemetry environment before Prefect is imported)

    params = bench_params(work / "run", args.profile, parse_sets(args.sets))
    print(f"machine: {machine()}", flush=True)
    print(f"load average (1/5/15 min) at start: {load()}", flush=True)
    print("JVM signal chaining (LD_PRELOAD libjsig.so): "
          f"{'on' if 'libjsig' in os.environ.get('LD_PRELOAD', '') else 'off'}", flush=True)
    api_s, api_url = start_prefect_api()
    print(f"Prefect API start-up (ephemeral server, once per process): {api_s:.1f} s", flush=True)

    wall: dict[str, float] = {}
    loads: dict[str, str] = {}
    states: dict[str, list[tuple[str, str, str]]] = {}
    for name in ("cold", "cached"):
        print(f"--- {name} run ({args.profile}) under {work / 'run'}", flush=True)
        wall[name], state = run_study(params)
        loads[name] = load()
        print(f"--- {name} run: {wall[name]:.1f} s; load average after: {loads[name]}",
              flush=True)
        states[name] = task_run_states(state.state_details.flow_run_id)
    if not args.no_cli_rerun:
        print("--- cached run through `python -m flows.cli run` (new process)", flush=True)
        wall["cli"] = run_cli(work / "run", args.profile, args.sets, api_url)
        loads["cli"] = load()
        print(f"--- cli run: {wall['cli']:.1f} s; load average after: {loads['cli']}",
              flush=True)
        run_id = latest_study_run_id()
        states["cli"] = task_run_states(run_id) if run_id else []

    print()
    print(f"profile: {args.profile}; paths under {work / 'run'}; one process, cold run first")
    print(f"{'run':<34}{'wall (s)':>10}{'task runs':>11}{'Cached':>8}{'fraction':>10}"
          "  load after")
    labels = {"cold": "cold (nothing cached)", "cached": "rerun, same process",
              "cli": "rerun, new process (flows.cli run)"}
    for name in wall:
        cached = sum(1 for *_, s in states[name] if s == "Cached")
        print(f"{labels[name]:<34}{wall[name]:>10.1f}{len(states[name]):>11}{cached:>8}"
              f"{wall[name] / wall['cold']:>10.4f}  {loads[name]}")
    fraction = wall["cached"] / wall["cold"]
    print(f"cached rerun / cold: {100 * fraction:.2f}% (target <= {100 * TARGET:.0f}%: "
          f"{'met' if fraction <= TARGET else 'NOT met'})")
    if "cli" in wall:
        print(f"new-process rerun / cold: {100 * wall['cli'] / wall['cold']:.2f}% (the API "
              f"start-up, {api_s:.1f} s here, comes on top when no server is running)")
    if any(s == "Cached" for *_, s in states["cold"]):
        print(f"note: cold run had cache hits: {[x for x in states['cold'] if x[2] == 'Cached']}")
    for name in ("cached", "cli"):
        if name in states:
            missed = not_cached(states[name])
            print(f"task runs NOT served from cache in the {labels[name]} ({len(missed)}):")
            for line in missed or ["(none)"]:
                print(f"  {line}")
    if args.keep:
        print(f"kept {work}")


if __name__ == "__main__":
    main()
