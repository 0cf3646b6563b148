"""PPDB / WikiAnswers input errors: a BOM, non-finite or repeated scores, empty fields and
questions are reported (or counted in skip mode), never kept or dropped silently."""

from __future__ import annotations

import gzip
import re

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.ppdb import iter_lines, iter_ppdb_rules, parse_ppdb_line, write_ppdb_rules
from tasks.io.wikianswers import iter_wikianswers_pairs

RULE = "[NN] ||| abbey ||| monastery ||| PPDB2.0Score=3.5 p(e|f)=0.1 ||| 0-0 ||| Equivalence"
PAIR = "how old is the earth ?\twhat is the age of earth ?\t0-0 1-3 4-5"


@pytest.mark.parametrize("gz", [False, True])
def test_bom_is_stripped_from_line_one(tmp_path, gz):
    data = ("\ufeff" + RULE + "\n" + RULE + "\n").encode("utf-8")
    path = tmp_path / "ppdb"
    path.write_bytes(gzip.compress(data) if gz else data)
    first, second = iter_ppdb_rules(path)
    assert first.lhs == "[NN]" and first == second
    assert [text for _, text in iter_lines(path)] == [RULE, RULE]


def test_wikianswers_bom_is_stripped(tmp_path):
    path = tmp_path / "wa.txt"
    path.write_bytes(("\ufeff" + PAIR + "\n").encode("utf-8"))
    (pair,) = iter_wikianswers_pairs(path)
    assert pair.question1 == "how old is the earth ?"


BAD_RULES = [
    (RULE.replace("3.5", "nan"), r"expected a finite numeric PPDB2\.0Score; got 'nan'"),
    (RULE.replace("3.5", "-inf"), r"expected a finite numeric PPDB2\.0Score; got '-inf'"),
    (RULE.replace("3.5", "Infinity"), r"expected a finite numeric PPDB2\.0Score"),
    (RULE.replace("p(e|f)=0.1", "PPDB2.0Score=-9"),
     r"expected each feature once; got 'PPDB2\.0Score' twice"),
    (RULE.replace("p(e|f)=0.1", "Lex=1 Lex=2"), r"expected each feature once; got 'Lex' twice"),
    (" |||  |||  ||| PPDB2.0Score=1 |||  ||| Independent", r"expected a non-empty LHS; got ''"),
    ("[NN] |||  ||| monastery ||| PPDB2.0Score=3.5 ||| 0-0 ||| Equivalence",
     r"expected a non-empty PHRASE; got ''"),
    ("[NN] ||| abbey |||   ||| PPDB2.0Score=3.5 ||| 0-0 ||| Equivalence",
     r"expected a non-empty PARAPHRASE; got ' '"),
]


@pytest.mark.parametrize(("line", "message"), BAD_RULES)
def test_bad_rules_name_the_line(tmp_path, line, message):
    path = tmp_path / "ppdb-2.0-s-lexical"
    path.write_text(RULE + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=re.escape(str(path)) + ", line 2: " + message):
        list(iter_ppdb_rules(path))
    with pytest.raises(DataFormatError, match="<string>, line 7: " + message):
        parse_ppdb_line(line, lineno=7)


def test_bad_rules_are_counted_in_skip_mode_even_with_min_score(tmp_path):
    path = tmp_path / "ppdb"
    path.write_text("\n".join([RULE, *(line for line, _ in BAD_RULES), RULE]) + "\n",
                    encoding="utf-8")
    skips = SkipCounter("ppdb")
    rules = list(iter_ppdb_rules(path, on_error="skip", skips=skips, min_score=0.0))
    assert [r.score for r in rules] == [3.5, 3.5]
    assert skips.total == len(BAD_RULES)
    assert skips.counts["a finite numeric PPDB2.0Score"] == 3
    assert skips.counts["each feature once"] == 2


def test_demo_world_ppdb_still_parses(tmp_path):
    from tasks.demo.paraphrase_resources import build_ppdb

    rules = build_ppdb()
    out = write_ppdb_rules(tmp_path / "ppdb.txt", rules)
    skips = SkipCounter("demo ppdb")
    assert list(iter_ppdb_rules(out, on_error="skip", skips=skips)) == list(rules)
    assert skips.total == 0


@pytest.mark.parametrize(("line", "message"), [
    ("\t\t", r"line 2: expected a non-empty question_1; got ''"),
    ("  \tc d\t", r"line 2: expected a non-empty question_1; got '  '"),
    ("a b\t\t", r"line 2: expected a non-empty question_2; got ''"),
])
def test_wikianswers_empty_questions(tmp_path, line, message):
    path = tmp_path / "wa.txt"
    path.write_text(PAIR + "\n" + line + "\n" + PAIR + "\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=re.escape(str(path)) + ", " + message):
        list(iter_wikianswers_pairs(path))
    skips = SkipCounter("wa")
    assert len(list(iter_wikianswers_pairs(path, on_error="skip", skips=skips))) == 2
    assert skips.total == 1
