"""TREC run files and fingerprinted Parquet tables."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.tables import (
    FINGERPRINT_KEY,
    compute_table_fingerprint,
    read_table,
    table_fingerprint,
    write_table,
)
from tasks.io.trec import (
    _WHITE_SPACE,
    _read_line_by_line,
    _read_well_formed,
    read_trec_run,
    write_trec_run,
)

RUN = {
    "q1": [("doc7", 12.5), ("doc3", 11.0), ("Zürich_1", 1e-05)],
    "q2": [("東京", -0.1)],
}


def test_trec_round_trip(tmp_path: Path) -> None:
    path = write_trec_run(tmp_path / "run.trec", RUN, tag="bm25")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "q1 Q0 doc7 1 12.5 bm25" and lines[3] == "q2 Q0 東京 1 -0.1 bm25"
    assert read_trec_run(path) == RUN
    with pytest.raises(ValueError, match="white space"):
        write_trec_run(tmp_path / "bad.trec", {"q 1": [("d", 1.0)]}, tag="x")


def _trec_eval_order(path: Path) -> dict[str, list[str]]:
    """Each query's documents as trec_eval ranks them: by score, ties by docno descending
    (its ``form_res_rels``), the rank column ignored."""
    rows: dict[str, list[tuple[float, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, _, docid, _, score, _ = line.split()
        rows.setdefault(qid, []).append((float(score), docid))
    return {qid: [d for _, d in sorted(docs, reverse=True)]
            for qid, docs in rows.items()}


@pytest.mark.parametrize("seed", range(5))
def test_tied_scores_are_written_so_trec_eval_reads_our_ranking(tmp_path: Path,
                                                                seed: int) -> None:
    rng = random.Random(seed)
    run = {}
    for q in range(20):  # RRF-like scores: few distinct values, many ties, random doc ids
        scores = sorted((rng.choice([1 / 61 + 1 / 62, 1 / 61, 1 / 62, 1 / 63, 0.0, -2.5])
                         for _ in range(30)), reverse=True)
        run[f"q{q}"] = [(f"d{rng.randrange(10**6)}_{i}", s) for i, s in enumerate(scores)]
    path = write_trec_run(tmp_path / "fused.trec", run, tag="rrf")
    assert _trec_eval_order(path) == {q: [d for d, _ in r] for q, r in run.items()}
    back = read_trec_run(path)
    assert [[d for d, _ in r] for r in back.values()] == [[d for d, _ in r] for r in run.values()]
    for qid, ranking in run.items():  # each score moved by a few float steps at most
        for (_, given), (_, written) in zip(ranking, back[qid], strict=True):
            assert written <= given and abs(written - given) <= 64 * math.ulp(given or 1e-300)
    untied = {"q": [("a", 3.0), ("b", 2.0), ("c", -1.0)]}  # scores without ties stay exact
    assert read_trec_run(write_trec_run(tmp_path / "u.trec", untied, tag="x")) == untied


def test_a_ranking_out_of_score_order_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"'q1': 'b' at rank 2 scores 2\.0, above the 1\.0 "
                                         r"ranked before it \(not in score order\)"):
        write_trec_run(tmp_path / "bad.trec", {"q1": [("a", 1.0), ("b", 2.0)]}, tag="x")
    assert not (tmp_path / "bad.trec").exists()


def test_trec_sorted_by_rank(tmp_path: Path) -> None:
    path = tmp_path / "shuffled.trec"
    path.write_text("q1 Q0 b 2 1.0 t\nq1 Q0 a 1 2.0 t\n", encoding="utf-8")
    assert read_trec_run(path) == {"q1": [("a", 2.0), ("b", 1.0)]}


@pytest.mark.parametrize(("line", "pattern"), [
    ("q1 Q0 d2 2 1.0", r"line 2: expected 6 white-space separated fields \(qid Q0 docid rank "
                       r"score tag\); got 5"),
    ("q1 d2 2 1.0 tag", r"line 2: expected 6 white-space separated fields"),
    ("q1 X d2 2 1.0 tag", r"line 2: expected 'Q0' as the second field; got 'X'"),
    ("q1 Q0 d2 two 1.0 tag", r"line 2: expected an integer rank \(digits only\); got 'two'"),
    ("q1 Q0 d2 1_0 1.0 tag", r"line 2: expected an integer rank \(digits only\); got '1_0'"),
    ("q1 Q0 d2 +2 1.0 tag", r"line 2: expected an integer rank \(digits only\); got '\+2'"),
    ("q1 Q0 d2 -2 1.0 tag", r"line 2: expected an integer rank \(digits only\); got '-2'"),
    ("q1 Q0 d2 0x2 1.0 tag", r"line 2: expected an integer rank \(digits only\); got '0x2'"),
    ("q1 Q0 d2 2 high tag", r"line 2: expected a numeric score; got 'high'"),
    ("q1 Q0 d2 2 nan tag", r"line 2: expected a finite score; got 'nan'"),
    ("q1 Q0 d2 2 inf tag", r"line 2: expected a finite score; got 'inf'"),
    ("q1 Q0 d2 2 -Infinity tag", r"line 2: expected a finite score; got '-Infinity'"),
    ("q1 Q0 d2 2 1e999 tag", r"line 2: expected a finite score; got '1e999'"),
    ("q1 Q0 d1 2 1.0 tag", r"line 2: expected each document once per query; got d1 again for q1"),
])
def test_trec_errors(tmp_path: Path, line: str, pattern: str) -> None:
    path = tmp_path / "run.trec"
    path.write_text(f"q1 Q0 d1 1 2.0 tag\n{line}\nq1 Q0 d3 3 0.5 tag\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"run\.trec, " + pattern):
        read_trec_run(path)
    skips = SkipCounter("run")
    assert read_trec_run(path, on_error="skip", skips=skips) == {"q1": [("d1", 2.0),
                                                                        ("d3", 0.5)]}
    assert skips.total == 1


def test_trec_bom_is_stripped_on_both_paths(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_bytes("\ufeffq1 Q0 d1 1 2.5 run\nq1 Q0 d2 2 1.5 run\n".encode())
    expected = {"q1": [("d1", 2.5), ("d2", 1.5)]}
    assert _read_well_formed(path) == _read_line_by_line(path, "raise", None) == expected
    path.write_bytes("\ufeffq1 Q0 d1 1 2.5 run\nq1\tQ0\td2\t2\t1.5\trun\n".encode())
    assert _read_well_formed(path) is None and read_trec_run(path) == expected
    path.write_bytes("\ufeffq1 Q0 d1 1 2.5 run\nq1\tQ0\td1\t2\t1.5\trun\n".encode())
    with pytest.raises(DataFormatError, match=r"run\.trec, line 2: expected each document "
                                              r"once per query; got d1 again for q1 \(first "
                                              r"on line 1\)"):
        read_trec_run(path)


def test_trec_fast_reader_equals_the_line_by_line_one(tmp_path: Path) -> None:
    """Arrow's parse of a written run: the same queries in the same order, ranks sorted with
    ties in file order, every score to the last bit (repr round trip), Unicode ids."""
    rng = random.Random(7)
    lines = []
    for qid in ("q9", "Zürich:1", "q1", "東京"):
        ranks = list(range(1, 31)) + [5, 5]                  # two ties at rank 5
        rng.shuffle(ranks)
        for i, rank in enumerate(ranks):
            score = rng.uniform(-1e3, 1e3) * 10 ** rng.randint(-12, 12)
            lines.append(f"{qid} Q0 d{i}é {rank} {score!r} tag")
    rng.shuffle(lines)                                        # queries interleaved
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    fast = _read_well_formed(path)
    slow = _read_line_by_line(path, "raise", None)
    assert fast is not None and fast == slow and list(fast) == list(slow)
    assert [len(hits) for hits in fast.values()] == [32] * 4


def test_trec_white_space_class_is_that_of_str_split() -> None:
    """The Arrow (RE2) class the fast reader rejects ids with holds exactly the characters
    Python's ``str.split()`` splits on, over every code point."""
    import sys

    import pyarrow.compute as pc

    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    found = pc.match_substring_regex(pa.array(chars), _WHITE_SPACE).to_pylist()
    assert [c for c, hit in zip(chars, found, strict=True) if hit] == [c for c in chars
                                                                       if c.isspace()]


