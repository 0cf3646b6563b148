"""Reading part of a passage TSV from a mark: the same passages and errors as a full read."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from tasks.io.errors import DataFormatError
from tasks.io.passages import (
    Passage,
    iter_passages,
    iter_passages_from,
    mark_passages,
    write_passages,
)

# quoted fields with tabs, quotes and line breaks, non-ASCII text, an empty text
PASSAGES = [Passage(str(i), f'text {i} "q" é\ttab' + ("\nsecond line" if i % 3 == 0 else ""),
                    f"Title {i} 東京") for i in range(1, 24)] + [Passage("24", "", "Empty")]


def _written(tmp_path: Path, bom: bool = False, crlf: bool = False) -> Path:
    path = tmp_path / "psgs_w100.tsv"
    write_passages(path, PASSAGES)
    raw = path.read_bytes()
    if crlf:  # line breaks between records only: those inside quoted fields stay as written
        raw = raw.replace(b'\n', b'\r\n').replace(b'\r\nsecond', b'\nsecond')
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + raw)
    return path


@pytest.mark.parametrize(("bom", "crlf"), [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("every", [1, 4, 7, 100])
def test_every_mark_reads_on_as_the_full_read(tmp_path, bom, crlf, every):
    path = _written(tmp_path, bom, crlf)
    full = list(iter_passages(path))
    marks = mark_passages(path, every)
    assert [m.index for m in marks] == list(range(0, len(full), every))
    for mark in marks:
        assert list(iter_passages_from(path, mark)) == full[mark.index:]


def test_a_mark_names_the_records_first_line(tmp_path):
    path = _written(tmp_path)
    lines = path.read_text(encoding="utf-8").split("\n")
    for mark in mark_passages(path, 5):
        assert lines[mark.line - 1].startswith(f"{PASSAGES[mark.index].id}\t")


def test_marking_checks_every_record_as_the_full_read_does(tmp_path):
    path = _written(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "25\tno title\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as full:
        list(iter_passages(path))
    with pytest.raises(DataFormatError) as marked:
        mark_passages(path, 4)
    assert str(marked.value) == str(full.value)
    path.write_text(text + "7\trepeated id\tX\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="a second time"):
        mark_passages(path, 4)


def test_an_error_after_a_mark_names_the_files_own_line(tmp_path):
    path = _written(tmp_path)
    marks = mark_passages(path, 8)
    path.write_text(path.read_text(encoding="utf-8") + "\tno id\tX\n", encoding="utf-8")
    with pytest.raises(DataFormatError) as full:
        list(iter_passages(path))
    with pytest.raises(DataFormatError) as from_mark:
        list(iter_passages_from(path, marks[-1]))
    assert str(from_mark.value) == str(full.value)
    assert "line" in str(full.value)


def test_a_slice_after_a_mark_is_the_same_slice(tmp_path):
    path = _written(tmp_path)
    full = list(iter_passages(path))
    mark = mark_passages(path, 10)[1]
    assert list(itertools.islice(iter_passages_from(path, mark), 3, 7)) == full[13:17]


def test_mark_every_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="every must be >= 1"):
        mark_passages(_written(tmp_path), 0)
