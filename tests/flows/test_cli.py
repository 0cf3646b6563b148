"""The `qastress` command: fast help (no heavy imports), params, override parsing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from flows.cli import FLOWS, app, parse_overrides

PROJECT_ROOT = Path(__file__).resolve().parents[2]

runner = CliRunner()


def test_help_imports_no_heavy_library():
    code = ("import sys, flows.cli; heavy = [m for m in ('prefect', 'torch', 'pyserini', "
            "'flair', 'transformers', 'jnius') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=PROJECT_ROOT, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["stage", "--help"],
                                  ["data", "fetch", "--help"], ["params", "--help"]])
def test_every_command_has_help(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    assert "Usage" in result.output


def _commands(group, prefix=()):
    """Every command path of the click group behind ``app`` (``["data", "fetch"]``, ...)."""
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*prefix, name))
        else:
            yield [*prefix, name]


def test_help_paragraphs_are_reflowed_and_placeholders_kept():
    """A docstring's hard line breaks do not reach the help (no ragged short lines in a
    paragraph), and ``<placeholder>`` paths are printed, not swallowed as markup."""
    commands = list(_commands(typer.main.get_group(app)))
    assert ["check-scores"] in commands and ["data", "fetch"] in commands
    for command in commands:
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, (command, result.output)
        description = result.output.split("╭")[0].splitlines()
        paragraph: list[str] = []
        for line in [*description, ""]:
            if line.strip():
                paragraph.append(line.strip())
                continue
            for inner in paragraph[:-1]:
                assert len(inner) >= 50, (command, inner, result.output)
            paragraph = []
    checks = runner.invoke(app, ["check-scores", "--help"], env={"COLUMNS": "80"}).output
    assert "tasks/scores/expected/<profile>.yaml" in checks
    fetch = runner.invoke(app, ["data", "fetch", "--help"], env={"COLUMNS": "80"}).output
    assert "<data-root>/raw/<dir>/" in fetch


def test_params_command_shows_resolved_profile():
    result = runner.invoke(app, ["params", "--params", str(PROJECT_ROOT / "params.yaml"),
                                 "--profile", "smoke", "--set", "retrieval.bm25.k1=1.5"])
    assert result.exit_code == 0, result.output
    assert "profile: smoke" in result.output
    assert "k1: 1.5" in result.output


def test_bad_params_exit_2_with_key():
    result = runner.invoke(app, ["params", "--params", str(PROJECT_ROOT / "params.yaml"),
                                 "--set", "retrieval.bm25.threads=0"])
    assert result.exit_code == 2
    assert "retrieval.bm25.threads" in result.output


@pytest.mark.parametrize("command", [["serve"], ["server", "status"], ["params"],
                                     ["check-scores"], ["run"], ["stage", "retrieval"]])
def test_every_command_that_reads_params_refuses_a_bad_profile_in_one_line(command):
    result = runner.invoke(app, [*command, "--params", str(PROJECT_ROOT / "params.yaml"),
                                 "--profile", "nope"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("invalid parameters: ") and "not 'nope'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_server_port_out_of_range_is_refused():
    result = runner.invoke(app, ["server", "status", "--port", "99999"])
    assert result.exit_code == 2 and "less than or equal to 65535" in result.output


def test_parse_overrides():
    assert parse_overrides(["a.b=1", "c=x", "d=[1, 2]"]) == {"a.b": 1, "c": "x", "d": [1, 2]}
    with pytest.raises(typer.BadParameter):
        parse_overrides(["novalue"])
    with pytest.raises(typer.BadParameter, match=r"retrieval\.bm25\.k1: value '\[1' is not "
                       r"valid YAML \(expected ',' or '\]'"):
        parse_overrides(["retrieval.bm25.k1=[1"])
    with pytest.raises(typer.BadParameter, match=r"k1: value nested deeper than the YAML"):
        parse_overrides(["retrieval.bm25.k1=" + "[" * 50_000 + "]" * 50_000])


def test_a_missing_params_file_exits_2_instead_of_running_on_defaults(tmp_path, monkeypatch):
    """Outside the project (no ./params.yaml), or with a mistyped --params, nothing runs: the
    built-in defaults are not the profile asked for."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QASTRESS_PARAMS", raising=False)
    result = runner.invoke(app, ["params", "--profile", "smoke"])
    assert result.exit_code == 2
    assert f"params.yaml: no such params file in {tmp_path}: run from the project root" \
        in " ".join(result.output.split())
    result = runner.invoke(app, ["run", "--params", "nope.yaml"])
    assert result.exit_code == 2 and "nope.yaml: no such params file" in result.output
    assert not any(tmp_path.iterdir())  # nothing written


