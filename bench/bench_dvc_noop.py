"""Benchmark: a no-op ``dvc repro`` (and ``dvc status``) vs the cold ``dvc repro`` of the DAG.

Makes a scratch git + DVC project in a temp directory holding this project's ``dvc.yaml``,
``.dvcignore``, ``params.yaml`` (switched to ``--profile``, default demo) and the source folders
the stages depend on (``tasks``, ``flows``, ``models`` and any other project path named as a
dependency in ``dvc.yaml``). Every ``paths.*`` is relative, so all outputs (data, results,
metrics, plots, reports and the Prefect task cache ``.qastress``) land inside the scratch
project. The stages run ``python -m flows.cli stage <flow>`` (``qastress stage`` of this
checkout, as ``dvc.yaml`` says), each in its own
process with its own ephemeral Prefect API; Prefect gets a ``PREFECT_HOME`` in the temp
directory, whose database is created (migrated) before timing.

Times, in order: ``dvc repro`` cold (every stage runs), ``dvc repro`` again ``--repeats`` times
(nothing to do; median reported, and checked that no stage ran), and ``dvc status``
``--repeats`` times (median). Prints the times and the no-op/cold ratio.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import PROJECT_ROOT, add_common_arguments, load

ALWAYS_COPIED = ("tasks", "flows", "models")


def project_dependencies(dvc_yaml: dict) -> set[str]:
    """Top-level project files/folders that ``dvc.yaml`` stages depend on (not ``${paths}``)."""
    found = set(ALWAYS_COPIED)
    for stage in (dvc_yaml.get("stages") or {}).values():
        for dep in stage.get("deps") or []:
            dep = next(iter(dep)) if isinstance(dep, dict) else str(dep)
            if "${" in dep:
                continue
            top = Path(dep).parts[0]
            if (PROJECT_ROOT / top).exists():
                found.add(top)
    return found


def environment(prefect_home: Path) -> dict[str, str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               PREFECT_HOME=str(prefect_home))
    env.pop("PREFECT_API_URL", None)
    env.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "300")
    env.setdefault("DO_NOT_TRACK", "1")
    env.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    return env


def run(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Run a command; (wall seconds, stdout + stderr). Exits on failure."""
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    output = done.stdout + done.stderr
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed (exit {done.returncode}):\n{output[-4000:]}")
    return seconds, output


def make_project(root: Path, profile: str, env: dict[str, str]) -> list[str]:
    """The scratch git + DVC project; returns what was copied into it."""
    import yaml

    dvc_yaml = yaml.safe_load((PROJECT_ROOT / "dvc.yaml").read_text())
    copied = ["dvc.yaml", ".dvcignore", "params.yaml"]
    root.mkdir(parents=True)
    for name in ("dvc.yaml", ".dvcignore"):
        shutil.copy(PROJECT_ROOT / name, root / name)
    for top in sorted(project_dependencies(dvc_yaml)):
        source = PROJECT_ROOT / top
        if source.is_dir():
            shutil.copytree(source, root / top,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(source, root / top)
        copied.append(top + ("/" if source.is_dir() else ""))
    params = yaml.safe_load((PROJECT_ROOT / "params.yaml").read_text())
    params["profile"] = profile
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    for command in (["git", "init", "-q"], ["dvc", "init", "-q"],
                    ["dvc", "config", "core.analytics", "false"],
                    ["dvc", "config", "core.check_update", "false"]):
        run(command, root, env)
    return copied


def prime_prefect(root: Path, env: dict[str, str]) -> float:
    """Create and migrate the Prefect database once (a user's is already there); seconds."""
    code = ("import tasks\nfrom prefect.client.orchestration import get_client\n"
            "with get_client(sync_client=True) as c:\n    c.hello()\n")
    seconds, _ = run([sys.executable, "-c", code], PROJECT_ROOT, env)
    return seconds


def dvc_version(env: dict[str, str]) -> str:
    _, out = run(["dvc", "--version"], PROJECT_ROOT, env)
    return out.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser, "params profile of the scratch project: demo (default; the "
                         "cold repro takes several minutes on 2 cores) or smoke (a quick check)",
                         keep_help="keep the scratch project")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed no-op `dvc repro` and `dvc status` runs each (median)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if shutil.which("dvc", path=str(Path(sys.executable).parent)) is None:
        raise SystemExit("dvc is not installed next to this Python (pip install -e '.[dev]')")

    work = Path(tempfile.mkdtemp(prefix="qastress-bench-dvc-", dir=args.workdir))
    root = work / "project"
    env = environment(work / "prefect-home")
    try:
        print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, python "
              f"{platform.python_version()}, dvc {dvc_version(env)}", flush=True)
        print(f"load average (1/5/15 min) at start: {load()}", flush=True)
        copied = make_project(root, args.profile, env)
        print(f"scratch project {root} ({args.profile}): {', '.join(copied)}", flush=True)
        print(f"Prefect database created (untimed): {prime_prefect(work, env):.1f} s", flush=True)

        print("--- dvc repro (cold)", flush=True)
        cold, output = run(["dvc", "repro"], root, env)
        ran = [line.split("'")[1] for line in output.splitlines()
               if line.startswith("Running stage '")]
        cold_load = load()
        print(f"--- cold: {cold:.1f} s, {len(ran)} stages ran ({', '.join(ran)}); "
              f"load average after: {cold_load}", flush=True)

        noop: list[float] = []
        for _ in range(args.repeats):
            seconds, output = run(["dvc", "repro"], root, env)
            if "Running stage" in output:
                raise SystemExit(f"the second `dvc repro` ran stages:\n{output[-4000:]}")
            noop.append(seconds)
        up_to_date = "Data and pipelines are up to date" in output
        status: list[float] = []
        for _ in range(args.repeats):
            seconds, output = run(["dvc", "status"], root, env)
            status.append(seconds)
        status_clean = "up to date" in output
        end_load = load()

        def fmt(xs: list[float]) -> str:
            return " ".join(f"{x:.2f}" for x in xs)

        print()
        print(f"profile: {args.profile}; {len(ran)} stages; {args.repeats} repeats of the "
              "no-op commands")
        print(f"{'command':<26}{'wall (s)':>10}  runs (s)")
        print(f"{'dvc repro (cold)':<26}{cold:>10.1f}")
        print(f"{'dvc repro (no-op, median)':<26}{statistics.median(noop):>10.2f}  {fmt(noop)}")
        print(f"{'dvc status (median)':<26}{statistics.median(status):>10.2f}  {fmt(status)}")
        print(f"no-op repro reports 'Data and pipelines are up to date': {up_to_date}; "
              f"dvc status reports up to date: {status_clean}")
        print(f"ratio no-op repro / cold repro: {statistics.median(noop) / cold:.4f} "
              f"({100 * statistics.median(noop) / cold:.2f}%)")
        print(f"ratio dvc status / cold repro:  {statistics.median(status) / cold:.4f}")
        print(f"load average after cold repro: {cold_load}; at the end: {end_load}")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
