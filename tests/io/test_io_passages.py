"""DPR passage TSV and Pyserini JsonCollection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.passages import Passage, count_passages, iter_passages, write_passages
from tasks.io.pyserini_collection import (
    CollectionDoc,
    iter_json_collection,
    passage_contents,
    write_json_collection,
)

PASSAGES = [
    Passage("1", 'Aaron Aaron ( or ; "Ahärôn") is a prophet', "Aaron"),
    Passage("2", "Zürich is\ta city;\nit has a lake", 'The "Zürich" page'),
    Passage("3", "東京 is the capital", "東京"),
    Passage("4", '"Quoted start" and trailing quote"', " padded "),
    Passage("5", "", "Empty text"),
]


def test_round_trip_with_quotes_tabs_and_newlines(tmp_path: Path) -> None:
    path = tmp_path / "psgs_w100.tsv"
    assert write_passages(path, PASSAGES) == 5
    assert path.read_text(encoding="utf-8").startswith("id\ttext\ttitle\n")
    assert list(iter_passages(path)) == PASSAGES
    assert count_passages(path) == 5


def test_reads_dpr_release_quoting(tmp_path: Path) -> None:
    path = tmp_path / "psgs_w100.tsv"
    path.write_text('id\ttext\ttitle\n'
                    '1\t"Aaron Aaron ( or ; ""Ahärôn"") is a prophet"\tAaron\n'
                    '2\t"So ""he"" said"\t"Title ""x"""\n', encoding="utf-8")
    assert list(iter_passages(path)) == [
        Passage("1", 'Aaron Aaron ( or ; "Ahärôn") is a prophet', "Aaron"),
        Passage("2", 'So "he" said', 'Title "x"'),
    ]


def test_wrong_header(tmp_path: Path) -> None:
    path = tmp_path / "psgs_bad_header.tsv"
    path.write_text("id\ttitle\ttext\n1\tx\ty\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"psgs_bad_header\.tsv, line 1: expected the header "
                                              r"id<TAB>text<TAB>title; got \['id', 'title'"):
        list(iter_passages(path))


def test_wrong_field_count_and_empty_id(tmp_path: Path) -> None:
    path = tmp_path / "psgs.tsv"
    path.write_text('id\ttext\ttitle\n1\t"multi\nline"\tA\n2\tonly two\n\tno id\tB\n4\tok\tC\n',
                    encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"psgs\.tsv, line 4: expected 3 tab-separated "
                                              r"fields \(id, text, title\); got 2 in"):
        list(iter_passages(path))
    skips = SkipCounter("passages")
    kept = list(iter_passages(path, on_error="skip", skips=skips))
    assert [p.id for p in kept] == ["1", "4"]
    assert skips.total == 2
    assert any("line 5: expected a non-empty passage id" in e for e in skips.examples)


@pytest.mark.parametrize(("layout", "expected"), [
    ("title_text", "Zürich\nZürich is a city"),
    ("title_space_text", "Zürich Zürich is a city"),
    ("text", "Zürich is a city"),
])
def test_contents_layouts(layout: str, expected: str) -> None:
    assert passage_contents(Passage("9", "Zürich is a city", "Zürich"), layout) == expected


def test_json_collection_round_trip_and_shards(tmp_path: Path) -> None:
    out = tmp_path / "collection"
    files = write_json_collection(out, PASSAGES, shard_size=2)
    assert [f.name for f in files] == ["docs00000.jsonl", "docs00001.jsonl", "docs00002.jsonl"]
    first = json.loads(files[0].read_text(encoding="utf-8").splitlines()[0])
    assert first == {"id": "1", "contents": 'Aaron\nAaron Aaron ( or ; "Ahärôn") is a prophet'}
    assert "東京" in files[1].read_text(encoding="utf-8")
    docs = list(iter_json_collection(out))
    assert docs == [CollectionDoc(p.id, f"{p.title}\n{p.text}") for p in PASSAGES]
    # rewriting with fewer passages leaves no stale shard behind
    files = write_json_collection(out, PASSAGES[:1], contents="text")
    assert sorted(p.name for p in out.iterdir()) == ["docs00000.jsonl"]
    assert list(iter_json_collection(files[0])) == [CollectionDoc("1", PASSAGES[0].text)]
    with pytest.raises(ValueError, match="contents must be one of"):
        write_json_collection(out, PASSAGES, contents="title")  # type: ignore[arg-type]