def test_run_until_an_unknown_stage_exits_2_naming_the_stages():
    result = runner.invoke(app, ["run", "--until", "retreival"])
    assert result.exit_code == 2
    assert "unknown stage 'retreival'" in result.output and "'retrieval'" in result.output


def test_run_until_takes_a_stage_as_dvc_or_qastress_stage_names_it(monkeypatch):
    """--until train-retriever (as `qastress stage` names it) is train_retriever (dvc.yaml)."""
    import flows.cli as cli

    seen = {}
    monkeypatch.setattr(cli, "run_flow", lambda name, *args, until=None: seen.update(
        flow=name, until=until))
    result = runner.invoke(app, ["run", "--until", "train-retriever", "-u", "retrieval"])
    assert result.exit_code == 0, result.output
    assert seen == {"flow": "study", "until": ["train_retriever", "retrieval"]}


def test_stage_takes_the_dvc_name_too(monkeypatch):
    """`qastress stage train_retriever` (dvc.yaml's name) runs train-retriever."""
    import flows.cli as cli

    seen = []
    monkeypatch.setattr(cli, "run_flow", lambda name, *args: seen.append(name))
    for given in ("train_retriever", "train-retriever"):
        assert runner.invoke(app, ["stage", given]).exit_code == 0
    assert seen == ["train-retriever", "train-retriever"]
    assert runner.invoke(app, ["stage", "train_retreiver"]).exit_code == 2


@pytest.mark.parametrize("name", list(FLOWS))
def test_a_flow_module_run_with_python_m_shows_its_own_usage(name, monkeypatch, capsys):
    """`python -m flows.<module> --help` names that module and its flow, not `qastress stage`."""
    import flows.cli as cli

    monkeypatch.setattr(sys, "argv", ["x", "--help"])
    with pytest.raises(SystemExit) as done:
        cli.main_for(name)
    out = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0
    assert f"Usage: python -m {FLOWS[name][0]} [OPTIONS]" in out
    assert f"the same as `qastress stage {name}`" in out
    assert cli.module_summary(FLOWS[name][0]).split()[0] in out  # the module's own summary


def test_a_flow_module_runs_its_flow_with_the_options(monkeypatch):
    import flows.cli as cli

    seen = []
    monkeypatch.setattr(cli, "run_flow", lambda *args: seen.append(args))
    monkeypatch.setattr(sys, "argv", ["x", "-p", "smoke", "--set", "seed=3"])
    with pytest.raises(SystemExit) as done:
        cli.main_for("retrieve_then_read")
    assert done.value.code == 0
    assert seen == [("retrieve-then-read", "smoke", None, {"seed": 3})]


def test_augment_reader_module_names_its_kind_in_the_usage():
    out = subprocess.run([sys.executable, "-m", "flows.augment_reader", "adversarial", "--help"],
                         capture_output=True, text=True, cwd=PROJECT_ROOT, check=True).stdout
    assert "Usage: python -m flows.augment_reader adversarial [OPTIONS]" in out
    assert "augment-adversarial" in out


def test_data_list_says_where_each_source_is_fetched_into():
    result = runner.invoke(app, ["data", "list"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    line = next(row for row in result.output.splitlines() if "dpr-wikipedia" in row)
    assert "raw/wikipedia/" in line


def test_dag_root_is_the_checkout_or_for_an_installed_copy_the_working_directory(
        tmp_path, monkeypatch):
    import flows.cli_checks as checks

    assert checks.default_root() == PROJECT_ROOT  # a checkout (editable install)
    monkeypatch.setattr(checks, "PROJECT_ROOT", tmp_path / "site-packages")  # no pyproject.toml
    monkeypatch.chdir(tmp_path)
    assert checks.default_root() == tmp_path
    for command in ("check", "write"):  # not a checkout: one line, nothing written
        result = runner.invoke(app, ["dag", command])
        assert result.exit_code == 2 and f"{tmp_path}: not a qastress checkout" in \
            " ".join(result.output.split())
    assert not any(tmp_path.iterdir())
