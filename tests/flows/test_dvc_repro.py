"""`dvc repro retrieval` runs that stage and every stage it reads from, and a second one runs
nothing; outputs go to a local DVC remote and come back; `dvc exp run -S` sweeps a parameter;
editing a module makes exactly the stages that import it stale.

Runs in a scratch git + DVC repository holding this project's dvc.yaml, params.yaml (switched to
the smoke profile) and the source folders the stages depend on. As the README's workflow does,
a `qastress server up` server (on a free port) answers for the module: every stage process
reports to it instead of starting a temporary API of its own (~4 s per stage on 2 cores; the
temporary API is tested by `qastress run` in test_study_flow and test_temporary_api).

The default run reproduces the first five stages (`retrieval` and its upstream, ~2 minutes
alone on 2 cores): what DVC does per stage (run the stage's command, hash its outputs, lock it)
is the same for every stage, and every stage's flow and outputs are run and checked by the
study in test_study_flow.py (the registry that dvc.yaml is generated from). The whole DAG, 16
stages (~7 minutes alone), runs under ``-m slow``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tasks.distribution import free_port

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path, timeout: float = 900) -> str:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("PREFECT_API_URL", None)
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def dvc_project(tmp_path_factory) -> Iterator[Path]:
    if shutil.which("dvc", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("dvc is not installed in this environment")
    root = tmp_path_factory.mktemp("dvcproj")
    for name in ("dvc.yaml", ".dvcignore"):
        shutil.copy(PROJECT_ROOT / name, root / name)
    for folder in ("tasks", "flows", "models"):
        shutil.copytree(PROJECT_ROOT / folder, root / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    params = yaml.safe_load((PROJECT_ROOT / "params.yaml").read_text())
    params["profile"] = "smoke"
    params["orchestration"]["server"]["port"] = free_port()
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (root / ".gitignore").write_text(f"/{params['paths']['state']}/\n")  # server DB, task cache
    _run(["git", "init", "-q"], root)
    _run(["dvc", "init", "-q"], root)
    _run(["dvc", "config", "core.analytics", "false"], root)
    _run(["dvc", "config", "core.check_update", "false"], root)
    _run(["qastress", "server", "up"], root)
    yield root
    _run(["qastress", "server", "down"], root)


#: The stage the default run reproduces with everything upstream of it.
TARGET = "retrieval"


def _registry_stages() -> list[str]:
    """Every stage of the registry (dvc.yaml is generated from it; all run on the demo world)."""
    from tasks.pipeline.stages import STAGES

    return [stage.name for stage in STAGES]


def _target_and_upstream() -> list[str]:
    """The stages `dvc repro TARGET` must run, by the registry's edges (DVC finds its own from
    dvc.yaml's deps and outs: the test checks that the two agree)."""
    from tasks.pipeline.stage_graph import with_upstream
    from tasks.pipeline.stages import STAGES

    return [stage.name for stage in with_upstream(STAGES, [TARGET])]


def _ran(output: str) -> set[str]:
    """The stages a `dvc repro` / `dvc exp run` output says it ran."""
    return {stage for stage in _registry_stages() if f"Running stage '{stage}'" in output}


@pytest.fixture(scope="module")
def reproduced(dvc_project) -> str:
    """The first `dvc repro TARGET` of the scratch project (its output). Its timeout only stops
    a hang: it takes ~2 minutes alone on 2 cores, and over twice that beside other tests."""
    return _run(["dvc", "repro", TARGET], dvc_project, timeout=2400)


