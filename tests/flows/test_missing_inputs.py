"""A stage run before the stages it reads from: one clear error naming the missing input and
what makes it (the stage to run first, or the data to fetch), raised before any work, and
`qastress` prints it as one line with exit code 2."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows._params import raw_files, raw_input
from flows.cli import app
from tasks.io.errors import MissingInputError
from tasks.params_loading import load_params

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEMO_HINT = r"run `qastress stage demo-world` first"


@pytest.fixture
def empty_project(tmp_path, monkeypatch):
    """The smoke profile in an empty directory (every path in params.yaml is relative)."""
    monkeypatch.chdir(tmp_path)
    return load_params(PROJECT_ROOT / "params.yaml", profile="smoke")


def test_a_missing_raw_input_names_its_path_and_how_to_get_it(empty_project, tmp_path):
    with pytest.raises(MissingInputError, match=r"data/raw/wikipedia/psgs_w100\.tsv: no such "
                       r"file \(sources\.passages\); the demo world writes it: " + DEMO_HINT):
        raw_input(empty_project, "passages")
    real = load_params(PROJECT_ROOT / "params.yaml", profile="real")
    with pytest.raises(MissingInputError, match=r"fetch it with `qastress data fetch "
                       r"dpr-wikipedia`, or point sources\.passages in params\.yaml"):
        raw_input(real, "passages")
    with pytest.raises(MissingInputError, match=r"ppdb-2\.0-xl-all: no such file .*fetch it "
                       r"with `qastress data fetch ppdb --option size=xl`"):
        raw_input(real, "ppdb")
    with pytest.raises(MissingInputError, match=r"no file matches sources\.trex; the demo "):
        raw_files(empty_project, "trex", [])
    # each half of the demo world is its own stage: the hint names the one that writes it
    with pytest.raises(MissingInputError, match=r"ppdb-2\.0-s-all: no such file .*the demo "
                       r"world writes it: run `qastress stage demo-reading-world` first"):
        raw_input(empty_project, "ppdb")
    present = tmp_path / "data" / "raw" / "squad" / "dev-v1.1.json"
    present.parent.mkdir(parents=True)
    present.write_text("{}")
    assert raw_input(empty_project, "squad_dev") == Path("data/raw/squad/dev-v1.1.json")


@pytest.mark.parametrize(("module", "flow", "missing"), [
    ("flows.bm25_index", "bm25_index", "sources.passages"),
    ("flows.entity_questions", "entity_questions", "sources.entity_labels"),
    ("flows.train_retriever", "train_retriever", "sources.passages"),
    ("flows.paraphrase", "paraphrase", "sources.squad_dev"),
    ("flows.train_reader", "train_reader", "sources.squad_train"),
    ("flows.retrieval", "retrieval", "no trained retriever at"),
    ("flows.readers", "readers", r"paraphrasing-squad: no paraphrased sets; run `qastress "
     r"stage paraphrase` first"),
    ("flows.paraphrased_retrieval", "paraphrased_retrieval", r"no paraphrased sets; run "
     r"`qastress stage paraphrase`"),
    ("flows.retrieve_then_read", "retrieve_then_read", r"retrieval\.retrievers \[.*\]: no "
     r"<relation>\.<retriever>\.json under .*run `qastress stage retrieval` first"),
    ("flows.augment_reader", "augment_non_adversarial", r"no PPDB table at .*run the "
     r"paraphrase stage first"),
    ("flows.reader_augmentation", "reader_augmentation", r"no trained reader"),
])
def test_stages_fail_first_naming_the_missing_input(empty_project, tmp_path, module, flow,
                                                    missing):
    """Called as plain functions (``.fn``, no Prefect): the error comes before any task, so
    nothing is written."""
    import importlib

    fn = getattr(importlib.import_module(module), flow).fn
    with pytest.raises(MissingInputError, match=missing):
        fn(params=empty_project)
    assert not any(path.is_file() for path in tmp_path.rglob("*"))


def test_the_cli_prints_one_line_and_exits_2(monkeypatch):
    import flows.cli as cli
    import tasks.distribution

    def stage(params, **kwargs):
        raise MissingInputError("data/x: no such file (sources.x); run the demo world")

    monkeypatch.setattr(cli, "load_flow", lambda name: stage)
    monkeypatch.setattr(tasks.distribution, "shared_api",
                        lambda orchestration: contextlib.nullcontext("http://api"))
    result = CliRunner().invoke(app, ["stage", "bm25-index", "--profile", "smoke"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1] == (
        "error: data/x: no such file (sources.x); run the demo world")
    assert "Traceback" not in result.output