def test_json_collection_errors(tmp_path: Path) -> None:
    out = tmp_path / "coll"
    out.mkdir()
    (out / "docs.jsonl").write_text('{"id": "1", "contents": "a"}\n{"id": "2"}\nnot json\n',
                                    encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"docs\.jsonl, line 2: expected a string "
                                              r"\"contents\"; got None"):
        list(iter_json_collection(out))
    skips = SkipCounter("collection")
    assert [d.id for d in iter_json_collection(out, "skip", skips)] == ["1"]
    assert skips.total == 2
    assert "line 3: expected one JSON value per line" in skips.examples[1]


def test_unclosed_quote_raises_naming_the_lines_even_when_skipping(tmp_path: Path) -> None:
    """csv's non-strict dialect takes every line after an unclosed quote into the field; a bad
    record spanning several lines is an error in skip mode too (its neighbours went into it)."""
    path = tmp_path / "psgs.tsv"
    path.write_bytes(b'id\ttext\ttitle\n1\t"unterminated\tT\n2\tt\tT\n3\tt\tT\n4\tt\tT\n')
    message = (r"psgs\.tsv, lines 2-5: expected 3 tab-separated fields \(id, text, title\); "
               r"got 2 in .* \(a quote opened on line 2 is never closed\?\)$")
    with pytest.raises(DataFormatError, match=message):
        list(iter_passages(path))
    with pytest.raises(DataFormatError, match=message):
        list(iter_passages(path, on_error="skip", skips=SkipCounter("passages")))


def test_unclosed_quote_in_a_title_is_not_taken_for_a_long_title(tmp_path: Path) -> None:
    """A quote opened in the last field takes the later lines into a 3-field record that
    would pass; no title holds a line break, so it is the same error as above."""
    path = tmp_path / "psgs.tsv"
    path.write_bytes(b'id\ttext\ttitle\n1\tt\t"T\n2\tt\tT\n3\tt\tT\n')
    with pytest.raises(DataFormatError, match=r"psgs\.tsv, lines 2-4: expected a title on one "
                       r"line; got .* \(a quote opened on line 2 is never closed\?\)$"):
        list(iter_passages(path, on_error="skip", skips=SkipCounter("passages")))


def test_valid_multi_line_record_and_single_line_skips(tmp_path: Path) -> None:
    path = tmp_path / "psgs.tsv"
    path.write_bytes(b'id\ttext\ttitle\n1\t"two\nlines"\tT\n2\tbad\n3\tt\tT\n')
    skips = SkipCounter("passages")
    kept = list(iter_passages(path, on_error="skip", skips=skips))
    assert kept == [Passage("1", "two\nlines", "T"), Passage("3", "t", "T")]
    assert skips.total == 1 and "line 4: expected 3 tab-separated fields" in skips.examples[0]


def test_repeated_header_is_a_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "psgs.tsv"
    path.write_bytes(b"id\ttext\ttitle\n1\tt\tT\nid\ttext\ttitle\n2\tu\tU\n")
    with pytest.raises(DataFormatError, match=r"psgs\.tsv, line 3: expected a passage record "
                                              r"\(the header only on line 1\); got the header "
                                              r"\['id', 'text', 'title'\]"):
        list(iter_passages(path))
    skips = SkipCounter("passages")
    assert [p.id for p in iter_passages(path, on_error="skip", skips=skips)] == ["1", "2"]
    assert skips.total == 1


@pytest.mark.parametrize(("ids", "line", "again"), [
    (["1", "2", "1"], 4, "'1'"),                    # DPR's integer ids (the bitmap)
    (["7", "3000000", "3000000"], 4, "'3000000'"),  # the bitmap grows
    (["doc-a", "doc-b", "doc-a"], 4, "'doc-a'"),    # any other id (the set)
    (["01", "1", "01"], 4, "'01'"),                 # '01' and '1' are two ids
])
def test_a_repeated_passage_id_is_a_bad_record(tmp_path: Path, ids, line, again) -> None:
    path = tmp_path / "psgs.tsv"
    write_passages(path, [Passage(pid, f"text {i}", f"T{i}") for i, pid in enumerate(ids)])
    with pytest.raises(DataFormatError, match=rf"psgs\.tsv, line {line}: expected a passage id "
                                              rf"not used before in the file; got {again} a "
                                              "second time"):
        list(iter_passages(path))
    skips = SkipCounter("passages")
    kept = list(iter_passages(path, on_error="skip", skips=skips))
    assert [p.id for p in kept] == ids[:2] and kept[0].text == "text 0" and skips.total == 1
