"""Machine variants of expected scores: the numbers another CPU family gives, beside the base
file. The check applies the variant whose CPU glob matches; an update there rewrites the variant
only; a variant cannot remove numbers; bad variant files are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from flows.cli import app
from tasks.scores.compare import ExpectedScores, Tolerance
from tasks.scores.expected import (
    EXPECTED_DIR,
    ExpectedScoresError,
    load_expected,
    updated_expected,
    write_expected,
)
from tasks.scores.machine_variants import (
    MachineVariant,
    environment_note,
    expected_on,
    load_variant,
    updated_variant,
    variant_for,
    variant_paths,
    with_variant,
)
from tasks.scores.metrics import read_metrics

runner = CliRunner()
TRAINED = {"ner_test_f1": 0.72908, "accepted": 12, "questions": 480}
ON_AMD = {"ner_test_f1": 0.72946, "accepted": 13, "questions": 480}


def _write_metrics(folder: Path, content: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "paraphrase.json").write_text(json.dumps(content), encoding="utf-8")
    return folder


def _base(tmp_path: Path) -> Path:
    """A base file pinned from ``TRAINED`` (tolerance 1e-4), as on the first machine."""
    metrics = read_metrics(_write_metrics(tmp_path / "first", TRAINED))
    path = tmp_path / "expected" / "demo.yaml"
    write_expected(path, updated_expected(metrics, "demo",
                                          ExpectedScores("demo", {}, Tolerance(1e-4), {})))
    return path


def _variant_file(base: Path, machine: str = "AMD EPYC*", scores: dict | None = None) -> Path:
    path = base.with_name("demo@amd-epyc.yaml")
    path.write_text(yaml.safe_dump({"profile": "demo", "machine": machine,
                                    "scores": scores or {}}), encoding="utf-8")
    return path


def _check(base: Path, metrics: Path, *extra: str):
    return runner.invoke(app, ["check-scores", "--profile", "demo", "--metrics", str(metrics),
                               "--expected", str(base), *extra])


def test_the_variant_matching_the_cpu_replaces_the_base_numbers(tmp_path):
    base = _base(tmp_path)
    _variant_file(base, scores={"paraphrase.json#/ner_test_f1": 0.72946,
                                "paraphrase.json#/accepted": 13})
    amd_run = _write_metrics(tmp_path / "amd", ON_AMD)
    on_amd = _check(base, amd_run, "--machine", "AMD EPYC 9B14")
    assert on_amd.exit_code == 0, on_amd.output
    assert "with its machine variant demo@amd-epyc.yaml (2 numbers" in on_amd.output
    assert "PASS: 3 equal" in on_amd.output
    for other in ("Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz", "none"):
        result = _check(base, amd_run, "--machine", other)  # the base alone: both differ
        assert result.exit_code == 1 and "2 regressed" in result.output
        assert "machine variant" not in result.output
    first_run = _write_metrics(tmp_path / "first", TRAINED)
    assert _check(base, first_run, "--machine", "Intel Xeon").exit_code == 0
    assert _check(base, first_run, "--machine", "AMD EPYC").exit_code == 1


def test_an_update_on_a_variant_machine_rewrites_the_variant_not_the_base(tmp_path):
    base = _base(tmp_path)
    base_text = base.read_text(encoding="utf-8")
    variant = _variant_file(base)  # a new family starts from an empty variant
    amd_run = _write_metrics(tmp_path / "amd", ON_AMD)
    updated = _check(base, amd_run, "--machine", "AMD EPYC", "--update")
    assert updated.exit_code == 0, updated.output
    assert "2 numbers that differ from demo.yaml" in updated.output
    assert base.read_text(encoding="utf-8") == base_text
    assert load_variant(variant).scores == {"paraphrase.json#/ner_test_f1": 0.72946,
                                            "paraphrase.json#/accepted": 13}
    assert variant.read_text(encoding="utf-8").startswith("# Machine variant of the `demo`")
    assert _check(base, amd_run, "--machine", "AMD EPYC").exit_code == 0

    closer = {**ON_AMD, "accepted": 12, "ner_test_f1": 0.729081}  # within the base's tolerance
    _write_metrics(amd_run, closer)
    assert _check(base, amd_run, "--machine", "AMD EPYC", "--update").exit_code == 0
    assert load_variant(variant).scores == {}  # nothing differs from the base any more
    assert base.read_text(encoding="utf-8") == base_text


def test_a_variant_cannot_remove_a_number_of_the_base(tmp_path):
    base = _base(tmp_path)
    variant = _variant_file(base)
    fewer = _write_metrics(tmp_path / "amd", {"ner_test_f1": 0.72946})
    result = _check(base, fewer, "--machine", "AMD EPYC", "--update")
    assert result.exit_code == 2
    assert "2 numbers of the base file are not in these metrics" in result.output
    assert load_variant(variant).scores == {}
    expected = load_expected(base)
    with pytest.raises(ExpectedScoresError, match="update the base file"):
        updated_variant(expected, load_variant(variant), read_metrics(fewer))


def test_the_first_matching_variant_by_file_name_applies(tmp_path):
    base = _base(tmp_path)
    _variant_file(base, machine="AMD EPYC*", scores={"paraphrase.json#/accepted": 13})
    base.with_name("demo@any.yaml").write_text(yaml.safe_dump(
        {"profile": "demo", "machine": "*", "scores": {"paraphrase.json#/accepted": 14}}))
    base.with_name("smoke@amd-epyc.yaml").write_text("not: a variant of demo\n")
    assert [p.name for p in variant_paths(base)] == ["demo@amd-epyc.yaml", "demo@any.yaml"]
    assert variant_for(base, "AMD EPYC 7B13").scores == {"paraphrase.json#/accepted": 13}
    assert variant_for(base, "Intel Xeon").scores == {"paraphrase.json#/accepted": 14}
    expected = with_variant(load_expected(base), variant_for(base, "Intel Xeon"))
    assert expected.scores["paraphrase.json#/accepted"] == 14
    assert expected.tolerance == load_expected(base).tolerance


@pytest.mark.parametrize(("content", "message"), [
    ("- a list\n", "expected a mapping with profile, machine, scores"),
    ("profile: demo\nmachine: 'AMD*'\nscores: {}\ntolerance: {default: 1}\n",
     r"unknown keys \['tolerance'\].*come from the base file"),
    ("profile: demo\nscores: {}\n", "`machine` must be a glob"),
    ("profile: demo\nmachine: 'AMD*'\nscores: [1]\n", "`scores` must map"),
    ("profile: demo\nmachine: 'AMD*'\nscores: {k: [1]}\n", r"scores\['k'\]: expected a scalar"),
    ("profile: demo\nmachine: [\n", "not valid YAML"),
])
def test_bad_variant_files_are_named(tmp_path, content, message):
    path = tmp_path / "demo@x.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ExpectedScoresError, match=message) as error:
        load_variant(path)
    assert str(path) in str(error.value)


def test_a_variant_of_another_profile_is_refused(tmp_path):
    variant = MachineVariant(tmp_path / "demo@x.yaml", "smoke", "*", {})
    with pytest.raises(ExpectedScoresError, match="profile 'smoke', but the base file's is"):
        with_variant(ExpectedScores("demo", {}), variant)


def test_the_packaged_variants_name_their_profile_and_only_numbers_the_base_holds():
    """Every packaged variant belongs to a packaged base file of its profile and overrides
    numbers that base pins. A number the base lacks is allowed only as one more entry of an
    object the base pins (a count by reason that this machine's draw reached and the base's
    did not, e.g. ``no_phrase_because/<reason>``); a new metric goes to the base first."""
    bases = sorted(p for p in EXPECTED_DIR.glob("*.yaml") if "@" not in p.name)
    variants = [v for base in bases for v in variant_paths(base)]
    assert variants, "no machine variant is packaged"
    for base in bases:
        expected = load_expected(base)
        parents = {key.rsplit("/", 1)[0] for key in expected.scores}
        for path in variant_paths(base):
            variant = load_variant(path)
            assert variant.profile == expected.profile == base.stem
            extra = [key for key in variant.scores if key not in expected.scores]
            orphans = [key for key in extra if key.rsplit("/", 1)[0] not in parents]
            assert not orphans, f"{path.name}: numbers of no object the base pins: {orphans}"


def test_expected_on_a_machine_is_what_the_command_checks(tmp_path):
    base = _base(tmp_path)
    _variant_file(base, scores={"paraphrase.json#/accepted": 13})
    assert expected_on(base, "AMD EPYC").scores["paraphrase.json#/accepted"] == 13
    assert expected_on(base, "Intel Xeon") == load_expected(base)


def test_the_environment_note_names_the_packages_the_base_was_pinned_with_otherwise():
    assert environment_note({"numpy": "2.4.6"}, {"numpy": "2.4.6"}) is None
    assert environment_note({"numpy": "2.4.6"}, {}) is None  # nothing recorded to compare
    assert "records no package versions" in environment_note({}, {"numpy": "2.4.6"})
    note = environment_note({"numpy": "2.4.5", "scipy": "1.17.1"},
                            {"numpy": "2.4.6", "scipy": "1.17.1", "faiss-cpu": "1.15.1"})
    assert "other versions of faiss-cpu, numpy," in note and "scipy" not in note
