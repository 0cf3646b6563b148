"""Duplicate ids where records are keyed by id: an error naming the file and both places, never
a silent last-one-wins (paraphrased-retrieval collection, SQuAD subject sidecar); the entity
linking reader's file line numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.linking import (
    LinkedQuestion,
    iter_linked_questions,
    iter_numbered_linked_questions,
    write_linked_questions,
)
from tasks.io.passages import Passage, write_passages
from tasks.reading.subject_buckets import read_subjects
from tasks.retrieval.paraphrased import evaluate_paraphrased_runs, read_collection


def _line(qid: str | None, question: str, entities: list) -> str:
    return json.dumps({**({"id": qid} if qid is not None else {}), "question": question,
                       "entities": entities}) + "\n"


def test_linked_questions_numbered_by_file_line(tmp_path: Path) -> None:
    path = tmp_path / "links.jsonl"
    path.write_text(_line("q1", "A?", ["Q1"]) + "\n" + '{"question": 3}\n'
                    + _line("q2", "B?", ["Q2"]), encoding="utf-8")
    skips = SkipCounter("links")
    numbered = list(iter_numbered_linked_questions(path, on_error="skip", skips=skips))
    assert numbered == [(1, LinkedQuestion("A?", ("Q1",), "q1")),
                        (4, LinkedQuestion("B?", ("Q2",), "q2"))]
    assert skips.total == 1
    assert [item for _, item in numbered] == list(
        iter_linked_questions(path, on_error="skip", skips=SkipCounter("again")))


def test_subject_sidecar_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "dev.entities.jsonl"
    path.write_text(_line("q1", "Where was Ada born?", ["ada"]) + "\n"
                    + _line("q2", "When?", ["ada"]) + _line("q1", "Where was Ada born?", ["bob"]),
                    encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"dev\.entities\.jsonl, line 4: expected each "
                                              r"question id once; got 'q1' again \(first on "
                                              r"line 1\)"):
        read_subjects(path, {"q1", "q2"})


def test_subject_sidecar_errors_name_the_file_line_not_the_record(tmp_path: Path) -> None:
    path = tmp_path / "dev.entities.jsonl"
    path.write_text(_line("q1", "A?", ["ada"]) + "\n\n" + _line("q9", "B?", ["x"]),
                    encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"dev\.entities\.jsonl, line 4: .*'q9'"):
        read_subjects(path, {"q1"})
    write_linked_questions(path, [LinkedQuestion("A?", ("ada",), "q1"),
                                  LinkedQuestion("B?", ("bob",), "q2")])
    assert read_subjects(path, {"q1", "q2", "q3"}) == {"q1": "ada", "q2": "bob"}


def _collection(tmp_path: Path, ids: list[str]) -> Path:
    path = tmp_path / "passages.tsv"
    write_passages(path, [Passage(pid, f"text {i}", f"T{i}") for i, pid in enumerate(ids)])
    return path


def test_paraphrased_collection_duplicate_passage_id(tmp_path: Path) -> None:
    tsv = _collection(tmp_path, ["1", "2", "3"])
    assert read_collection(tsv) == {"1": ("T0", "text 0"), "2": ("T1", "text 1"),
                                    "3": ("T2", "text 2")}
    tsv = _collection(tmp_path, ["1", "2", "1"])
    pattern = (r"passages\.tsv, line 4: expected a passage id not used before in the file; "
               r"got '1' a second time")
    with pytest.raises(DataFormatError, match=pattern):
        read_collection(tsv)
    with pytest.raises(DataFormatError, match=pattern):  # before any run or query is read
        evaluate_paraphrased_runs({"bm25": tmp_path / "none.trec"}, tmp_path / "none.json", tsv,
                                  tmp_path / "m.json", tmp_path / "r.md", [1], k=1)
    assert not (tmp_path / "m.json").exists()
