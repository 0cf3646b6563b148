"""EntityQuestions files: round trip (byte-exact on the release samples), errors, discovery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.io.entityquestions import (
    EQQuestion,
    discover_eq_files,
    eq_relation_of,
    read_eq_file,
    write_eq_file,
)
from tasks.io.errors import DataFormatError, SkipCounter

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
EQ_DATA = SHARED / "data" / "entityquestions"

QUESTIONS = [
    EQQuestion("Where was Dezső Ránki born?", ("Budapest",)),
    EQQuestion("Where is 東京 located?", ("Japan", "日本")),
    EQQuestion('Who wrote "Zürich\ttales"?', ("Max \"Frisch\"",)),
]


def _release_files() -> list[Path]:
    if not EQ_DATA.is_dir():
        pytest.skip("../shared/data/entityquestions is not available")
    files = sorted(EQ_DATA.glob("dev/*.json")) + sorted(EQ_DATA.glob("one-off/*/*/*.json"))
    assert files
    return files


def test_round_trip_default_and_utf8(tmp_path: Path) -> None:
    path = write_eq_file(tmp_path / "P19.test.json", QUESTIONS)
    text = path.read_text(encoding="utf-8")
    assert text.startswith('[\n    {\n        "question": ') and not text.endswith("\n")
    assert "\\u0151" in text  # release style: ASCII escapes
    assert read_eq_file(path) == QUESTIONS
    raw = write_eq_file(tmp_path / "raw.json", QUESTIONS, ensure_ascii=False)
    assert "東京" in raw.read_text(encoding="utf-8") and read_eq_file(raw) == QUESTIONS
    dicts = write_eq_file(tmp_path / "dicts.json",
                          [{"question": q.question, "answers": list(q.answers)}
                           for q in QUESTIONS])
    assert dicts.read_bytes() == path.read_bytes()


def test_jsonl_variant(tmp_path: Path) -> None:
    path = tmp_path / "P19.dev.jsonl"
    path.write_text("\n".join(json.dumps({"question": q.question, "answers": list(q.answers)})
                              for q in QUESTIONS) + "\n", encoding="utf-8")
    assert read_eq_file(path) == QUESTIONS


@pytest.mark.parametrize(("content", "pattern"), [
    ({"question": "q", "answers": ["a"]},
     r"P36\.dev\.json, top level: expected a JSON list of \{question, answers\}; got dict"),
    ([{"question": "q?", "answers": ["a"]}, {"question": "r?"}],
     r"P36\.dev\.json, record 1: expected an object with \"question\" and \"answers\"; "
     r"got no 'answers'"),
    ([{"question": "q?", "answers": []}],
     r"P36\.dev\.json, record 0: expected a non-empty answers list; got \[\]"),
    ([{"question": "q?", "answers": ["a"]}, {"question": "r?", "answers": ["b", 7]}],
     r"P36\.dev\.json, record 1: expected a string answer \(answers\[1\]\); got 7"),
    ([{"answers": ["a"]}], r"record 0: expected an object with \"question\" and \"answers\"; "
                           r"got no 'question'"),
    ([{"question": "q?", "answers": ["a", " "]}],
     r"record 0: expected a non-blank answer string \(a blank one is found in every passage\) "
     r"\(answers\[1\]\); got ' '"),
])
def test_malformed(tmp_path: Path, content: object, pattern: str) -> None:
    path = tmp_path / "P36.dev.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(DataFormatError, match=pattern):
        read_eq_file(path)


def test_broken_json_names_line(tmp_path: Path) -> None:
    path = tmp_path / "P36.dev.json"
    path.write_text('[\n  {"question": "q?",\n   "answers": ["a"],}\n]', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"P36\.dev\.json, line 3 column \d+: expected a "
                                              r"JSON list"):
        read_eq_file(path)


def test_skip_mode_counts(tmp_path: Path) -> None:
    path = tmp_path / "P36.dev.json"
    path.write_text(json.dumps([{"question": "q?", "answers": ["a"]},
                                {"question": "r?", "answers": []},
                                {"question": "s?", "answers": ["b", None]},
                                {"question": "t?", "answers": ["c"]}]), encoding="utf-8")
    skips = SkipCounter("P36")
    kept = read_eq_file(path, on_error="skip", skips=skips)
    assert [q.question for q in kept] == ["q?", "t?"]
    assert skips.total == 2 and skips.counts["a non-empty answers list"] == 1


@pytest.mark.parametrize(("path", "relation"), [
    ("dataset/test/P19.test.json", "P19"),
    ("dataset/dev/P1412.dev.json", "P1412"),
    ("dataset/one-off/common-random-buckets/P19/bucket3.test.json", "P19"),
    ("dataset/one-off/no-overlap/P159/P159_no_overlap.train.json", "P159"),
    ("dataset/one-off/similar/P170/P170_similar.dev.json", "P170"),
    ("dataset/one-off/no-overlap/P19_no_overlap/P19_no_overlap.dev.jsonl", "P19"),
])
def test_eq_relation_of(path: str, relation: str) -> None:
    assert eq_relation_of(path) == relation
    assert eq_relation_of(Path(path)) == relation


def test_eq_relation_of_unknown() -> None:
    with pytest.raises(DataFormatError,
                       match=r"questions\.json, file name: expected a relation id"):
        eq_relation_of("data/misc/questions.json")


def test_discover_eq_files(tmp_path: Path) -> None:
    for name in ("P106.dev.json", "P17.dev.json", "P19.dev.json", "P19.test.json", "notes.txt"):
        (tmp_path / "dataset" / "dev").mkdir(parents=True, exist_ok=True)
        (tmp_path / "dataset" / "dev" / name).write_text("[]", encoding="utf-8")
    found = discover_eq_files(tmp_path / "dataset", "dev")
    assert list(found) == ["P17", "P19", "P106"]
    assert found["P19"].name == "P19.dev.json"
    assert discover_eq_files(tmp_path / "dataset" / "dev", "dev") == found
    with pytest.raises(FileNotFoundError):
        discover_eq_files(tmp_path / "dataset", "train")


def test_release_samples_round_trip_byte_for_byte(tmp_path: Path) -> None:
    files = _release_files()
    for path in files:
        questions = read_eq_file(path)
        assert questions, path
        relation = eq_relation_of(path)
        assert relation == (path.parent.name if path.name.startswith("bucket")
                            else path.name.split(".")[0])
        out = write_eq_file(tmp_path / path.name, questions)
        assert out.read_bytes() == path.read_bytes(), path
        assert json.loads(out.read_text(encoding="utf-8")) == json.loads(
            path.read_text(encoding="utf-8"))


def test_release_dev_discovery() -> None:
    _release_files()
    found = discover_eq_files(EQ_DATA, "dev")
    assert {"P19", "P36", "P159", "P170", "P800"} <= set(found)
    assert all(eq_relation_of(p) == r for r, p in found.items())


def test_json_nested_too_deep_is_named_not_a_traceback(tmp_path: Path) -> None:
    from tasks.io.squad import read_squad

    deep = "[" * 100_000 + "]" * 100_000
    eq = tmp_path / "P36.dev.json"
    eq.write_text(deep, encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"P36\.dev\.json, top level: .*nested deeper"):
        read_eq_file(eq)
    squad = tmp_path / "dev-v1.1.json"
    squad.write_text(deep, encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"dev-v1\.1\.json, top level: .*nested deeper"):
        read_squad(squad)
