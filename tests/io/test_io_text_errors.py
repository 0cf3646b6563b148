"""Invalid UTF-8 in the text readers: an error naming the file and the bad line, in both modes.

Each file holds enough valid lines before the bad one that the stream decoder's 8 KB chunks
end elsewhere, so a line number worked out from the chunk would be wrong.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tasks.io.dpr import iter_qa_csv
from tasks.io.entityquestions import read_eq_file
from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.hyperlinks import read_hyperlink_counts
from tasks.io.passages import count_passages, iter_passages
from tasks.io.quora import iter_quora_pairs
from tasks.io.trec import read_trec_run

GOOD = 1000  # valid lines before the bad one: ~20 KB, past the first decoding chunk


def _lines(pattern: bytes) -> bytes:
    return b"".join(pattern % (i, i) for i in range(GOOD))


# (file name, header, one good line with two %d, the bad line with \xff at byte 5, reader)
CASES: dict[str, tuple[str, bytes, bytes, bytes, Callable[..., Any]]] = {
    "passages": ("psgs.tsv", b"id\ttext\ttitle\n", b"%d\tpassage number %d\tT\n",
                 b"9999\t\xff\tT\n", iter_passages),
    "qa_csv": ("nq-test.qa.csv", b"", b'question %d?\t["answer %d"]\n',
               b'who?\t\xff["a"]\n', iter_qa_csv),
    "eq_jsonl": ("P19.test.jsonl", b"", b'{"question": "q%d?", "answers": ["a%d"]}\n',
                 b'{"q\xff": 1}\n', read_eq_file),
    "hyperlinks": ("counts.tsv", b"entity\tcount\n", b"Q%d\t%d\n", b"Q999\xff\t1\n",
                   read_hyperlink_counts),
    "trec": ("run.trec", b"", b"q1 Q0 d%d 1 %d.0 tag\n", b"q1 Q\xff d 1 1.0 tag\n",
             read_trec_run),
    "quora": ("quora.tsv", b"id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n",
              b"%d\t1\t2\tquestion number %d?\tb?\t0\n", b"9999\xff\t1\t2\ta?\tb?\t0\n",
              iter_quora_pairs),
}


def _run(reader: Callable[..., Any], path: Path, **kwargs: Any) -> None:
    result = reader(path, **kwargs)
    if not isinstance(result, dict | list | int):
        list(result)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("mode", ["raise", "skip"])
def test_invalid_utf8_names_the_line(tmp_path: Path, name: str, mode: str) -> None:
    file_name, header, good, bad, reader = CASES[name]
    path = tmp_path / file_name
    path.write_bytes(header + _lines(good) + bad + _lines(good))
    bad_line = GOOD + (2 if header else 1)
    kwargs = {"on_error": "skip", "skips": SkipCounter(name)} if mode == "skip" else {}
    message = (re.escape(str(path)) + rf", line {bad_line}: expected UTF-8 text; "
               r"got invalid start byte at byte \d+$")
    with pytest.raises(DataFormatError, match=message):
        _run(reader, path, **kwargs)


def test_invalid_utf8_in_passage_header_and_count(tmp_path: Path) -> None:
    path = tmp_path / "psgs.tsv"
    path.write_bytes(b"id\ttext\ttitle\xff\n1\tt\tT\n")
    with pytest.raises(DataFormatError, match=r"psgs\.tsv, line 1: expected UTF-8 text"):
        list(iter_passages(path))
    path.write_bytes(b"id\ttext\ttitle\n" + _lines(b"%d\tt %d\tT\n") + b"1\t\xff\tT\n")
    with pytest.raises(DataFormatError, match=rf"psgs\.tsv, line {GOOD + 2}: expected UTF-8"):
        count_passages(path)


def test_invalid_utf8_in_gzipped_quora_names_the_line(tmp_path: Path) -> None:
    _, header, good, bad, _ = CASES["quora"]
    path = tmp_path / "quora.tsv.gz"
    path.write_bytes(gzip.compress(header + _lines(good) + bad))
    with pytest.raises(DataFormatError, match=rf"quora\.tsv\.gz, line {GOOD + 2}: expected "
                                              r"UTF-8 text; got invalid start byte at byte 4"):
        list(iter_quora_pairs(path, on_error="skip", skips=SkipCounter("q")))


@pytest.mark.parametrize("mode", ["raise", "skip"])
def test_invalid_utf8_in_eq_json_list_names_the_line(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "P19.test.json"
    path.write_bytes(b'[\n    {\n        "question": "Wh\xffere?",\n        "answers": ["a"]\n'
                     b"    }\n]")
    kwargs: dict[str, Any] = {"on_error": "skip", "skips": SkipCounter("eq")} if mode == "skip" \
        else {}
    with pytest.raises(DataFormatError, match=r"P19\.test\.json, line 3: expected UTF-8 text; "
                                              r"got invalid start byte at byte 23"):
        read_eq_file(path, **kwargs)


def test_csv_records_give_the_lines_each_record_spans(tmp_path):
    import csv

    from tasks.io.text import csv_records

    path = tmp_path / "x.tsv"
    path.write_text('a\tb\n\n"two\nlines"\tc\nd\te\n', encoding="utf-8")
    with open(path, encoding="utf-8", newline="") as stream:
        records = list(csv_records(csv.reader(stream, delimiter="\t"), path, "rows",
                                   line_offset=10))
    assert records == [(11, 11, ["a", "b"]), (12, 12, []), (13, 14, ["two\nlines", "c"]),
                       (15, 15, ["d", "e"])]
    path.write_text('a\tb\n"c"x\td\n', encoding="utf-8")
    with open(path, encoding="utf-8", newline="") as stream, \
            pytest.raises(DataFormatError, match=r"x.tsv, line 2: expected well-formed rows"):
        list(csv_records(csv.reader(stream, delimiter="\t", strict=True), path,
                         "well-formed rows"))
