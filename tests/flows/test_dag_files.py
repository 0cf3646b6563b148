"""dvc.yaml and prefect.yaml are generated from the stage registry; the committed ones are
current; `qastress dag check` fails on a stale copy and `qastress dag write` mends it."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from typer.testing import CliRunner

from flows.cli import app
from tasks.pipeline.dag_files import (
    DAG_FILES,
    plotted_retrievers,
    render_dvc,
    render_prefect,
    stale_dag_files,
)
from tasks.pipeline.stages import STAGES

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_committed_files_equal_the_generated_ones():
    stale = stale_dag_files(ROOT)
    assert not stale, "run `qastress dag write`:\n" + "\n".join(stale.values())


def test_dvc_yaml_has_one_stage_per_registry_entry_with_code_deps():
    dvc = yaml.safe_load(render_dvc(ROOT))
    assert list(dvc["stages"]) == [s.name for s in STAGES]
    retrieval = dvc["stages"]["retrieval"]
    assert retrieval["cmd"] == "python -m flows.cli stage retrieval"
    assert {"flows/retrieval.py", "tasks/retrieval/fusion.py", "tasks/evaluation/topk.py",
            "${paths.data}/indexes/bm25"} <= set(retrieval["deps"])
    assert {"${paths.metrics}/retrieval_bm25.json": {"cache": False}} in retrieval["metrics"]
    assert "${paths.data}/indexes/dense" in retrieval["outs"]  # data: in the DVC cache
    assert dvc["stages"]["report"]["params"] == [{"params.yaml": None}]
    demo = dvc["stages"]["demo_world"]["deps"]
    assert "tasks/demo/data/lexicon.json" in demo and "tasks/paraphrase/text.py" not in demo
    assert len(dvc["plots"]) == 2


def test_the_top_k_plot_lists_the_retrievers_of_the_params_files_profile(tmp_path, monkeypatch):
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    monkeypatch.setenv("QASTRESS_PROFILE", "real")  # the file decides, not the environment
    shown = {}
    for profile in ("demo", "smoke"):
        (tmp_path / "params.yaml").write_text(yaml.safe_dump({**params, "profile": profile}))
        shown[profile] = plotted_retrievers(tmp_path)
    assert shown == {"demo": ("bm25", "hybrid", "dpr-nq"),
                     "smoke": ("bm25", "dense", "hybrid", "dpr-nq")}
    (series,) = yaml.safe_load(render_dvc(ROOT))["plots"][0].values()
    assert series["y"] == {"plots/retrieval_accuracy_vs_k.csv": list(plotted_retrievers(ROOT))}


def test_prefect_yaml_deploys_the_study_and_every_stage():
    deployments = yaml.safe_load(render_prefect())["deployments"]
    assert [(d["entrypoint"], d["name"]) for d in deployments] == [
        ("flows/study.py:study", "demo"), ("flows/study.py:study", "smoke"),
        ("flows/study.py:study", "demo-large"), *[(s.entrypoint, "demo") for s in STAGES]]
    assert all(d["work_pool"]["name"] == "qastress-process" for d in deployments)
    assert deployments[1]["parameters"] == {"profile": "smoke"}
    assert deployments[2]["parameters"] == {"profile": "demo-large"}


def test_dag_check_fails_on_a_stale_copy_and_write_mends_it(tmp_path):
    for name in ("flows", "tasks", "models"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "params.yaml"):  # dvc.yaml's plots read params.yaml
        shutil.copy(ROOT / name, tmp_path / name)
    for name in DAG_FILES:
        shutil.copy(ROOT / name, tmp_path / name)
    assert runner.invoke(app, ["dag", "check", "--root", str(tmp_path)]).exit_code == 0

    # a flow module starts using another module: its stage's deps must change
    flow = tmp_path / "flows" / "report.py"
    flow.write_text(flow.read_text(encoding="utf-8") + "\nimport tasks.retrieval.fusion\n",
                    encoding="utf-8")
    result = runner.invoke(app, ["dag", "check", "--root", str(tmp_path)])
    assert result.exit_code == 1 and "dvc.yaml: STALE" in result.output
    assert "+      - tasks/retrieval/fusion.py" in result.output

    result = runner.invoke(app, ["dag", "write", "--root", str(tmp_path)])
    assert result.exit_code == 0 and "dvc.yaml: written" in result.output
    assert "prefect.yaml: unchanged" in result.output
    assert runner.invoke(app, ["dag", "check", "--root", str(tmp_path)]).exit_code == 0
    report = yaml.safe_load((tmp_path / "dvc.yaml").read_text())["stages"]["report"]
    assert "tasks/retrieval/fusion.py" in report["deps"]
