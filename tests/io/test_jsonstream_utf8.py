"""The streamed JSON-array reader names the line of an invalid UTF-8 byte, with the record index,
in one plain line (audit item #12); other JSON errors keep their message."""

from __future__ import annotations

import pytest

from tasks.io._jsonstream import iter_json_array
from tasks.io.errors import DataFormatError


def test_invalid_utf8_names_record_and_line(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b'[\n{"q": "one"},\n{"q": "tw\xffo"}\n]\n')
    items = iter_json_array(path, "a JSON array of examples")
    assert next(items) == (0, {"q": "one"})
    with pytest.raises(DataFormatError) as info:
        next(items)
    assert str(info.value) == (f"{path}, record 1, line 3: expected UTF-8 text; "
                               "got invalid start byte at byte 9")
    assert "\n" not in str(info.value) and "b'" not in str(info.value)


def test_truncated_multibyte_character(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes('[{"q": "é"}, {"q": "x'.encode() + "€".encode()[:2] + b'"}]')
    with pytest.raises(DataFormatError, match=r"a\.json, record 1, line 1: expected UTF-8 "
                                              r"text; got (invalid|unexpected)"):
        list(iter_json_array(path))


def test_other_json_errors_keep_their_message(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b'[{"q": 1},\n{"q": x}]')
    with pytest.raises(DataFormatError, match=r"a\.json, record 1, line 2, column 7: expected "
                                              r"well-formed JSON \(a JSON array\); got lexical "
                                              r"error: invalid char in json text\.$"):
        list(iter_json_array(path))


def test_a_file_over_the_position_limit_names_the_record_only(tmp_path, monkeypatch):
    from tasks.io import _jsonstream

    path = tmp_path / "a.json"
    path.write_bytes(b'[{"q": 1},\n{"q": x}]')
    monkeypatch.setattr(_jsonstream, "POSITION_MAX_BYTES", path.stat().st_size - 1)
    with pytest.raises(DataFormatError, match=r"a\.json, record 1: expected well-formed JSON"):
        list(iter_json_array(path))


def test_a_bad_byte_outside_a_string_is_a_plain_one_line_json_error(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b'[{"q": 1},\n{"q": 1, \xff: 2}]')
    with pytest.raises(DataFormatError) as info:
        list(iter_json_array(path))
    assert str(info.value) == (f"{path}, record 1: expected well-formed JSON (a JSON array); "
                               "got lexical error: invalid char in json text.")
