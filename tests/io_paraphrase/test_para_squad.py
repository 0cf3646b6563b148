"""SQuAD v1.1 files and prediction files: round trips, validation messages, skip mode."""

from __future__ import annotations

import copy
import json
import re

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.squad import (
    SquadAnswer,
    SquadDataset,
    SquadQuestion,
    build_squad,
    read_squad,
    write_squad,
)
from tasks.io.squad_predictions import read_predictions, write_predictions

CONTEXT_1 = "Zürich — «the city» on the Limmat; it's home to ETH (1855)."
CONTEXT_2 = 'He said: "¿Dónde está?" and left\ttabbed.\nNew line 東京.'


def sample() -> dict:
    """A small file laid out like the paraphrased sets: ``qas`` before ``context``."""
    return {
        "version": "1.1",
        "data": [
            {"title": "Zürich", "paragraphs": [
                {"qas": [
                    {"answers": [{"text": "Limmat", "answer_start": 27},
                                 {"text": "the Limmat", "answer_start": 23}],
                     "question": "Which river flows through Zürich?", "id": "q1"},
                    {"answers": [{"text": "1855", "answer_start": 53}],
                     "question": "When was ETH founded?", "id": "q2", "extra": [1, 2]},
                ], "context": CONTEXT_1},
            ]},
            {"paragraphs": [
                {"qas": [{"question": "What was asked?", "id": "q3",
                          "answers": [{"answer_start": 9, "text": '"¿Dónde está?"'}]}],
                 "context": CONTEXT_2},
            ], "title": "Quotes \"&\" 東京"},
        ],
    }


def write(tmp_path, obj, name="dev_para.json"):
    path = tmp_path / name
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def test_sample_offsets_are_right():
    assert CONTEXT_1[27:33] == "Limmat" and CONTEXT_1[53:57] == "1855"
    assert CONTEXT_2[9:23] == '"¿Dónde está?"'


def test_read_views(tmp_path):
    ds = read_squad(write(tmp_path, sample()))
    assert ds.version == "1.1" and len(ds) == 3
    first = next(ds.questions())
    assert first == SquadQuestion("q1", "Which river flows through Zürich?",
                                  (SquadAnswer("Limmat", 27), SquadAnswer("the Limmat", 23)),
                                  CONTEXT_1, "Zürich")
    by_id = ds.by_id()
    assert list(by_id) == ["q1", "q2", "q3"]
    assert by_id["q3"].title == 'Quotes "&" 東京' and by_id["q3"].context == CONTEXT_2


def test_round_trip_keeps_content_and_key_order(tmp_path):
    original = write(tmp_path, sample())
    out = write_squad(tmp_path / "out" / "copy.json", read_squad(original))
    text = out.read_text(encoding="utf-8")
    assert json.loads(text) == sample()
    assert "東京" in text  # ensure_ascii=False
    # Same key order per object, hence the same serialisation.
    assert text == json.dumps(sample(), ensure_ascii=False)
    # A raw dict is accepted as well.
    write_squad(tmp_path / "raw.json", sample())
    assert json.loads((tmp_path / "raw.json").read_text(encoding="utf-8")) == sample()


def test_build_squad(tmp_path):
    raw = build_squad("1.1", [
        ("Zürich", [(CONTEXT_1, [("q1", "Which river?", [("Limmat", 27), ("the Limmat", None)]),
                                 ("q2", "When?", [SquadAnswer("1855", 53)])])]),
        ("Other", [(CONTEXT_2, [("q3", "What?", [('"¿Dónde está?"', None)])])]),
    ])
    assert list(raw) == ["data", "version"]
    assert list(raw["data"][0]["paragraphs"][0]) == ["context", "qas"]
    ds = SquadDataset(raw)
    assert [a.answer_start for a in ds.by_id()["q1"].answers] == [27, 23]
    assert ds.by_id()["q3"].answers[0].answer_start == 9
    out = write_squad(tmp_path / "built.json", raw)
    assert read_squad(out).raw == raw


def test_build_squad_rejects_bad_span():
    with pytest.raises(DataFormatError, match=r"<build_squad>, data\[0\]\.paragraphs\[0\]"
                                              r"\.qas\[0\] \(question id 'q1'\), answers\[0\]"):
        build_squad("1.1", [("T", [("abc def", [("q1", "Q?", [("def", 0)])])])])
    with pytest.raises(DataFormatError, match="an answer text found in the context"):
        build_squad("1.1", [("T", [("abc def", [("q1", "Q?", [("xyz", None)])])])])


def mutate(fn):
    raw = sample()
    fn(raw)
    return raw


