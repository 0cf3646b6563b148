"""The expected-scores check on a synthetic metrics directory: equal, within tolerance,
regressed (either way), missing, new and ignored numbers; the file round trip; the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tasks.scores.compare import ExpectedScores, Tolerance, classify, compare, counts, passed
from tasks.scores.expected import (
    ExpectedScoresError,
    load_expected,
    parse_expected,
    settings_block,
    updated_expected,
    write_expected,
)
from tasks.scores.metrics import MetricsError, read_metrics, unflatten

runner = CliRunner()


def _metrics(root: Path, **files: object) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (root / f"{name}.json").write_text(json.dumps(content), encoding="utf-8")
    return root


BASE = {"retriever": "bm25", "macro": {"top1": 40.0, "top20": 80.0},
        "per_relation": {"P19": {"top20": 75.0}, "P/x": {"top20": 70.0}}, "questions": 480}


def test_read_metrics_flattens_every_leaf(tmp_path):
    found = read_metrics(_metrics(tmp_path, retrieval_bm25=BASE,
                                  other={"list": [1, {"a": None}], "empty": {}}))
    assert found == {
        "other.json#/list/0": 1, "other.json#/list/1/a": None, "other.json#/empty": "{}",
        "retrieval_bm25.json#/retriever": "bm25", "retrieval_bm25.json#/macro/top1": 40.0,
        "retrieval_bm25.json#/macro/top20": 80.0,
        "retrieval_bm25.json#/per_relation/P19/top20": 75.0,
        "retrieval_bm25.json#/per_relation/P~1x/top20": 70.0,  # "/" escaped (RFC 6901)
        "retrieval_bm25.json#/questions": 480}


def test_unflatten_gives_back_each_file(tmp_path):
    other = {"list": [1, {"a": None}, []], "empty": {}, "a~b/c": {"0": "x", "1": "y"},
             "rows": [{"k": 1}, {"k": 2}]}
    found = read_metrics(_metrics(tmp_path, retrieval_bm25=BASE, other=other))
    assert unflatten(found, "retrieval_bm25.json") == BASE
    back = unflatten(found, "other.json")
    # a dict keyed exactly "0".."n-1" comes back as a list: the one shape flatten loses
    assert back == {**other, "a~b/c": ["x", "y"]}
    assert unflatten(found, "missing.json") is None


def test_read_metrics_errors_name_the_file(tmp_path):
    with pytest.raises(MetricsError, match="no metrics"):
        read_metrics(tmp_path / "absent")
    (tmp_path / "bad.json").write_text('{"a": 1,\n', encoding="utf-8")
    with pytest.raises(MetricsError, match=r"bad\.json: line 2"):
        read_metrics(tmp_path)


def test_classify():
    assert classify(80.0, 80.0, 0.01) == "equal"
    assert classify(480, 480.0, 0.0) == "equal"
    assert classify(80.0, 80.005, 0.01) == "within"
    assert classify(80.0, 79.995, 0.01) == "within"
    assert classify(80.0, 80.5, 0.01) == "regressed"  # better is a change too
    assert classify(80.0, 79.5, 0.01) == "regressed"
    assert classify("bm25", "bm25", 0.0) == "equal"
    assert classify("bm25", "dense", 1.0) == "regressed"
    assert classify(True, 1, 1.0) == "regressed"  # a flag is not a number
    assert classify(None, 0.0, 1.0) == "regressed"
    assert classify(float("nan"), float("nan"), 0.0) == "equal"


def test_compare_classifies_each_number(tmp_path):
    expected = updated_expected(read_metrics(_metrics(tmp_path / "a", retrieval_bm25=BASE)),
                                "smoke", ExpectedScores("smoke", {}, Tolerance(0.01), {}))
    changed = json.loads(json.dumps(BASE))
    changed["macro"]["top1"] = 40.004           # within
    changed["macro"]["top20"] = 81.0            # regressed (better)
    del changed["per_relation"]["P19"]          # missing
    changed["per_relation"]["P20"] = {"top20": 60.0}  # new
    actual = read_metrics(_metrics(tmp_path / "b", retrieval_bm25=changed))
    findings = {f.key: f for f in compare(expected, actual)}
    prefix = "retrieval_bm25.json#"
    assert findings[f"{prefix}/retriever"].status == "equal"
    assert findings[f"{prefix}/macro/top1"].status == "within"
    assert findings[f"{prefix}/macro/top20"].status == "regressed"
    assert findings[f"{prefix}/macro/top20"].delta == pytest.approx(1.0)
    assert findings[f"{prefix}/per_relation/P19/top20"].status == "missing"
    assert findings[f"{prefix}/per_relation/P20/top20"].status == "new"
    assert counts(list(findings.values())) == {
        "equal": 3, "within": 1, "regressed": 1, "missing": 1, "new": 1, "ignored": 0}
    assert not passed(list(findings.values()))


def test_tolerance_by_key_and_ignored_keys():
    expected = ExpectedScores("smoke", {"a.json#/loss": 4.3, "a.json#/acc": 50.0,
                                        "a.json#/path": "/tmp/x"},
                              Tolerance(0.0, by_key=(("*#/loss", 0.1),)),
                              {"*#/path": "run-specific"})
    findings = compare(expected, {"a.json#/loss": 4.35, "a.json#/acc": 50.0,
                                  "a.json#/path": "/tmp/y", "a.json#/seconds": 3})
    assert [f.status for f in findings] == ["within", "equal", "ignored", "new"]
    expected = ExpectedScores("smoke", expected.scores, expected.tolerance,
                              {**expected.ignore, "*#/seconds": "timing"})
    assert passed(compare(expected, {"a.json#/loss": 4.35, "a.json#/acc": 50.0,
                                     "a.json#/seconds": 3}))
    assert not passed(compare(expected, {"a.json#/loss": 4.5, "a.json#/acc": 50.0}))


def test_expected_file_round_trip_keeps_settings(tmp_path):
    path = tmp_path / "smoke.yaml"
    first = ExpectedScores("smoke", {"a.json#/x": 1.5, "a.json#/name": "bm25"},
                           Tolerance(0.001, (("*#/x", 0.5),)), {"*#/note": "path"})
    write_expected(path, first)
    loaded = load_expected(path)
    assert loaded == first
    assert "qastress check-scores --profile smoke --update" in path.read_text()
    second = updated_expected({"a.json#/x": 2.0, "a.json#/note": "p"}, "smoke", loaded)
    assert second.scores == {"a.json#/x": 2.0}  # ignored keys are not stored
    assert second.tolerance == first.tolerance and second.ignore == first.ignore


def test_an_update_keeps_the_comments_of_the_settings(tmp_path):
    """`check-scores --update` regenerates the scores but keeps the settings block as written,
    so a comment saying why a tolerance is there survives (it was lost before)."""
    path = tmp_path / "smoke.yaml"
    path.write_text(
        "# hand-written header\n"
        "profile: smoke\n"
        "tolerance:\n"
        "  default: 0.0001\n"
        "  by_key:\n"
        "    # differs between CPUs in the 4th decimal\n"
        "    '*#/scale': 0.001\n"
        "ignore:\n"
        "  '*#/note': a path\n"
        "scores:\n"
        "  # a comment among the scores is not kept\n"
        "  a.json#/x: 1.5\n", encoding="utf-8")
    previous = load_expected(path)
    write_expected(path, updated_expected({"a.json#/x": 2.0, "a.json#/scale": 0.5,
                                           "a.json#/note": "p"}, "smoke", previous))
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# hand-written header\nprofile: smoke\n")
    assert "    # differs between CPUs in the 4th decimal\n" in text
    assert "among the scores" not in text
    loaded = load_expected(path)
    assert loaded.scores == {"a.json#/x": 2.0, "a.json#/scale": 0.5}
    assert (loaded.tolerance, loaded.ignore) == (previous.tolerance, previous.ignore)

    # settings that differ from the file's are written afresh, with the standard header
    changed = ExpectedScores("smoke", loaded.scores, Tolerance(0.01, ()), loaded.ignore)
    write_expected(path, changed)
    text = path.read_text(encoding="utf-8")
    assert "hand-written" not in text and "qastress check-scores --profile smoke" in text
    assert load_expected(path) == changed


def test_settings_block_is_the_text_above_scores():
    assert settings_block("profile: a\nscores:\n  k: 1\n") == "profile: a\n"
    assert settings_block("profile: a\nscores: {}\n") == "profile: a\n"
    assert settings_block("profile: a\n  scores:\n") is None


@pytest.mark.parametrize(("raw", "message"), [
    ([], "expected a mapping"),
    ({"profile": "smoke", "scores": {}, "extra": 1}, "unknown keys"),
    ({"profile": "smoke", "scores": {"k": [1]}}, r"scores\['k'\]: expected a scalar"),
    ({"profile": "smoke", "scores": {}, "tolerance": {"default": -1}}, "tolerance.default"),
    ({"profile": "smoke", "scores": {}, "ignore": ["a"]}, "ignore"),
    ({"scores": {}}, "profile"),
])
def test_bad_expected_files_are_named(raw, message):
    with pytest.raises(ExpectedScoresError, match=message):
        parse_expected(raw, "x.yaml")


def test_command_passes_fails_and_updates(tmp_path):
    metrics = _metrics(tmp_path / "metrics", retrieval_bm25=BASE)
    expected = tmp_path / "smoke.yaml"
    args = ["check-scores", "--profile", "smoke", "--metrics", str(metrics),
            "--expected", str(expected)]
    missing = runner.invoke(app, args)
    update = f"`qastress check-scores --profile smoke --expected {expected} --update`"
    assert missing.exit_code == 2 and update in missing.output  # names the file it would write
    assert runner.invoke(app, [*args, "--update"]).exit_code == 0
    ok = runner.invoke(app, args)
    assert ok.exit_code == 0 and "PASS: 6 equal" in ok.output

    changed = json.loads(json.dumps(BASE))
    changed["macro"]["top20"] = 79.0
    _metrics(metrics, retrieval_bm25=changed)
    failed = runner.invoke(app, args)
    assert failed.exit_code == 1
    assert "regressed  retrieval_bm25.json#/macro/top20: expected 80.0, got 79.0" in failed.output
    assert update in failed.output
    assert runner.invoke(app, [*args, "--update"]).exit_code == 0  # the deliberate update
    assert runner.invoke(app, args).exit_code == 0
    assert load_expected(expected).scores["retrieval_bm25.json#/macro/top20"] == 79.0
