"""`qastress eval retrieval`: top-k accuracy of any retriever's DPR-style result files."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tasks.evaluation.result_files import accuracy_table, score_result_files
from tasks.io.dpr_results import write_retrieval_results
from tasks.io.errors import DataFormatError


def _ctx(pid: str, text: str, has_answer: bool | None = None, title: str = "") -> dict:
    ctx = {"id": pid, "title": title, "text": text, "score": "1.0"}
    if has_answer is not None:
        ctx["has_answer"] = has_answer
    return ctx


def _results(path, records):
    return write_retrieval_results(path, [
        {"question": q, "answers": answers, "ctxs": ctxs} for q, answers, ctxs in records])


P19 = [  # first hits at ranks 0, 2, none, 1
    ("Where was Ann born?", ["Paris"], [_ctx("1", "Ann was born in Paris.", True),
                                        _ctx("2", "Paris", True)]),
    ("Where was Bo born?", ["Lyon"], [_ctx("3", "Bo", False), _ctx("4", "Bo again", False),
                                      _ctx("5", "Bo was born in Lyon.", True)]),
    ("Where was Cy born?", ["Nice"], [_ctx("6", "Cy", False)]),
    ("Where was Di born?", ["Metz", "Metz, France"], [_ctx("7", "Di", False),
                                                     _ctx("8", "in metz !", True)]),
]
P36 = [("What is the capital of X?", ["Y"], [_ctx("9", "Y is X's capital.", True)])]


def test_per_file_accuracy_and_the_macro_average(tmp_path):
    _results(tmp_path / "P19.test.json", P19)
    _results(tmp_path / "P36.test.json", P36)
    report = score_result_files([tmp_path], [1, 2, 3, 100])
    assert report["files"]["P19.test.json"] == {"questions": 4, "ctxs": {"min": 1, "max": 3},
                                                "top1": 25.0, "top2": 50.0, "top3": 75.0,
                                                "top100": 75.0}
    assert report["files"]["P36.test.json"]["top1"] == 100.0
    assert report["macro"] == {"top1": 62.5, "top2": 75.0, "top3": 87.5, "top100": 87.5}
    assert report["questions"] == 5
    # judged again from the text, the flags' verdicts come back ("metz !" holds "Metz")
    assert score_result_files([tmp_path], [1, 2, 3, 100], "eq-string")["files"] == \
        report["files"]
    assert accuracy_table(report).splitlines() == [
        "k=1\tk=2\tk=3\tk=100\tfilename",
        "25.0%\t50.0%\t75.0%\t75.0%\tP19.test.json",
        "100.0%\t100.0%\t100.0%\t100.0%\tP36.test.json",
        "62.5%\t75.0%\t87.5%\t87.5%\tAverage"]


def test_the_two_conventions_differ_on_a_decomposed_passage(tmp_path):
    """FORMATS.md's example: answer "é" (U+00E9) in a passage holding "e" + U+0301.
    EntityQuestions normalises only the answer, DPR the passage too."""
    path = _results(tmp_path / "P1.json", [
        ("q", ["\u00e9"], [_ctx("1", "un \u00e9 ici", False), _ctx("2", "x", False)])])
    eq = score_result_files([path], [1], "eq-string")["files"]["P1.json"]["top1"]
    dpr = score_result_files([path], [1], "dpr-string")["files"]["P1.json"]["top1"]
    assert (eq, dpr) == (0.0, 100.0)
    title = _results(tmp_path / "P2.json", [("q", ["Ann"], [_ctx("1", "x", title="Ann Lee")])])
    assert score_result_files([title], [1], "title")["files"]["P2.json"]["top1"] == 100.0
    assert score_result_files([title], [1], "eq-string")["files"]["P2.json"]["top1"] == 0.0


def test_stored_mode_needs_every_flag_and_bad_input_is_named(tmp_path):
    path = _results(tmp_path / "P19.json", [("q", ["a"], [_ctx("1", "a", True),
                                                           _ctx("2", "b")])])
    with pytest.raises(DataFormatError, match=r"P19\.json, record 0, ctxs\[1\]\.has_answer: "
                                              r"expected true or false"):
        score_result_files([path], [1])
    assert score_result_files([path], [1], "eq-string")["macro"]["top1"] == 100.0
    (tmp_path / "empty.json").write_text("[]")
    with pytest.raises(DataFormatError, match=r"empty\.json, top level: expected at least one"):
        score_result_files([tmp_path / "empty.json"], [1])
    with pytest.raises(FileNotFoundError, match="nothing-here"):
        score_result_files([tmp_path / "nothing-here"], [1])
    with pytest.raises(ValueError, match="unknown mode 'string'"):
        score_result_files([path], [1], "string")
    (tmp_path / "other").mkdir()
    _results(tmp_path / "other" / "P19.json", P36)
    with pytest.raises(ValueError, match="two result files named 'P19.json'"):
        score_result_files([path, tmp_path / "other"], [1])
    regexes = _results(tmp_path / "P20.json", [("q", [r"a\w+"], [_ctx("1", "ab")]),
                                               ("r", ["b", "a["], [_ctx("2", "b")])])
    with pytest.raises(DataFormatError, match=r"P20\.json, record 1, answers: expected answers "
                       r"that compile as regular expressions \(--mode regex\); got invalid "
                       r"answer regex 'a\[': "):
        score_result_files([regexes], [1], "regex")


def test_the_cli_prints_the_table_and_one_json_object(tmp_path):
    _results(tmp_path / "P19.test.json", P19)
    _results(tmp_path / "P36.test.json", P36)
    result = CliRunner().invoke(app, ["eval", "retrieval", str(tmp_path), "-k", "1", "-k", "3"])
    assert result.exit_code == 0, result.output
    assert "25.0%\t75.0%\tP19.test.json" in result.stderr
    assert json.loads(result.stdout)["macro"] == {"top1": 62.5, "top3": 87.5}
    # a cut-off above the passages a question holds is said, per file
    assert "note: P19.test.json: its questions hold 1 to 3 passages, fewer than k=3" \
        in result.stderr
    assert "note: P36.test.json: its questions hold 1 passage, fewer than k=3" in result.stderr
    result = CliRunner().invoke(app, ["eval", "retrieval", str(tmp_path), "-k", "1"])
    assert "note:" not in result.stderr
    (tmp_path / "P20.test.jsonl").write_text("")
    result = CliRunner().invoke(app, ["eval", "retrieval", str(tmp_path), "-k", "1"])
    assert f"note: {tmp_path}: 1 file(s) not *.json left out (P20.test.jsonl)" in result.stderr
    twice = tmp_path / "P36.test.json"
    result = CliRunner().invoke(app, ["eval", "retrieval", str(twice), str(twice)])
    assert result.exit_code == 2 and "the same result file named twice" in result.stderr
    broken = tmp_path / "bad" / "P1.json"
    broken.parent.mkdir()
    broken.write_text('[{"question": "q", "answers": ["a"], "ctxs": [}]')
    result = CliRunner().invoke(app, ["eval", "retrieval", str(broken)])
    assert result.exit_code == 2 and "P1.json, record 0, line 1, column" in result.stderr
    result = CliRunner().invoke(app, ["eval", "retrieval", str(tmp_path), "-k", "0"])
    assert result.exit_code == 2 and "'--top' / '-k'" in result.output  # top-0 means nothing
