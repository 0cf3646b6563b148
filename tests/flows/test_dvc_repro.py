"""`dvc repro` runs the study's DAG; a second `dvc repro` runs nothing; outputs go to a local
DVC remote and come back; `dvc exp run -S` sweeps a parameter.

Runs in a scratch git + DVC repository holding this project's dvc.yaml, params.yaml (switched to
the smoke profile) and the source folders the stages depend on. As the README's workflow does,
a `qastress server up` server (on a free port) answers for the module: every stage process
reports to it instead of starting a temporary API of its own (~4 s per stage on 2 cores; the
temporary API is tested by `qastress run` in test_study_flow and test_temporary_api).
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


def _registry_stages() -> list[str]:
    """Every stage of the registry (dvc.yaml is generated from it; all run on the demo world)."""
    from tasks.pipeline.stages import STAGES

    return [stage.name for stage in STAGES]


@pytest.fixture(scope="module")
def reproduced(dvc_project) -> str:
    """The first `dvc repro` of the scratch project (its output). Its timeout only stops a
    hang: the whole DAG takes ~400 s alone on 2 cores, and went past 900 s there when the test
    ran beside the concurrent study of test_study_flow (Session 30)."""
    return _run(["dvc", "repro"], dvc_project, timeout=2400)


def test_dvc_repro_runs_the_dag_then_is_a_noop(dvc_project, reproduced):
    for stage in _registry_stages():
        assert f"Running stage '{stage}'" in reproduced, reproduced
    metrics = json.loads((dvc_project / "metrics" / "retrieval_bm25.json").read_text())
    assert len(metrics["per_relation"]) == 24
    assert (dvc_project / "dvc.lock").exists()
    assert (dvc_project / "reports" / "report.html").stat().st_size > 0

    second = _run(["dvc", "repro"], dvc_project)
    assert "Running stage" not in second, second
    assert "Data and pipelines are up to date" in second, second
    shown = _run(["dvc", "metrics", "show", "--json"], dvc_project)
    assert "retrieval_bm25.json" in shown and "macro" in shown
    _run(["dvc", "plots", "show", "-o", "dvc_plots"], dvc_project)
    page = (dvc_project / "dvc_plots" / "index.html").read_text(encoding="utf-8")
    assert "retrieval_accuracy_vs_k" in page and "retrieval_buckets" in page


def test_outputs_round_trip_through_a_local_remote(dvc_project, reproduced, tmp_path):
    remote = tmp_path / "dvc-remote"
    _run(["dvc", "remote", "add", "-f", "-d", "local", str(remote)], dvc_project)
    _run(["dvc", "push"], dvc_project)
    assert any(remote.rglob("*")), "dvc push stored nothing"
    questions = dvc_project / "data" / "entityquestions" / "questions.parquet"
    before = questions.read_bytes()
    shutil.rmtree(dvc_project / "data" / "entityquestions")
    shutil.rmtree(dvc_project / ".dvc" / "cache")
    _run(["dvc", "pull"], dvc_project)  # only the remote has the data now
    assert questions.read_bytes() == before


def test_exp_run_sweeps_a_parameter(dvc_project, reproduced):
    _run(["git", "add", "-A"], dvc_project)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "baseline"],
         dvc_project)
    # a parameter of one late, quick stage: only that stage and the report depend on it
    out = _run(["dvc", "exp", "run", "-S", "retrieve_then_read.confidence=0.9"], dvc_project)
    assert "Running stage 'retrieve_then_read'" in out and "Running stage 'report'" in out, out
    for untouched in ("entity_questions", "retrieval", "readers"):
        assert f"Running stage '{untouched}'" not in out, out
    metrics = json.loads((dvc_project / "metrics" / "retrieve_then_read.json").read_text())
    assert metrics["confidence"] == 0.9
    shown = _run(["dvc", "exp", "show", "--json"], dvc_project)
    assert '"confidence": 0.9' in shown, shown[-2000:]  # recorded with the experiment


def test_editing_a_module_reruns_exactly_the_stages_that_import_it(dvc_project, reproduced):
    """Code deps come from the flows' imports: a module only the paraphrased-retrieval flow
    imports makes that stage stale and no other; the demo world's package data the stages that
    read it (the world, and the offline Flair taggers trained on its prose)."""
    cases = {"tasks/retrieval/paraphrased.py": {"paraphrased_retrieval"},
             "tasks/demo/data/prose.json": {"demo_world", "paraphrase",
                                                   "augment_non_adversarial",
                                                   "augment_adversarial"}}
    for name, stages in cases.items():
        path = dvc_project / name
        before = path.read_bytes()
        try:
            path.write_bytes(before + b"\n")
            status = json.loads(_run(["dvc", "status", "--json"], dvc_project))
            stale = {stage for stage, changes in status.items()
                     if any(name in str(change) for change in changes)}
            assert stale == stages, status
        finally:
            path.write_bytes(before)
