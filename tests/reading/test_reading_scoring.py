"""Scoring outside predictions (`qastress eval squad`) and Tables 1-2: bad inputs give clear
errors naming file and record; missing ids are counted and listed; bootstrap CIs reuse the
evaluation helper's resamples."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from flows.cli import app
from tasks.evaluation.topk import bootstrap_difference
from tasks.io.errors import DataFormatError
from tasks.io.squad import build_squad, discover_paraphrase_sets, write_squad
from tasks.io.squad_predictions import write_predictions
from tasks.reading.robustness import (
    bootstrap_scores,
    evaluate_readers,
    write_reader_tables,
)
from tasks.reading.scoring import score_prediction_file

CONTEXT = "Ada Lovelace was born in London in 1815. She worked with Babbage."


def _squad(path, questions, version="1.1"):
    raw = build_squad(version, [("Ada", [(CONTEXT, [(qid, q, [(a, None)])
                                                     for qid, q, a in questions])])])
    return write_squad(path, raw)


QUESTIONS = [("1", "Where was Ada born?", "London"), ("2", "When was Ada born?", "1815"),
             ("3", "Who did she work with?", "Babbage")]


def test_scores_match_the_official_metrics_and_list_missing_ids(tmp_path):
    data = _squad(tmp_path / "d.json", QUESTIONS)
    preds = write_predictions(tmp_path / "p.json", {"1": "in London", "2": "the 1815",
                                                    "zzz": "x"})
    report = score_prediction_file(data, preds)
    assert report.missing_ids == ("3",) and report.extra_ids == ("zzz",)
    assert report.exact_match == pytest.approx(100 / 3)  # "the 1815" == "1815"; 3 missing
    assert report.f1 == pytest.approx(100 * (2 / 3 + 1) / 3)


def test_cli_prints_official_json_and_missing_ids(tmp_path):
    data = _squad(tmp_path / "d.json", QUESTIONS)
    preds = write_predictions(tmp_path / "p.json", {"1": "London"})
    result = CliRunner().invoke(app, ["eval", "squad", str(data), str(preds)])
    assert result.exit_code == 0, result.output
    assert "2 of 3 questions have no prediction (scored 0): 2, 3" in result.output
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["exact_match"] == pytest.approx(100 / 3) and out["missing_ids"] == ["2", "3"]


def test_cli_sums_up_many_missing_ids_and_warns_when_no_prediction_matches(tmp_path, caplog):
    many = [(f"q{i:02d}", "Where was Ada born?", "London") for i in range(25)]
    data = _squad(tmp_path / "d.json", many)
    preds = write_predictions(tmp_path / "p.json", {"q00": "London", "x1": "a", "x2": "b"})
    result = CliRunner().invoke(app, ["eval", "squad", str(data), str(preds)])
    assert result.exit_code == 0, result.output
    assert ("24 of 25 questions have no prediction (scored 0): q01, q02, " in result.stderr
            and "q20, ... (4 more; all in the JSON's missing_ids)" in result.stderr)
    assert "2 predictions have ids not in" in result.stderr and ": x1, x2" in result.stderr
    assert not [r for r in caplog.records if "Unanswered" in r.getMessage()]  # not per id
    assert "warning" not in result.stderr
    assert len(json.loads(result.stdout)["missing_ids"]) == 24
    other = write_predictions(tmp_path / "other.json", {"x1": "London"})
    result = CliRunner().invoke(app, ["eval", "squad", str(data), str(other)])
    assert result.exit_code == 0 and "warning: no prediction of " in result.stderr
    assert "1 prediction has an id not in" in result.stderr


@pytest.mark.parametrize("content, message", [
    (["London"], "p.json, top level: expected a JSON object {question_id: answer_text}"),
    ({"1": ["London"]}, "p.json, question id '1': expected a string answer text"),
    ({"1": None}, "p.json, question id '1': expected a string answer text"),
])
def test_predictions_that_are_not_an_object_of_strings(tmp_path, content, message):
    data = _squad(tmp_path / "d.json", QUESTIONS)
    (tmp_path / "p.json").write_text(json.dumps(content))
    with pytest.raises(DataFormatError, match=message.replace("{", r"\{").replace("}", r"\}")):
        score_prediction_file(data, tmp_path / "p.json")
    result = CliRunner().invoke(app, ["eval", "squad", str(data), str(tmp_path / "p.json")])
    assert result.exit_code == 2 and "p.json" in result.output


def test_a_squad_v2_file_is_refused(tmp_path):
    data = _squad(tmp_path / "v2.json", QUESTIONS, version="v2.0")
    write_predictions(tmp_path / "p.json", {"1": "London"})
    with pytest.raises(DataFormatError, match=r"v2.json, top level: expected a SQuAD v1.1 file"
                                              r".*got version 'v2.0'"):
        score_prediction_file(data, tmp_path / "p.json")


def test_answer_offsets_that_do_not_match_the_context(tmp_path):
    raw = json.loads(_squad(tmp_path / "d.json", QUESTIONS).read_text())
    raw["data"][0]["paragraphs"][0]["qas"][1]["answers"][0]["answer_start"] += 3
    (tmp_path / "d.json").write_text(json.dumps(raw))
    write_predictions(tmp_path / "p.json", {"1": "London"})
    with pytest.raises(DataFormatError, match=r"d.json, data\[0\].paragraphs\[0\].qas\[1\] "
                                              r"\(question id '2'\), answers\[0\]"):
        score_prediction_file(tmp_path / "d.json", tmp_path / "p.json")


def test_bootstrap_reuses_the_helper_for_01_and_its_draws_for_f1():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    assert bootstrap_scores(a, b, n=300, seed=5) == bootstrap_difference(a, b, n=300, seed=5)
    # real-valued scores: the same resamples (a 0/1 input shifted by a constant keeps the CI
    # shape: bootstrap of x - y + c == bootstrap of x - y, shifted by c)
    shifted = bootstrap_scores(a * 0.5 + 0.25, b * 0.5 + 0.25, n=300, seed=5)
    base = bootstrap_difference(a, b, n=300, seed=5)
    assert shifted == pytest.approx(tuple(0.5 * v for v in base))
    with pytest.raises(ValueError, match="equal length"):
        bootstrap_scores([0.5, 0.2], [0.1], n=10)


def test_tables_orig_vs_para(tmp_path):
    orig = _squad(tmp_path / "dev_orig.json", QUESTIONS)
    para = _squad(tmp_path / "dev_para.json", [(str(int(i) + 100), q.lower(), a)
                                               for i, q, a in QUESTIONS])
    (tmp_path / "lonely_orig.json").write_text("{}")  # no para file: not a set
    sets = discover_paraphrase_sets(tmp_path)
    assert sets == {"dev": (orig, para)}
    preds = {"dev_orig": write_predictions(tmp_path / "o.json", {"1": "London", "2": "1815",
                                                                  "3": "Babbage"}),
             "dev_para": write_predictions(tmp_path / "q.json", {"101": "London",
                                                                  "102": "in 1815 she",
                                                                  "103": "Ada"})}
    metrics = evaluate_readers({"tiny": preds}, sets, n_bootstrap=200)
    block = metrics["readers"]["tiny"]["dev"]
    assert block["orig"]["exact_match"] == 100.0 and block["para"]["exact_match"] == 33.33
    assert block["exact_match_drop"]["difference"] == 66.67
    assert block["f1_drop"]["difference"] == pytest.approx(100 - block["para"]["f1"], abs=0.01)
    write_reader_tables(metrics, tmp_path / "m.json", tmp_path / "r.md",
                        {"tiny": {"exact_match": 50.0, "f1": 60.0, "questions": 3}})
    text = (tmp_path / "r.md").read_text()
    assert "| dev | tiny | 3 | 100.0 |" in text and "+66.67" in text
    assert json.loads((tmp_path / "m.json").read_text())["squad_dev"]["tiny"]["f1"] == 60.0
    assert discover_paraphrase_sets(tmp_path / "absent") == {}
    assert discover_paraphrase_sets(None) == {}


@pytest.mark.parametrize("data", [
    [],
    [{"title": "Ada", "paragraphs": []}],
    [{"title": "Ada", "paragraphs": [{"context": CONTEXT, "qas": []}]}],
])
def test_a_squad_file_without_questions_is_a_data_error(tmp_path, data):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"version": "1.1", "data": data}))
    preds = write_predictions(tmp_path / "p.json", {"1": "London"})
    message = f"{path}, top level: expected at least one question; got none"
    with pytest.raises(DataFormatError) as info:
        score_prediction_file(path, preds)
    assert str(info.value) == message
    result = CliRunner().invoke(app, ["eval", "squad", str(path), str(preds)])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: {message}"


def test_cli_refuses_repeated_prediction_ids(tmp_path):
    data = _squad(tmp_path / "d.json", QUESTIONS)
    (tmp_path / "p.json").write_text('{"1": "London", "1": "Paris"}')
    result = CliRunner().invoke(app, ["eval", "squad", str(data), str(tmp_path / "p.json")])
    assert result.exit_code == 2, result.output
    assert "p.json, top level: expected each question id once; got '1' 2 times" in result.output
