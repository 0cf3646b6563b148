"""`dvc repro` runs the slice's DAG; a second `dvc repro` runs nothing.

Runs in a scratch git + DVC repository holding this project's dvc.yaml, params.yaml (switched to
the smoke profile) and the source folders the stages depend on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path) -> str:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("PREFECT_API_URL", None)
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def dvc_project(tmp_path_factory) -> Path:
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
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    _run(["git", "init", "-q"], root)
    _run(["dvc", "init", "-q"], root)
    _run(["dvc", "config", "core.analytics", "false"], root)
    _run(["dvc", "config", "core.check_update", "false"], root)
    return root


def test_dvc_repro_runs_the_slice_then_is_a_noop(dvc_project):
    first = _run(["dvc", "repro"], dvc_project)
    for stage in ("demo_world", "bm25_index", "entity_questions", "retrieval", "paraphrase",
                  "paraphrased_retrieval"):
        assert f"Running stage '{stage}'" in first, first
    metrics = json.loads((dvc_project / "metrics" / "retrieval_bm25.json").read_text())
    assert len(metrics["per_relation"]) == 24
    assert (dvc_project / "dvc.lock").exists()

    second = _run(["dvc", "repro"], dvc_project)
    assert "Running stage" not in second, second
    assert "Data and pipelines are up to date" in second, second
