"""WikiAnswers aligned paraphrase pairs: round trips, malformed lines, skip mode."""

from __future__ import annotations

import gzip
import re

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.wikianswers import (
    WikiAnswersPair,
    format_wikianswers_pair,
    iter_wikianswers_pairs,
    write_wikianswers_pairs,
)

GOOD = "what is the capital of france ?\twhat 's france 's capital city ?\t0-0 3-4 5-2 6-6"


def write(tmp_path, text, name="wikianswers-aligned.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_parse(tmp_path):
    (pair,) = iter_wikianswers_pairs(write(tmp_path, GOOD + "\n"))
    assert pair.question1.split()[0] == "what"
    assert pair.alignment == ((0, 0), (3, 4), (5, 2), (6, 6))
    assert format_wikianswers_pair(pair) == GOOD


def test_round_trip(tmp_path):
    pairs = [
        WikiAnswersPair("¿ qué es «ETH» ?", "what is eth , exactly ?", ((3, 2), (4, 5))),
        WikiAnswersPair("who wrote 東京 物語 ?", "author of 東京 物語 ?", ()),
        WikiAnswersPair('he said "hi" ; why ?', "why did he say \"hi\" ?", [(0, 2), (2, 4)]),
    ]
    out = write_wikianswers_pairs(tmp_path / "out" / "wa.txt", pairs)
    assert list(iter_wikianswers_pairs(out)) == pairs
    assert out.read_text(encoding="utf-8").splitlines()[1].endswith("?\t")


def test_gzipped(tmp_path):
    path = tmp_path / "wa.txt"
    path.write_bytes(gzip.compress((GOOD + "\n").encode()))
    assert len(list(iter_wikianswers_pairs(path))) == 1


BAD = [
    ("only one\tfield pair", r"line 2: expected 3 tab-separated fields \(question_1, question_2, "
                             r"alignment\); got 2 fields"),
    ("a b\tc d\t0-0\textra", r"line 2: expected 3 tab-separated fields .*; got 4 fields"),
    ("a b\tc d\t0-0 1_1", r"line 2: expected alignment items i-j with integer token indexes; "
                          r"got '1_1'"),
    ("a b\tc d\t0--1", r"line 2: expected alignment items i-j .*; got '0--1'"),
    ("a b\tc d e\t2-1", r"line 2: expected alignment indexes below the token counts \(2 tokens "
                        r"in question 1, 3 in question 2\); got '2-1'"),
    ("a b\tc d e\t1-3", r"line 2: expected alignment indexes below .*; got '1-3'"),
]


@pytest.mark.parametrize(("line", "message"), BAD)
def test_malformed_lines(tmp_path, line, message):
    path = write(tmp_path, GOOD + "\n" + line + "\n")
    with pytest.raises(DataFormatError, match=re.escape(str(path)) + ", " + message):
        list(iter_wikianswers_pairs(path))


def test_skip_mode_counts(tmp_path):
    path = write(tmp_path, "\n".join([GOOD, *(line for line, _ in BAD), "", GOOD]) + "\n")
    skips = SkipCounter("wikianswers")
    pairs = list(iter_wikianswers_pairs(path, on_error="skip", skips=skips))
    assert len(pairs) == 2
    assert skips.total == 6
    assert skips.counts["3 tab-separated fields (question_1, question_2, alignment)"] == 2
    assert skips.examples[0].endswith("got 2 fields in 'only one\\tfield pair'")


def test_writer_rejects_tabs(tmp_path):
    with pytest.raises(ValueError, match="cannot hold tabs"):
        write_wikianswers_pairs(tmp_path / "x.txt", [WikiAnswersPair("a\tb", "c", ())])