@pytest.mark.parametrize("line", [
    "q1 Q0 d2 2 1.0",                       # 5 fields
    "q1  Q0 d2 2 1.0 tag",                  # two spaces
    "q1\tQ0 d2 2 1.0 tag",                  # a tab
    "q1 Q0 d\u00a02 2 1.0 tag",             # a no-break space splits the line-by-line reader
    "q1 Q0 d2 2 1.0 tag ",                  # trailing space
    "q1 X d2 2 1.0 tag",
    "q1 Q0 d2 +2 1.0 tag",                  # Python's int() reads it, Arrow need not
    "q1 Q0 d2 2 1_0 tag",                   # Python's float() reads it, Arrow does not
    "q1 Q0 d2 2 nan tag",
    "q1 Q0 d2 2 inf tag",
    "q1 Q0 d2 2 1e999 tag",                 # a finite literal, an infinite float
    "q1 Q0 d2 0x2 1.0 tag",                 # Arrow reads a hex rank, int() does not
    "q1 Q0 d2 -2 1.0 tag",
    "q1 Q0 d2 99999999999999999999 1.0 tag",  # past int64
    "q1 Q0 d1 2 1.0 tag",                   # d1 twice
    '"q1" Q0 d2 2 1.0 tag',                 # quotes are part of the id
])
def test_trec_fast_reader_leaves_anything_unusual_to_the_line_reader(tmp_path: Path,
                                                                      line: str) -> None:
    path = tmp_path / "run.trec"
    path.write_text(f"q1 Q0 d1 1 2.0 tag\n{line}\n", encoding="utf-8")
    fast = _read_well_formed(path)
    try:
        slow = _read_line_by_line(path, "raise", None)
    except DataFormatError:
        assert fast is None
    else:
        assert fast is None or fast == slow


