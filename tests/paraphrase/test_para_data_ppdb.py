"""The PPDB lookup table: threshold, filters, lookup, atomic build, bad input."""

from __future__ import annotations

import gzip

import pytest
from para_data_world import RULES, write_mini_world

from tasks.io.errors import DataFormatError
from tasks.paraphrase.ppdb_lookup import (
    PPDBTable,
    build_ppdb_table,
    lookup,
    open_table,
    resolve_pack,
)

GOOD = ("[NN] ||| car ||| automobile ||| PPDB2.0Score=3.5 Identity=0 ||| 0-0 ||| Equivalence")


@pytest.fixture(scope="module")
def table(mini_params, tmp_path_factory):
    path = tmp_path_factory.mktemp("ppdb") / "ppdb.sqlite"
    counts = build_ppdb_table(mini_params.raw_path("ppdb"), path)
    return path, counts


def test_counts_at_each_filter(table):
    _, counts = table
    # 25 rules: 2 at or below 0.25 (rapid 0.2, birth 0.25), 1 with non-terminals, 1 identical.
    assert counts == {"rules": len(RULES), "below_threshold": 2, "nonterminal": 1,
                      "identical": 1, "kept": len(RULES) - 4, "skipped": 0}


def test_lookup_hand_checked(table):
    path, _ = table
    found = lookup(path, ["built", "born", "fast", "capital city", "nothing here", "city"])
    assert found == {
        "built": [("constructed", 3.7), ("erected", 2.2)],  # 1.0 duplicate under [VBD] merged
        "born": [("delivered", 0.2501)],                     # 0.25 is not above 0.25
        "fast": [("quick", 3.1)],                            # rapid (0.2) dropped
        "capital city": [("capital", 3.1), ("main city", 2.0)],
    }


def test_lookup_normalises_case_and_spaces_and_caps(table):
    path, _ = table
    with open_table(path, max_per_phrase=1) as ppdb:
        assert ppdb.lookup(["  Capital   CITY "]) == {"capital city": [("capital", 3.1)]}
        assert ppdb.lookup([]) == {}
        assert len(ppdb) == len(RULES) - 4
        meta = ppdb.meta()
    assert meta["min_score"] == 0.25 and meta["counts"]["kept"] == len(RULES) - 4


def test_threshold_is_configurable(mini_params, tmp_path):
    counts = build_ppdb_table(mini_params.raw_path("ppdb"), tmp_path / "t.sqlite",
                              min_score=3.0, batch_size=2)
    # above 3.0: 3.1 3.5 3.7 3.3 3.6 3.1 3.2 (novel 3.0 is not above; city->city identical)
    assert counts["kept"] == 7 and counts["identical"] == 1
    found = lookup(tmp_path / "t.sqlite", ["built", "wrote", "big"])
    assert found == {"built": [("constructed", 3.7)], "wrote": [("authored", 3.5)],
                     "big": [("large", 3.6)]}


def test_gzipped_pack_streams(tmp_path):
    path = tmp_path / "ppdb-2.0-s-lexical.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(GOOD + "\n\n" + GOOD.replace("automobile", "motorcar").replace("3.5", "0.1"))
    counts = build_ppdb_table(path, tmp_path / "t.sqlite")
    assert counts["kept"] == 1 and counts["below_threshold"] == 1
    assert lookup(tmp_path / "t.sqlite", ["car"]) == {"car": [("automobile", 3.5)]}


@pytest.mark.parametrize("bad, expected", [
    ("[NN] ||| car ||| automobile ||| PPDB2.0Score=3.5 ||| 0-0", "6 ' ||| '-separated fields"),
    ("[NN] ||| car ||| automobile ||| PPDB2.0Score=high ||| 0-0 ||| Equivalence",
     "a numeric PPDB2.0Score"),
])
def test_bad_line_raises_naming_file_and_line_and_leaves_nothing(tmp_path, bad, expected):
    path = tmp_path / "ppdb-2.0-s-all"
    path.write_text(GOOD + "\n" + bad + "\n", encoding="utf-8")
    target = tmp_path / "out" / "ppdb.sqlite"
    with pytest.raises(DataFormatError, match=expected) as info:
        build_ppdb_table(path, target)
    assert info.value.where == "line 2" and info.value.path == str(path)
    assert not target.parent.exists() or list(target.parent.iterdir()) == []


def test_failed_rebuild_keeps_the_previous_table(tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.write_text(GOOD + "\n", encoding="utf-8")
    bad.write_text("not ||| a rule\n", encoding="utf-8")
    target = tmp_path / "ppdb.sqlite"
    build_ppdb_table(good, target)
    with pytest.raises(DataFormatError):
        build_ppdb_table(bad, target)
    assert lookup(target, ["car"]) == {"car": [("automobile", 3.5)]}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "good", "ppdb.sqlite"]


def test_bad_lines_are_counted_in_skip_mode(tmp_path):
    path = tmp_path / "ppdb"
    path.write_text("\n".join([
        GOOD,
        "[NN] ||| car ||| auto ||| PPDB2.0Score=3.5 ||| 0-0",                  # 5 fields
        "[NN] ||| car ||| auto ||| PPDB2.0Score=x ||| 0-0 ||| Equivalence",     # not a number
    ]) + "\n", encoding="utf-8")
    counts = build_ppdb_table(path, tmp_path / "t.sqlite", on_error="skip")
    assert counts["kept"] == 1 and counts["skipped"] == 2
    with PPDBTable(tmp_path / "t.sqlite") as ppdb:
        assert "2 records" in ppdb.meta()["skip_summary"]


def test_missing_or_foreign_table(tmp_path):
    with pytest.raises(FileNotFoundError, match="no PPDB lookup table"):
        PPDBTable(tmp_path / "absent.sqlite")
    (tmp_path / "x.sqlite").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(ValueError, match="not a PPDB lookup table"):
        PPDBTable(tmp_path / "x.sqlite")


def test_pack_size_is_configurable(tmp_path):
    base = tmp_path / "ppdb" / "ppdb-2.0-s-all"
    assert resolve_pack(base, None) == base
    assert resolve_pack(base, "xl") == tmp_path / "ppdb" / "ppdb-2.0-xl-all"
    assert resolve_pack(tmp_path / "ppdb-2.0-l-lexical.gz", "m").name == "ppdb-2.0-m-lexical.gz"
    with pytest.raises(ValueError, match="pack size"):
        resolve_pack(base, "huge")
    with pytest.raises(ValueError, match="does not follow"):
        resolve_pack(tmp_path / "rules.txt", "s")


def test_mini_world_writes_where_sources_point(mini_params):
    # the fixture's files are at the configured source paths (what the flow reads)
    for key in ("ppdb", "squad_dev", "quora", "wikianswers"):
        assert mini_params.raw_path(key).is_file()
    assert write_mini_world  # imported helper used by the session fixture
