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
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from _harness import (
    PROJECT_ROOT,
    TaskRunRecord,
    add_common_arguments,
    bench_params,
    isolated_workdir,
    load,
    machine,
    parse_sets,
    path_overrides,
    run_study,
    start_prefect_api,
    task_runs,
)

TARGET = 0.05


def latest_study_run_id():
    """The id of the newest ``study`` flow run known to the API."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowFilter
    from prefect.client.schemas.sorting import FlowRunSort

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_filter=FlowFilter(name={"any_": ["study"]}),
                                     sort=FlowRunSort.EXPECTED_START_TIME_DESC, limit=1)
    return runs[0].id if runs else None


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


def not_cached(records: list[TaskRunRecord]) -> list[str]:
    """``flow / task: state`` for each task run that was not a cache hit."""
    return [f"{r.flow} / {r.task}: {r.state}" for r in records if r.state != "Cached"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(
        parser, "params profile: demo (default, ~6 min cold on 2 cores) or smoke (a quick check)",
        "override a parameter (repeatable; values parsed as YAML)")
    parser.add_argument("--no-cli-rerun", action="store_true",
                        help="skip the cached rerun through `python -m flows.cli run`")
    args = parser.parse_args(argv)

    work = isolated_workdir("qastress-bench-rerun-", args.workdir, args.keep)
    params = bench_params(work / "run", args.profile, parse_sets(args.sets))
    print(f"machine: {machine()}", flush=True)
    print(f"load average (1/5/15 min) at start: {load()}", flush=True)
    api_s, api_url = start_prefect_api()
    print(f"Prefect API start-up (ephemeral server, once per process): {api_s:.1f} s", flush=True)

    wall: dict[str, float] = {}
    loads: dict[str, str] = {}
    states: dict[str, list[TaskRunRecord]] = {}
    for name in ("cold", "cached"):
        print(f"--- {name} run ({args.profile}) under {work / 'run'}", flush=True)
        wall[name], state = run_study(params)
        loads[name] = load()
        print(f"--- {name} run: {wall[name]:.1f} s; load average after: {loads[name]}",
              flush=True)
        states[name], _ = task_runs(state.state_details.flow_run_id)
    if not args.no_cli_rerun:
        print("--- cached run through `python -m flows.cli run` (new process)", flush=True)
        wall["cli"] = run_cli(work / "run", args.profile, args.sets, api_url)
        loads["cli"] = load()
        print(f"--- cli run: {wall['cli']:.1f} s; load average after: {loads['cli']}",
              flush=True)
        run_id = latest_study_run_id()
        states["cli"] = task_runs(run_id)[0] if run_id else []

    print()
    print(f"profile: {args.profile}; paths under {work / 'run'}; one process, cold run first")
    print(f"{'run':<34}{'wall (s)':>10}{'task runs':>11}{'Cached':>8}{'fraction':>10}"
          "  load after")
    labels = {"cold": "cold (nothing cached)", "cached": "rerun, same process",
              "cli": "rerun, new process (flows.cli run)"}
    for name in wall:
        cached = sum(1 for r in states[name] if r.state == "Cached")
        print(f"{labels[name]:<34}{wall[name]:>10.1f}{len(states[name]):>11}{cached:>8}"
              f"{wall[name] / wall['cold']:>10.4f}  {loads[name]}")
    fraction = wall["cached"] / wall["cold"]
    print(f"cached rerun / cold: {100 * fraction:.2f}% (target <= {100 * TARGET:.0f}%: "
          f"{'met' if fraction <= TARGET else 'NOT met'})")
    if "cli" in wall:
        print(f"new-process rerun / cold: {100 * wall['cli'] / wall['cold']:.2f}% (the API "
              f"start-up, {api_s:.1f} s here, comes on top when no server is running)")
    hits = [f"{r.flow} / {r.task}" for r in states["cold"] if r.state == "Cached"]
    if hits:
        print(f"cache hits within the cold run (a task requested again with the same inputs): "
              f"{', '.join(hits)}")
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
