"""DPR training data, QA CSVs and retrieval results."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tasks.io.dpr import (
    DprCtx,
    DprExample,
    iter_dpr_examples,
    iter_qa_csv,
    write_dpr_examples,
    write_qa_csv,
)
from tasks.io.dpr_results import (
    RetrievalResult,
    RetrievedCtx,
    iter_retrieval_results,
    read_retrieval_results,
    write_retrieval_results,
)
from tasks.io.errors import DataFormatError, SkipCounter

EXAMPLES = [
    DprExample("nq_train", "where is zürich", ("Switzerland",),
               (DprCtx("Zürich", 'Zürich is "the" city\tof', 1000.0, 1.0, "11828866"),),
               (DprCtx("Bern", "Bern ...", 0.0, 0.0, "2"),),
               (DprCtx("東京", "東京 is ...", 13.5, 0.0, "3"),)),
    DprExample(None, "who wrote it", ("A", "B"), (DprCtx("T", "text"),)),
]


def test_dpr_examples_round_trip(tmp_path: Path) -> None:
    path = write_dpr_examples(tmp_path / "nq-train.json", EXAMPLES)
    assert list(iter_dpr_examples(path)) == EXAMPLES
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data[0]["positive_ctxs"][0] == {"title": "Zürich", "text": 'Zürich is "the" city\tof',
                                           "score": 1000.0, "title_score": 1.0,
                                           "passage_id": "11828866"}
    assert "dataset" not in data[1] and "score" not in data[1]["positive_ctxs"][0]


def test_dpr_example_errors(tmp_path: Path) -> None:
    path = tmp_path / "nq-dev.json"
    good = {"dataset": "nq", "question": "q", "answers": ["a"],
            "positive_ctxs": [{"title": "t", "text": "x", "score": 1, "passage_id": 5}]}
    path.write_text(json.dumps([good,
                                {**good, "positive_ctxs": [{"title": "t"}]},
                                {k: v for k, v in good.items() if k != "question"},
                                {**good, "answers": "a"}]), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"nq-dev\.json, record 1, positive_ctxs\[0\]: "
                                              r"expected a ctx with \"text\""):
        list(iter_dpr_examples(path))
    skips = SkipCounter("nq-dev")
    kept = list(iter_dpr_examples(path, on_error="skip", skips=skips))
    assert len(kept) == 1 and kept[0].positive_ctxs[0].passage_id == "5"
    assert skips.total == 3
    assert any("record 2: expected an example with \"question\"" in e for e in skips.examples)


def test_qa_csv_round_trip(tmp_path: Path) -> None:
    rows = [("who founded zürich", ("the Romans", 'the "Helvetii"')),
            ('"quoted" question with\ttab', ("東京",)),
            ("what's it", ("it's", "a\tb"))]
    path = write_qa_csv(tmp_path / "nq-test.qa.csv", rows)
    assert path.read_text(encoding="utf-8").splitlines()[0] == (
        'who founded zürich\t["the Romans", "the \\"Helvetii\\""]')
    read = list(iter_qa_csv(path))
    assert [(r.question, r.answers) for r in read] == rows
    question, answers = read[2]
    assert question == "what's it" and answers == ("it's", "a\tb")


def test_qa_csv_reads_python_literals(tmp_path: Path) -> None:
    path = tmp_path / "trivia-test.qa.csv"
    path.write_text("who was born in ulm\t['Albert Einstein', \"Einstein's\"]\n",
                    encoding="utf-8")
    assert list(iter_qa_csv(path)) == [("who was born in ulm", ("Albert Einstein",
                                                                "Einstein's"))]


@pytest.mark.parametrize(("line", "pattern"), [
    ("question only", r"line 2: expected 2 tab-separated fields \(question, answer list\)"),
    ("q\t[broken", r"line 2: expected a JSON or Python list literal of answers"),
    ("q\t[]", r"line 2, answers: expected a non-empty answers list"),
    ("q\t[1, 2]", r"line 2, answers\[0\]: expected a string answer; got 1"),
    ("q\t{[]}", r"line 2: expected a JSON or Python list literal of answers"),
    ("q\t{[1]: 2}", r"line 2: expected a JSON or Python list literal of answers"),
    pytest.param("q\t" + "[" * 100_000, r"line 2: expected a JSON or Python list literal",
                 id="deeply-nested"),
])
def test_qa_csv_errors(tmp_path: Path, line: str, pattern: str) -> None:
    path = tmp_path / "nq-test.qa.csv"
    path.write_text(f'ok\t["a"]\n{line}\nok2\t["b"]\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"nq-test\.qa\.csv, " + pattern):
        list(iter_qa_csv(path))
    skips = SkipCounter("qa")
    assert [r.question for r in iter_qa_csv(path, on_error="skip", skips=skips)] == ["ok", "ok2"]
    assert skips.total == 1


def test_a_bad_literal_is_our_error_without_a_python_syntax_warning(tmp_path: Path) -> None:
    path = tmp_path / "nq-test.qa.csv"
    path.write_text('q\t["a", 1if 2]\n', encoding="utf-8")  # Python warns "invalid decimal"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(DataFormatError, match="a JSON or Python list literal"):
            list(iter_qa_csv(path))
    assert [str(w.message) for w in caught] == []


def test_qa_csv_unclosed_quote_raises_naming_the_lines(tmp_path: Path) -> None:
    path = tmp_path / "nq-test.qa.csv"
    path.write_bytes(b"ok\t['a']\n\"who?\t['b']\nwhat?\t['c']\nwhere?\t['d']\n")
    message = (r"nq-test\.qa\.csv, lines 2-4: expected 2 tab-separated fields \(question, "
               r"answer list\); got 1 in .* \(a quote opened on line 2 is never closed\?\)$")
    with pytest.raises(DataFormatError, match=message):
        list(iter_qa_csv(path))
    with pytest.raises(DataFormatError, match=message):
        list(iter_qa_csv(path, on_error="skip", skips=SkipCounter("qa")))


def test_qa_csv_multi_line_question_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "nq-test.qa.csv"
    path.write_bytes(b'"two\nlines"\t["a"]\nbad\n ok\t["b"]\n')
    skips = SkipCounter("qa")
    assert list(iter_qa_csv(path, on_error="skip", skips=skips)) == [("two\nlines", ("a",)),
                                                                     (" ok", ("b",))]
    assert skips.total == 1 and "line 3: expected 2 tab-separated fields" in skips.examples[0]


RESULTS = [
    RetrievalResult("Where was Dezső Ránki born?", ("Budapest",), (
        RetrievedCtx("2", "Ránki", "Dezső Ránki was born in Budapest", 21.5, True),
        RetrievedCtx("wiki:7", "東京", 'a "quoted"\ttext', 3.0, False))),
    RetrievalResult("q2", ("x",), (RetrievedCtx("9", "", "no title or score"),)),
]


def test_retrieval_results_round_trip(tmp_path: Path) -> None:
    path = write_retrieval_results(tmp_path / "P19.test.json", RESULTS)
    assert read_retrieval_results(path) == RESULTS
    assert list(iter_retrieval_results(path)) == RESULTS
    assert json.loads(path.read_text(encoding="utf-8"))[1]["ctxs"][0] == {
        "id": "9", "title": "", "text": "no title or score"}


def test_retrieval_results_accept_dpr_string_scores(tmp_path: Path) -> None:
    path = tmp_path / "dpr_out.json"
    path.write_text(json.dumps([{"question": "q", "answers": ["a"], "ctxs": [
        {"id": 12, "title": "t", "text": "a b", "score": "80.25", "has_answer": True}]}]),
        encoding="utf-8")
    assert read_retrieval_results(path)[0].ctxs[0] == RetrievedCtx("12", "t", "a b", 80.25, True)


def test_retrieval_results_errors(tmp_path: Path) -> None:
    path = tmp_path / "P19.results.json"
    ctx = {"id": "1", "title": "t", "text": "x", "score": 1.0, "has_answer": False}
    path.write_text(json.dumps([
        {"question": "q0", "answers": ["a"], "ctxs": [ctx]},
        {"question": "q1", "answers": ["a"], "ctxs": [ctx, {"id": "2", "title": "t"}]},
        {"question": "q2", "answers": [], "ctxs": [ctx]},
    ]), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"P19\.results\.json, record 1, ctxs\[1\]: expected "
                                              r"a ctx with \"text\""):
        read_retrieval_results(path)
    skips = SkipCounter("results")
    assert [r.question for r in read_retrieval_results(path, "skip", skips)] == ["q0"]
    assert skips.total == 2
    assert "record 2, answers: expected a non-empty answers list" in skips.examples[1]


def test_a_blank_answer_is_refused_where_answers_are_matched(tmp_path: Path) -> None:
    """DPR's matcher finds the empty token sequence in every passage: a blank gold answer
    would make its question a hit at every k. Training JSON does not match answers."""
    path = tmp_path / "P19.results.json"
    ctx = {"id": "1", "title": "t", "text": "x", "score": 1.0, "has_answer": False}
    path.write_text(json.dumps([{"question": "q0", "answers": ["a", ""], "ctxs": [ctx]}]),
                    encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"record 0, answers\[1\]: expected a non-blank "
                                              r"answer string"):
        read_retrieval_results(path)
    train = tmp_path / "train.json"
    train.write_text(json.dumps([{"question": "q", "answers": [""], "positive_ctxs": [ctx]}]),
                     encoding="utf-8")
    assert [e.answers for e in iter_dpr_examples(train)] == [("",)]
