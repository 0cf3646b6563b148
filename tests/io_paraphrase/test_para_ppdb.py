"""PPDB 2.0 rule files: round trips, gzip, malformed lines, skip mode."""

from __future__ import annotations

import gzip
import re

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.ppdb import (
    PPDBRule,
    format_ppdb_rule,
    iter_ppdb_rules,
    parse_ppdb_line,
    write_ppdb_rules,
)

GOOD = (
    "[NN] ||| abdomen ||| belly ||| Abstract=0 Lex(e|f)=0.5 p(LHS|e)=-1.2 MVLSASim=NA "
    "PPDB2.0Score=3.0797 ||| 0-0 ||| Equivalence"
)
PHRASAL = (
    "[NP/NN] ||| the [NN,1] of ||| [NN,1] ’s — «café» ||| PPDB2.0Score=1.5 Identity=0 "
    "||| 0-0 1-1 2-2 ||| ForwardEntailment"
)


def write(tmp_path, text, name="ppdb-2.0-s-lexical"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_parse_fields(tmp_path):
    path = write(tmp_path, GOOD + "\n" + PHRASAL + "\n")
    first, second = list(iter_ppdb_rules(path))
    assert first.lhs == "[NN]" and first.phrase == "abdomen" and first.paraphrase == "belly"
    assert first.features["Lex(e|f)"] == "0.5" and first.features["MVLSASim"] == "NA"
    assert first.score == pytest.approx(3.0797)
    assert first.alignment == ((0, 0),) and first.entailment == "Equivalence"
    assert second.paraphrase == "[NN,1] ’s — «café»"
    assert second.alignment == ((0, 0), (1, 1), (2, 2))
    assert list(first.features) == ["Abstract", "Lex(e|f)", "p(LHS|e)", "MVLSASim", "PPDB2.0Score"]


def test_format_reproduces_line():
    for line in (GOOD, PHRASAL):
        assert format_ppdb_rule(parse_ppdb_line(line)) == line


@pytest.mark.parametrize("gz", [False, True])
def test_round_trip(tmp_path, gz):
    rules = [
        PPDBRule("[JJ]", "naïve", "ingénu", {"PPDB2.0Score": "2.5", "x": "y=z"}, ((0, 0),),
                 "ReverseEntailment"),
        PPDBRule("[X]", "¿qué?", "what ? !", {"PPDB2.0Score": "-0.25"}, (), "Independent"),
        PPDBRule("[S]", "«a» , b", "a ; b", {"PPDB2.0Score": "1e-3"}, ((0, 1), (2, 0)),
                 "Exclusion"),
    ]
    out = write_ppdb_rules(tmp_path / "rules.txt", rules, gzip=gz)
    data = out.read_bytes()
    assert data.startswith(b"\x1f\x8b") == gz
    assert list(iter_ppdb_rules(out)) == rules
    assert [r.score for r in iter_ppdb_rules(out, min_score=0.0)] == [2.5, 0.001]


def test_gzip_detected_by_magic_not_name(tmp_path):
    path = tmp_path / "ppdb-2.0-xl-phrasal"  # no .gz suffix, gzipped content
    path.write_bytes(gzip.compress((GOOD + "\n\n" + PHRASAL + "\n").encode()))
    rules = list(iter_ppdb_rules(path))
    assert [r.paraphrase for r in rules] == ["belly", "[NN,1] ’s — «café»"]
    plain = write(tmp_path, GOOD + "\n", name="named.gz")  # .gz name, plain content
    assert len(list(iter_ppdb_rules(plain))) == 1


def test_gzip_write_is_deterministic(tmp_path):
    rule = PPDBRule("[NN]", "a", "b", {"PPDB2.0Score": "1"}, (), "Equivalence")
    one = write_ppdb_rules(tmp_path / "one.gz", [rule], gzip=True).read_bytes()
    two = write_ppdb_rules(tmp_path / "two.gz", [rule], gzip=True).read_bytes()
    assert one == two


def test_min_score(tmp_path):
    path = write(tmp_path, GOOD + "\n" + PHRASAL + "\n")
    assert [r.phrase for r in iter_ppdb_rules(path, min_score=2.0)] == ["abdomen"]


def test_rule_is_frozen_and_hashable():
    rule = PPDBRule("[NN]", "a", "b", {"PPDB2.0Score": "1"}, [[0, 0]], "Equivalence")
    assert rule.alignment == ((0, 0),)
    with pytest.raises(AttributeError):
        rule.phrase = "c"  # type: ignore[misc]
    with pytest.raises(TypeError):
        rule.features["x"] = "1"  # type: ignore[index]
    assert hash(rule) == hash(PPDBRule("[NN]", "a", "b", {"PPDB2.0Score": "1"}, ((0, 0),),
                                       "Equivalence"))


BAD = [
    ("[NN] ||| a ||| b ||| PPDB2.0Score=1 ||| 0-0",
     r"line 2: expected 6 ' \|\|\| '-separated fields .*; got 5 fields"),
    ("[NN] ||| a ||| b ||| PPDB2.0Score=1 junk ||| 0-0 ||| Equivalence",
     r"line 2: expected FEATURES as space-separated name=value items; got 'junk'"),
    ("[NN] ||| a ||| b ||| PPDB2.0Score=high ||| 0-0 ||| Equivalence",
     r"line 2: expected a numeric PPDB2\.0Score; got 'high'"),
    ("[NN] ||| a ||| b ||| PPDB1.0Score=1 ||| 0-0 ||| Equivalence",
     r"line 2: expected a PPDB2\.0Score=<number> feature"),
    ("[NN] ||| a ||| b ||| PPDB2.0Score=1 ||| 0-0 ||| Synonym",
     r"line 2: expected ENTAILMENT in Equivalence, Exclusion, .*; got 'Synonym'"),
    ("[NN] ||| a ||| b ||| PPDB2.0Score=1 ||| 0:0 ||| Equivalence",
     r"line 2: expected ALIGNMENT as space-separated i-j index pairs; got '0:0'"),
]


@pytest.mark.parametrize(("line", "message"), BAD)
def test_malformed_lines(tmp_path, line, message):
    path = write(tmp_path, GOOD + "\n" + line + "\n")
    with pytest.raises(DataFormatError, match=re.escape(str(path)) + ", " + message):
        list(iter_ppdb_rules(path))


def test_bad_utf8_line(tmp_path):
    path = tmp_path / "ppdb"
    path.write_bytes(GOOD.encode() + b"\n[NN] ||| \xff ||| b\n")
    with pytest.raises(DataFormatError, match=r"ppdb, line 2: expected UTF-8 text"):
        list(iter_ppdb_rules(path))


def test_truncated_gzip(tmp_path):
    path = tmp_path / "ppdb.gz"
    path.write_bytes(gzip.compress(((GOOD + "\n") * 200).encode())[:-30])
    with pytest.raises(DataFormatError, match=r"ppdb\.gz, after line \d+: expected a complete"):
        list(iter_ppdb_rules(path))


def test_skip_mode_counts(tmp_path):
    lines = [GOOD] + [line for line, _ in BAD] + [PHRASAL]
    path = tmp_path / "ppdb.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    skips = SkipCounter("ppdb")
    rules = list(iter_ppdb_rules(path, on_error="skip", skips=skips))
    assert [r.phrase for r in rules] == ["abdomen", "the [NN,1] of"]
    assert skips.total == 6
    assert skips.counts["a numeric PPDB2.0Score"] == 1
    assert skips.counts["ALIGNMENT as space-separated i-j index pairs"] == 1
    assert "line 3" in skips.examples[1]


def test_writer_rejects_unwritable_fields(tmp_path):
    rule = PPDBRule("[NN]", "a ||| b", "c", {"PPDB2.0Score": "1"}, (), "Equivalence")
    with pytest.raises(ValueError, match="cannot hold"):
        write_ppdb_rules(tmp_path / "x", [rule])
    assert not (tmp_path / "x").exists()
