"""SQuAD and prediction files: repeated JSON keys and empty ids, questions and answer texts are
errors naming the file and the record (audit items #7 and #16)."""

from __future__ import annotations

import json

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.squad import build_squad, read_squad, validate_squad
from tasks.io.squad_predictions import read_predictions

CONTEXT = "Paris is the capital of France."


def _squad() -> dict:
    return {"version": "1.1", "data": [{"title": "France", "paragraphs": [
        {"context": CONTEXT, "qas": [
            {"id": "q1", "question": "What is the capital of France?",
             "answers": [{"text": "Paris", "answer_start": 0}]},
            {"id": "q2", "question": "Paris is the capital of what?",
             "answers": [{"text": "France", "answer_start": 24}]},
        ]}]}]}


def test_repeated_prediction_ids_are_an_error_naming_them(tmp_path):
    path = tmp_path / "preds.json"
    path.write_text('{"q1": "Paris", "q2": "x", "q1": "Rome", "q2": "y", "q3": "z"}')
    with pytest.raises(DataFormatError) as info:
        read_predictions(path)
    message = str(info.value)
    assert message.startswith(f"{path}, top level: expected each question id once")
    assert "'q1'" in message and "'q2'" in message and "'q3'" not in message


def test_unique_prediction_ids_still_read(tmp_path):
    path = tmp_path / "preds.json"
    path.write_text('{"q1": "Paris", "q2": "France"}')
    assert read_predictions(path) == {"q1": "Paris", "q2": "France"}


def test_a_repeated_key_in_the_squad_file_names_the_record(tmp_path):
    text = json.dumps(_squad()).replace('"context": ', '"context": "Lyon.", "context": ', 1)
    path = tmp_path / "dev.json"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=r"dev\.json, data\[0\]\.paragraphs\[0\]: "
                                              r"expected each key once in a JSON object; "
                                              r"got 'context' 2 times"):
        read_squad(path)


def test_a_repeated_key_deep_in_the_squad_file(tmp_path):
    text = json.dumps(_squad()).replace('"answer_start": 24', '"answer_start": 24, '
                                        '"answer_start": 0')
    path = tmp_path / "dev.json"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=r"data\[0\]\.paragraphs\[0\]\.qas\[1\]"
                                              r"\.answers\[0\]: .*'answer_start' 2 times"):
        read_squad(path)


@pytest.mark.parametrize("qa_index, change, where, expected", [
    (0, {"id": ""}, r"data\[0\]\.paragraphs\[0\]\.qas\[0\]", "a non-empty 'id'"),
    (1, {"question": ""}, r"data\[0\]\.paragraphs\[0\]\.qas\[1\] \(question id 'q2'\)",
     "a non-empty 'question'"),
    (1, {"answers": [{"text": "France", "answer_start": 24}, {"text": "", "answer_start": 3}]},
     r"data\[0\]\.paragraphs\[0\]\.qas\[1\] \(question id 'q2'\), answers\[1\]",
     "a non-empty answer 'text'"),
])
def test_empty_id_question_and_answer_text_are_errors(tmp_path, qa_index, change, where,
                                                      expected):
    raw = _squad()
    raw["data"][0]["paragraphs"][0]["qas"][qa_index].update(change)
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(DataFormatError, match=rf"dev\.json, {where}: expected {expected}; "
                                              r"got ''"):
        read_squad(path)
    skips = SkipCounter(str(path))
    dataset = read_squad(path, on_error="skip", skips=skips)
    assert skips.total == 1 and len(dataset) == 1


def test_build_squad_refuses_an_empty_question():
    with pytest.raises(DataFormatError, match="a non-empty 'question'"):
        build_squad("1.1", [("T", [(CONTEXT, [("q1", "", [("Paris", 0)])])])])


def test_valid_file_is_unchanged():
    raw = _squad()
    assert validate_squad(raw) == _squad()


def test_invalid_utf8_names_the_line(tmp_path):
    """A byte that is not UTF-8 in a SQuAD or predictions file: the error names its line."""
    path = tmp_path / "predictions.json"
    path.write_bytes(b'{\n"q1": "Paris",\n"q2": "Ro\xffme"\n}\n')
    with pytest.raises(DataFormatError, match=r"predictions\.json, line 3: expected UTF-8 text; "
                       r"got invalid start byte at byte 9"):
        read_predictions(path)