QA0 = r"data\[0\]\.paragraphs\[0\]\.qas\[0\]"
BAD = [
    (lambda r: r.update(version=1.1), r"top level: expected a string 'version'; got 1\.1"),
    (lambda r: r.pop("data"), r"top level: expected a list 'data'; got no 'data'"),
    (lambda r: r["data"][1].pop("title"),
     r"data\[1\] \(holding 1 question\): expected an object with keys 'title' \(string\) and "
     r"'paragraphs' \(list\); got no 'title'"),
    (lambda r: r["data"][0]["paragraphs"][0].pop("context"),
     r"data\[0\]\.paragraphs\[0\] \(holding 2 questions\): expected an object with keys "
     r"'context' .*; got no 'context'"),
    (lambda r: r["data"][0]["paragraphs"].append(["not", "a paragraph"]),
     r"data\[0\]\.paragraphs\[1\]: expected an object with keys 'context' .*; got a list"),
    (lambda r: r["data"][0]["paragraphs"][0]["qas"][0].pop("question"),
     QA0 + r" \(question id 'q1'\): expected an object with keys 'id' .*; got no 'question'"),
    (lambda r: r["data"][0]["paragraphs"][0]["qas"][0].pop("id"),
     QA0 + r": expected an object with keys 'id' \(string\).*; got no 'id'"),
    (lambda r: r["data"][0]["paragraphs"][0]["qas"][0]["answers"][1].update(answer_start="23"),
     QA0 + r" \(question id 'q1'\), answers\[1\]: expected an integer 'answer_start'; got '23'"),
    (lambda r: r["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].update(answer_start=28),
     QA0 + r" \(question id 'q1'\), answers\[0\]: expected answer_start 28 to point at the "
           r"answer text 'Limmat' in the context; got context\[28:34\] = 'immat;'; "
           r"the text occurs at 27"),
    (lambda r: r["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].pop("text"),
     QA0 + r" \(question id 'q1'\), answers\[0\]: expected an object with keys 'text'.*"
           r"got no 'text'"),
    (lambda r: r["data"][1]["paragraphs"][0]["qas"][0].update(id="q1"),
     r"data\[1\]\.paragraphs\[0\]\.qas\[0\] \(question id 'q1'\): expected unique question "
     r"ids; got 'q1' already at " + QA0),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_validation_messages(tmp_path, change, message):
    path = write(tmp_path, mutate(change))
    with pytest.raises(DataFormatError, match=re.escape(str(path)) + ", " + message):
        read_squad(path)


def test_a_bad_paragraph_is_one_error_in_the_traceback(tmp_path):
    """The error naming the held questions replaces the first one (no chained twin)."""
    import traceback

    path = write(tmp_path, mutate(lambda r: r["data"][0]["paragraphs"][0].pop("context")))
    with pytest.raises(DataFormatError) as info:
        read_squad(path)
    shown = "".join(traceback.format_exception(info.value))
    assert shown.count("got no 'context'") == 1 and "(holding 2 questions)" in shown


def test_not_json_and_not_object(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"version": "1.1",\n "data": [}', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"broken\.json, line 2, column \d+: expected "
                                              r"valid JSON"):
        read_squad(path)
    (tmp_path / "empty.json").write_text(" \n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"empty\.json, line 2, column 1: expected valid "
                                              r"JSON; got an empty file$"):
        read_squad(tmp_path / "empty.json")
    with pytest.raises(DataFormatError, match=r"top level: expected an object with keys"):
        read_squad(write(tmp_path, [1, 2]))


def test_skip_mode_drops_bad_records(tmp_path):
    def change(raw):
        qas = raw["data"][0]["paragraphs"][0]["qas"]
        qas[0]["answers"][0]["answer_start"] = 0
        raw["data"][1]["paragraphs"][0]["qas"][0]["id"] = "q2"  # duplicate of q2
        raw["data"].append({"title": "no paragraphs"})

    skips = SkipCounter("squad")
    ds = read_squad(write(tmp_path, mutate(change)), on_error="skip", skips=skips)
    assert [q.id for q in ds.questions()] == ["q2"] and len(ds) == 1
    assert skips.total == 3
    # A skipped article counts as one record; its message says what it held (nothing here).
    assert any(example.endswith("data[2]: expected an object with keys 'title' (string) and "
                                "'paragraphs' (list); got no 'paragraphs'")
               for example in skips.examples), skips.examples
    assert skips.counts["unique question ids"] == 1
    assert len(ds.raw["data"]) == 2 and ds.raw["data"][1]["paragraphs"][0]["qas"] == []
    # Key order of the edited objects is unchanged.
    assert list(ds.raw["data"][0]["paragraphs"][0]) == ["qas", "context"]
    out = write_squad(tmp_path / "clean.json", ds)
    assert len(read_squad(out)) == 1


def test_write_squad_validates(tmp_path):
    raw = sample()
    raw["data"][0]["paragraphs"][0]["qas"][1]["answers"][0]["answer_start"] = True
    with pytest.raises(DataFormatError, match=r"bad\.json, .*expected an integer 'answer_start'"):
        write_squad(tmp_path / "bad.json", raw)
    assert not (tmp_path / "bad.json").exists()


def test_dataset_is_not_mutated_by_raise_mode(tmp_path):
    raw = sample()
    before = copy.deepcopy(raw)
    write_squad(tmp_path / "a.json", raw)
    assert raw == before


def test_predictions_round_trip(tmp_path):
    preds = {"q1": "the Limmat", "q2": "«1855» — “ok”", "東京": ""}
    out = write_predictions(tmp_path / "preds" / "predictions.json", preds)
    assert "東京" in out.read_text(encoding="utf-8")
    assert read_predictions(out) == preds


def test_predictions_errors(tmp_path):
    path = write(tmp_path, ["q1", "a"], name="predictions.json")
    with pytest.raises(DataFormatError, match=r"predictions\.json, top level: expected a JSON "
                                              r"object \{question_id: answer_text\}; got a list"):
        read_predictions(path)
    path = write(tmp_path, {"q1": "a", "q2": 3, "q3": ["b"]}, name="predictions.json")
    with pytest.raises(DataFormatError, match=r"predictions\.json, question id 'q2': expected a "
                                              r"string answer text; got 3"):
        read_predictions(path)
    skips = SkipCounter("predictions")
    assert read_predictions(path, on_error="skip", skips=skips) == {"q1": "a"}
    assert skips.total == 2
    with pytest.raises(TypeError):
        write_predictions(tmp_path / "p.json", {"q1": 1})  # type: ignore[dict-item]
