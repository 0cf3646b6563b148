"""Quora Question Pairs TSV: quoting, round trips, malformed rows, skip mode."""

from __future__ import annotations

import gzip
import re

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.quora import QuoraPair, iter_quora_pairs, write_quora_pairs

HEADER = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"


def write(tmp_path, body, header=HEADER, name="quora_duplicate_questions.tsv"):
    path = tmp_path / name
    path.write_bytes((header + body).encode("utf-8"))
    return path


def test_reads_quoted_fields_like_the_release(tmp_path):
    body = (
        "0\t1\t2\tWhat is the step by step guide to invest in share market in india?\t"
        "What is the step by step guide to invest in share market?\t0\n"
        '1\t3\t4\t"How do I say ""hello""\nin\tFrench?"\tWhat is the French for \'hello\'?\t1\n'
        "2\t5\t6\tWhy is Zürich «expensive»?\tWhat makes Zürich costly?\t1\n"
    )
    pairs = list(iter_quora_pairs(write(tmp_path, body)))
    assert [p.id for p in pairs] == [0, 1, 2]
    assert pairs[1] == QuoraPair(1, 3, 4, 'How do I say "hello"\nin\tFrench?',
                                 "What is the French for 'hello'?", True)
    assert not pairs[0].is_duplicate
    dups = list(iter_quora_pairs(write(tmp_path, body), duplicates_only=True))
    assert [p.id for p in dups] == [1, 2]


def test_round_trip(tmp_path):
    pairs = [
        QuoraPair(0, 1, 2, 'A "quoted"\tword?', "Line\r\nbreak — ¿sí?", True),
        QuoraPair(1, 3, 4, '"Starts with a quote', "東京 is where?", False),
        QuoraPair(2, 5, 6, "Plain; punctuation: (a), [b], {c}!", "Back\\slash ||| pipes", True),
    ]
    out = write_quora_pairs(tmp_path / "out" / "q.tsv", pairs)
    assert out.read_text(encoding="utf-8").startswith(HEADER)
    assert list(iter_quora_pairs(out)) == pairs


def test_gzipped_input(tmp_path):
    path = tmp_path / "quora.tsv.gz"
    path.write_bytes(gzip.compress((HEADER + "7\t8\t9\ta?\tb?\t1\n").encode()))
    assert list(iter_quora_pairs(path)) == [QuoraPair(7, 8, 9, "a?", "b?", True)]


def test_wrong_header(tmp_path):
    path = write(tmp_path, "0\t1\t2\ta\tb\t0\n", header="id\tq1\tq2\tquestion1\tquestion2\tdup\n")
    with pytest.raises(DataFormatError, match=r"quora_duplicate_questions\.tsv, line 1: expected "
                                              r"the header 'id qid1 qid2 question1 question2 "
                                              r"is_duplicate' \(tab-separated\)"):
        list(iter_quora_pairs(path, on_error="skip", skips=SkipCounter("q")))


BAD = [
    ("5\t9\t10\tWhat is this?\t\t0\n", r"line 4: expected a non-empty question2; got ''"),
    ("5\t9\t10\t \tWhat?\t1\n", r"line 4: expected a non-empty question1; got ' '"),
    ("5\t9\t10\tA?\tB?\tyes\n", r"line 4: expected is_duplicate 0 or 1; got 'yes'"),
    ("5\t9\t10\tA?\tB?\n", r"line 4: expected 6 tab-separated fields \(id qid1 qid2 question1 "
                           r"question2 is_duplicate\); got 5 fields"),
    ("x5\t9\t10\tA?\tB?\t1\n", r"line 4: expected an integer id; got 'x5'"),
]


@pytest.mark.parametrize(("row", "message"), BAD)
def test_malformed_rows(tmp_path, row, message):
    # Header on line 1; the first row spans lines 2-3 (a quoted line break), so the bad row
    # starts on line 4: line numbers count physical lines.
    body = '0\t1\t2\t"multi\nline"\tb?\t0\n' + row
    path = write(tmp_path, body)
    with pytest.raises(DataFormatError, match=re.escape(str(path)) + ", " + message):
        list(iter_quora_pairs(path))


def test_skip_mode_counts(tmp_path):
    body = "0\t1\t2\ta?\tb?\t1\n" + "".join(row for row, _ in BAD) + "9\t1\t2\tc?\td?\t0\n"
    skips = SkipCounter("quora")
    pairs = list(iter_quora_pairs(write(tmp_path, body), on_error="skip", skips=skips))
    assert [p.id for p in pairs] == [0, 9]
    assert skips.total == 5
    assert skips.counts["is_duplicate 0 or 1"] == 1
    assert skips.counts["a non-empty question2"] == 1


def test_crlf_line_endings(tmp_path):
    path = tmp_path / "crlf.tsv"
    path.write_bytes(HEADER.replace("\n", "\r\n").encode() + b'1\t2\t3\t"a\r\nb?"\tc?\t1\r\n'
                     b"4\t5\t6\td?\te?\tmaybe\r\n")
    with pytest.raises(DataFormatError, match=r"crlf\.tsv, line 4: expected is_duplicate"):
        list(iter_quora_pairs(path))
    skips = SkipCounter("q")
    assert list(iter_quora_pairs(path, on_error="skip", skips=skips)) == [
        QuoraPair(1, 2, 3, "a\r\nb?", "c?", True)]
    assert skips.total == 1


def test_unclosed_quote_raises_naming_the_lines_even_when_skipping(tmp_path):
    # csv's non-strict dialect takes the rows after the unclosed quote into question1; that
    # record spans lines 2-5 and is an error in skip mode too (3 good rows went into it).
    body = ('0\t1\t2\t"unclosed?\tb?\t0\n'
            "1\t3\t4\tc?\td?\t1\n2\t5\t6\te?\tf?\t0\n3\t7\t8\tg?\th?\t1\n")
    path = write(tmp_path, body)
    message = (re.escape(str(path)) + r", lines 2-5: expected 6 tab-separated fields .*; got 4 "
               r"fields .* \(a quote opened on line 2 is never closed\?\)$")
    with pytest.raises(DataFormatError, match=message):
        list(iter_quora_pairs(path))
    with pytest.raises(DataFormatError, match=message):
        list(iter_quora_pairs(path, on_error="skip", skips=SkipCounter("q")))
