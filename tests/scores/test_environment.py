"""The package versions recorded with expected scores: constraints.txt agrees with pyproject.toml
and with every packaged expected file that records versions; an update records the installed
versions; the check names each package that differs; bad records and constraint lines are named."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from typer.testing import CliRunner

from flows.cli import app
from tasks.scores.environment import (
    TRANSITIVE_NUMERICS,
    ConstraintsError,
    Drift,
    describe_drift,
    drift,
    installed_versions,
    read_constraints,
    recorded_packages,
    recorded_versions,
)
from tasks.scores.expected import (
    EXPECTED_DIR,
    ExpectedScoresError,
    load_expected,
    parse_expected,
)
from tasks.scores.machine_variants import load_variant, variant_paths

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
runner = CliRunner()


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = [line for group in project["optional-dependencies"].values() for line in group]
    return [Requirement(line) for line in [*project["dependencies"], *extras]]


def test_constraints_satisfy_every_requirement_of_pyproject():
    pins = read_constraints(CONSTRAINTS)
    ray_only = {"prefect-ray"}  # the optional Ray runner is not in the development venv
    for requirement in _requirements():
        name = canonicalize_name(requirement.name)
        if name in ray_only:
            continue
        assert name in pins, f"constraints.txt pins no version of {requirement.name}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt: {name}=={pins[name]} does not satisfy pyproject's {requirement}")


def test_constraints_hold_every_recorded_package():
    pins = read_constraints(CONSTRAINTS)
    missing = [name for name in recorded_packages() if name not in pins]
    assert not missing, f"recorded packages that constraints.txt does not pin: {missing}"


def _packaged_records() -> list[tuple[str, dict[str, str]]]:
    records = []
    for base in sorted(EXPECTED_DIR.glob("*.yaml")):
        if "@" in base.stem:
            continue
        records.append((base.name, dict(load_expected(base).packages)))
        records += [(path.name, dict(load_variant(path).packages))
                    for path in variant_paths(base)]
    return records


def test_packaged_expected_files_record_the_versions_of_constraints_txt():
    """A file that records versions was pinned in the environment of constraints.txt: a change
    of the constraints must come with re-pinned numbers (or those files lose their record)."""
    pins = read_constraints(CONSTRAINTS)
    recorded = [(name, packages) for name, packages in _packaged_records() if packages]
    assert recorded, "no packaged expected file records its package versions"
    for name, packages in recorded:
        differing = {package: (version, pins.get(package))
                     for package, version in packages.items() if pins.get(package) != version}
        assert not differing, f"{name} was pinned with other versions than constraints.txt's: " \
                              f"{differing}"


def test_recorded_packages_are_the_runtime_requirements_and_the_named_indirect_ones():
    names = recorded_packages()
    assert names == sorted(names)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = {canonicalize_name(Requirement(line).name) for line in project["dependencies"]}
    assert set(names) == runtime | {canonicalize_name(n) for n in TRANSITIVE_NUMERICS}
    assert "pytest" not in names and "ruff" not in names  # extras are not recorded


def test_an_uninstalled_project_records_only_the_named_indirect_packages():
    """A source tree run without ``pip install`` has no metadata: the record falls back to the
    indirect numerics instead of failing the check."""
    names = recorded_packages("no-such-project-qastress")
    assert names == sorted(canonicalize_name(n) for n in TRANSITIVE_NUMERICS)


def test_installed_versions_drop_the_local_label_and_name_absent_packages():
    versions = installed_versions(["torch", "numpy", "no-such-package-qastress"])
    assert versions["torch"] is not None and "+" not in versions["torch"]
    assert versions["no-such-package-qastress"] is None
    assert set(recorded_versions()) <= set(recorded_packages())


def test_drift_lists_changed_and_missing_packages_by_name():
    recorded = {"numpy": "2.4.6", "Faker": "40.1.0", "scipy": "1.17.1"}
    installed = {"numpy": "2.5.0", "faker": "40.1.0", "scipy": None, "extra-one": "1.0"}
    assert drift(recorded, installed) == [Drift("numpy", "2.4.6", "2.5.0"),
                                          Drift("scipy", "1.17.1", None)]
    text = describe_drift("demo.yaml", recorded, installed)
    assert "2 of 3" in text and "numpy 2.4.6 -> 2.5.0" in text
    assert "scipy 1.17.1 -> (not installed)" in text and "-c constraints.txt" in text
    assert "installed here" in describe_drift("demo.yaml", {"numpy": "2"}, {"numpy": "2"})
    assert "records no package versions" in describe_drift("old.yaml", {}, installed)


@pytest.mark.parametrize(("text", "message"), [
    ("numpy>=2\n", r"x.txt:1: expected `name==version`"),
    ("# header\nnumpy==2.4.6\n-e .\n", r"x.txt:3: expected"),
    ("numpy==2.4.6\nNumPy==2.4.7\n", r"x.txt:2: numpy is pinned twice"),
])
def test_bad_constraint_lines_are_named(tmp_path, text, message):
    path = tmp_path / "x.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConstraintsError, match=message):
        read_constraints(path)


def test_constraints_parse_comments_and_names():
    pins = read_constraints(CONSTRAINTS)
    assert pins["torch"] == "2.13.0"  # the CPU build's local label is dropped there too
    assert pins["pytorch-lightning"]  # names are canonical


@pytest.mark.parametrize("packages", [["numpy"], {"numpy": 2.4}, {"numpy": ""}])
def test_bad_package_records_are_named(packages):
    with pytest.raises(ExpectedScoresError, match="x.yaml: `packages` must map"):
        parse_expected({"profile": "smoke", "scores": {}, "packages": packages}, "x.yaml")


def _metrics(folder: Path, content: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "retrieval_bm25.json").write_text(json.dumps(content), encoding="utf-8")
    return folder


def test_an_update_records_the_installed_versions_and_the_check_reports_drift(tmp_path):
    metrics = _metrics(tmp_path / "metrics", {"macro": {"top20": 80.0}})
    expected = tmp_path / "smoke.yaml"
    args = ["check-scores", "--profile", "smoke", "--metrics", str(metrics),
            "--expected", str(expected), "--machine", "none"]
    assert runner.invoke(app, [*args, "--update"]).exit_code == 0
    text = expected.read_text(encoding="utf-8")
    assert text.index("scores:") < text.index("packages:")  # written after the scores
    assert load_expected(expected).packages == recorded_versions()
    same = runner.invoke(app, args)
    assert same.exit_code == 0
    assert "smoke.yaml: pinned with the" in same.output and "installed here" in same.output

    raw = yaml.safe_load(text)
    raw["packages"]["numpy"] = "0.0.1"
    expected.write_text(yaml.safe_dump(raw), encoding="utf-8")
    drifted = runner.invoke(app, args)
    assert drifted.exit_code == 0  # the numbers still pass; the difference is reported
    assert f"numpy 0.0.1 -> {installed_versions(['numpy'])['numpy']}" in drifted.output

    del raw["packages"]
    expected.write_text(yaml.safe_dump(raw), encoding="utf-8")
    legacy = runner.invoke(app, args)
    assert "smoke.yaml records no package versions" in legacy.output
    assert runner.invoke(app, [*args, "--update"]).exit_code == 0
    assert load_expected(expected).packages == recorded_versions()


def test_a_variant_update_records_versions_too(tmp_path):
    base_metrics = _metrics(tmp_path / "first", {"macro": {"top20": 80.0}})
    expected = tmp_path / "demo.yaml"
    common = ["check-scores", "--profile", "demo", "--expected", str(expected)]
    runner.invoke(app, [*common, "--metrics", str(base_metrics), "--machine", "none",
                        "--update"])
    variant = tmp_path / "demo@amd-epyc.yaml"
    variant.write_text("profile: demo\nmachine: AMD EPYC*\nscores: {}\n", encoding="utf-8")
    amd = _metrics(tmp_path / "amd", {"macro": {"top20": 81.0}})
    result = runner.invoke(app, [*common, "--metrics", str(amd), "--machine", "AMD EPYC",
                                 "--update"])
    assert result.exit_code == 0, result.output
    assert load_variant(variant).packages == recorded_versions()
    check = runner.invoke(app, [*common, "--metrics", str(amd), "--machine", "AMD EPYC"])
    assert check.exit_code == 0
    assert "demo.yaml: pinned with the" in check.output
    assert "demo@amd-epyc.yaml: pinned with the" in check.output
    assert "# Note:" not in variant.read_text(encoding="utf-8")  # the base's versions, too


def test_a_variant_of_a_base_without_versions_says_its_numbers_may_be_the_environment(
        tmp_path):
    expected = tmp_path / "demo.yaml"
    expected.write_text("profile: demo\nscores:\n  retrieval_bm25.json#/macro/top20: 80.0\n",
                        encoding="utf-8")
    variant = tmp_path / "demo@amd-epyc.yaml"
    variant.write_text("profile: demo\nmachine: AMD EPYC*\nscores: {}\n", encoding="utf-8")
    amd = _metrics(tmp_path / "amd", {"macro": {"top20": 81.0}})
    result = runner.invoke(app, ["check-scores", "--profile", "demo", "--expected",
                                 str(expected), "--metrics", str(amd), "--machine", "AMD EPYC",
                                 "--update"])
    assert result.exit_code == 0, result.output
    text = variant.read_text(encoding="utf-8")
    assert "# Note: the base file records no package versions" in text
    assert load_variant(variant).scores == {"retrieval_bm25.json#/macro/top20": 81.0}