def test_dvc_repro_runs_a_stage_and_its_upstream_then_is_a_noop(dvc_project, reproduced):
    upstream = _target_and_upstream()
    assert upstream[0] == "demo_world" and upstream[-1] == TARGET and len(upstream) == 5
    assert _ran(reproduced) == set(upstream), reproduced
    metrics = json.loads((dvc_project / "metrics" / "retrieval_bm25.json").read_text())
    assert len(metrics["per_relation"]) == 24
    assert (dvc_project / "dvc.lock").exists()

    second = _run(["dvc", "repro", TARGET], dvc_project)
    assert "Running stage" not in second, second
    assert "Data and pipelines are up to date" in second, second
    shown = _run(["dvc", "metrics", "show", "--json"], dvc_project)
    assert "retrieval_bm25.json" in shown and "macro" in shown
    _run(["dvc", "plots", "show", "-o", "dvc_plots"], dvc_project)
    page = (dvc_project / "dvc_plots" / "index.html").read_text(encoding="utf-8")
    assert "retrieval_accuracy_vs_k" in page and "retrieval_buckets" in page


@pytest.mark.slow
def test_dvc_repro_runs_the_rest_of_the_dag_then_is_a_noop(dvc_project, reproduced):
    """The whole DAG: `dvc repro` runs every stage the first test did not, then nothing."""
    rest = _run(["dvc", "repro"], dvc_project, timeout=2400)
    assert _ran(rest) == set(_registry_stages()) - set(_target_and_upstream()), rest
    assert (dvc_project / "reports" / "report.html").stat().st_size > 0
    again = _run(["dvc", "repro"], dvc_project)
    assert "Running stage" not in again and "Data and pipelines are up to date" in again, again


def test_outputs_round_trip_through_a_local_remote(dvc_project, reproduced, tmp_path):
    remote = tmp_path / "dvc-remote"
    _run(["dvc", "remote", "add", "-f", "-d", "local", str(remote)], dvc_project)
    _run(["dvc", "push"], dvc_project)
    assert any(remote.rglob("*")), "dvc push stored nothing"
    questions = dvc_project / "data" / "entityquestions" / "questions.parquet"
    before = questions.read_bytes()
    shutil.rmtree(dvc_project / "data" / "entityquestions")
    shutil.rmtree(dvc_project / ".dvc" / "cache")
    _run(["dvc", "pull", "--with-deps", TARGET], dvc_project)  # only the remote has it now
    assert questions.read_bytes() == before


def test_editing_a_module_makes_exactly_the_stages_that_import_it_stale(dvc_project,
                                                                        reproduced):
    """Code deps come from the flows' imports, direct or not: of the five stages, the top-k
    metric module reaches the EntityQuestions flow (its DPR training JSON looks up the BM25
    hard negatives through tasks/retrieval/evaluate.py) and the retrieval flow; the demo
    world's package data only the world's stage; a module that only the paraphrased-retrieval
    flow imports none of them."""
    cases = {"tasks/evaluation/topk.py": {"entity_questions", "retrieval"},
             "tasks/demo/data/prose.json": {"demo_world"},
             "tasks/retrieval/paraphrased.py": set()}
    for name, stages in cases.items():
        path = dvc_project / name
        before = path.read_bytes()
        try:
            path.write_bytes(before + b"\n")
            status = json.loads(_run(["dvc", "status", "--json", "--with-deps", TARGET],
                                     dvc_project))
            stale = {stage for stage, changes in status.items()
                     if any(name in str(change) for change in changes)}
            assert stale == stages, status
        finally:
            path.write_bytes(before)


def test_exp_run_sweeps_a_parameter(dvc_project, reproduced):
    """Last in the file: the experiment's outputs stay in the workspace."""
    _run(["git", "add", "-A"], dvc_project)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "baseline"],
         dvc_project)
    # a parameter of a quick stage (~10 s): only that stage runs, the one upstream of it stays
    out = _run(["dvc", "exp", "run", "-S", "entity_questions.relations=[P19, P20]",
                "entity_questions"], dvc_project)
    assert _ran(out) == {"entity_questions"}, out
    metrics = json.loads((dvc_project / "metrics" / "entity_questions.json").read_text())
    assert set(metrics["questions"]) == {"P19", "P20"}
    shown = _run(["dvc", "exp", "show", "--json"], dvc_project)
    # recorded with the experiment (the baseline's list has all 24 relations)
    assert '"relations":["P19","P20"]' in "".join(shown.split()), shown[-2000:]