def test_table_round_trip_and_fingerprint(tmp_path: Path) -> None:
    rows = [{"question": "Where is Zürich?", "rank": 1, "score": 0.5},
            {"question": "東京 \"quoted\"\tx", "rank": 2, "score": None}]
    path = tmp_path / "results.parquet"
    fingerprint = write_table(path, rows, metadata={"relation": "P19"})
    assert len(fingerprint) == 64
    table = read_table(path)
    assert table.to_pylist() == rows
    metadata = table.schema.metadata
    assert metadata[b"relation"] == b"P19" and metadata[FINGERPRINT_KEY.encode()] == \
        fingerprint.encode()
    assert table_fingerprint(path) == fingerprint
    assert compute_table_fingerprint(table) == fingerprint  # stable through Parquet
    # same content in other shapes / chunking / metadata -> same fingerprint
    columns = {"question": [r["question"] for r in rows], "rank": [1, 2], "score": [0.5, None]}
    assert write_table(tmp_path / "cols.parquet", columns) == fingerprint
    chunked = pa.concat_tables([pa.Table.from_pylist(rows[:1]),
                                pa.Table.from_pylist(rows[1:], schema=table.schema)])
    assert compute_table_fingerprint(chunked.replace_schema_metadata(None)) == fingerprint
    changed = [dict(rows[0], rank=3), rows[1]]
    assert write_table(tmp_path / "other.parquet", changed) != fingerprint


def test_table_fingerprint_of_foreign_file_and_errors(tmp_path: Path) -> None:
    table = pa.table({"a": [1, 2, 3]})
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(table, foreign)
    assert table_fingerprint(foreign) == compute_table_fingerprint(table)
    bogus = tmp_path / "bogus.parquet"
    bogus.write_text("not parquet", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"bogus\.parquet, file: expected a Parquet file"):
        read_table(bogus)
    with pytest.raises(DataFormatError, match=r"bogus\.parquet, file: expected a Parquet file"):
        table_fingerprint(bogus)
    with pytest.raises(ValueError, match="set by write_table"):
        write_table(tmp_path / "x.parquet", table, metadata={FINGERPRINT_KEY: "x"})
    with pytest.raises(ValueError, match="pass a schema"):
        write_table(tmp_path / "empty.parquet", [])
    empty_fp = write_table(tmp_path / "empty.parquet", [], schema=pa.schema([("a", pa.int64())]))
    assert read_table(tmp_path / "empty.parquet").num_rows == 0
    assert table_fingerprint(tmp_path / "empty.parquet") == empty_fp
