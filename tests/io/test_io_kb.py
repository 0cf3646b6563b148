"""Entity labels, hyperlink counts and entity-linking interchange files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.io.entity_labels import (
    EntityLabel,
    iter_entity_labels,
    read_entity_labels,
    write_entity_labels,
)
from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.hyperlinks import read_hyperlink_counts, write_hyperlink_counts
from tasks.io.linking import LinkedQuestion, iter_linked_questions, write_linked_questions

ENTITIES = [
    EntityLabel("Q42", "Douglas Adams", ("Douglas Noël Adams", 'D. "DNA" Adams'), "person",
                "English writer"),
    EntityLabel("Q72", "Zürich", ("Zurich",), "place", None),
    EntityLabel("Q1490", "東京", (), None, ""),
]


def test_entity_labels_round_trip(tmp_path: Path) -> None:
    path = write_entity_labels(tmp_path / "entity_labels.jsonl", ENTITIES)
    text = path.read_text(encoding="utf-8")
    assert "東京" in text and '"type"' not in text.splitlines()[2]
    assert list(iter_entity_labels(path)) == ENTITIES
    read = read_entity_labels(path)
    assert list(read) == ["Q42", "Q72", "Q1490"] and read["Q72"] == ENTITIES[1]
    write_entity_labels(tmp_path / "again.jsonl", read)
    assert (tmp_path / "again.jsonl").read_bytes() == path.read_bytes()
    assert ENTITIES[1].names == ("Zürich", "Zurich")


def test_entity_labels_errors(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"id": "Q1", "label": "one"}\n'
                    '{"id": "Q1", "label": "uno"}\n'
                    '{"id": "douglas", "label": "x"}\n'
                    '{"id": "Q3", "label": "three", "aliases": "3"}\n'
                    '{"id": "Q4", "label": ""}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"labels\.jsonl, line 2: expected each entity id "
                                              r"once; got Q1 again \(first on line 1\)"):
        read_entity_labels(path)
    with pytest.raises(DataFormatError, match=r"labels\.jsonl, line 3: expected an \"id\" that is "
                                              r"a Wikidata item id \(Q<digits>\); got 'douglas'"):
        list(iter_entity_labels(path))
    skips = SkipCounter("labels")
    assert list(read_entity_labels(path, on_error="skip", skips=skips)) == ["Q1"]
    assert skips.total == 4
    assert any('line 4: expected "aliases" as a list of strings for Q3' in e
               for e in skips.examples)
    with pytest.raises(ValueError, match="given twice"):
        write_entity_labels(tmp_path / "dup.jsonl", [ENTITIES[0], ENTITIES[0]])


def test_hyperlink_counts_round_trip(tmp_path: Path) -> None:
    counts = {"Q72": 5, "Q42": 120, "Q1490": 5, "Q1": 0}
    path = write_hyperlink_counts(tmp_path / "entity_counts.tsv", counts)
    assert path.read_text(encoding="utf-8") == (
        "entity\tcount\nQ42\t120\nQ1490\t5\nQ72\t5\nQ1\t0\n")
    assert read_hyperlink_counts(path) == counts
    titles = {"Zürich": 3, "東京": 9, 'The "Club"': 1}
    tpath = write_hyperlink_counts(tmp_path / "title_counts.tsv", titles, key="title")
    assert read_hyperlink_counts(tpath, key="title") == titles
    no_header = tmp_path / "no_header.tsv"
    no_header.write_text("Q5\t7\r\n\nQ6\t8\n", encoding="utf-8")
    assert read_hyperlink_counts(no_header) == {"Q5": 7, "Q6": 8}
    with pytest.raises(ValueError, match="key must be"):
        read_hyperlink_counts(no_header, key="qid")  # type: ignore[arg-type]


@pytest.mark.parametrize(("line", "pattern"), [
    ("Q5\t7\textra", r"line 2: expected 2 tab-separated fields \(entity, count\); got 3"),
    ("Q5 7", r"line 2: expected 2 tab-separated fields"),
    ("Q5\t-3", r"line 2: expected a non-negative integer count; got '-3'"),
    ("Q5\t2.5", r"line 2: expected a non-negative integer count; got '2\.5'"),
    ("Zürich\t2", r"line 2: expected a Wikidata item id \(Q<digits>\) as entity; got 'Zürich'"),
    ("Q1\t4", r"line 2: expected each entity once; got Q1 again \(first on line 1\)"),
])
def test_hyperlink_count_errors(tmp_path: Path, line: str, pattern: str) -> None:
    path = tmp_path / "counts.tsv"
    path.write_text(f"Q1\t10\n{line}\nQ9\t1\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"counts\.tsv, " + pattern):
        read_hyperlink_counts(path)
    skips = SkipCounter("counts")
    assert read_hyperlink_counts(path, on_error="skip", skips=skips) == {"Q1": 10, "Q9": 1}
    assert skips.total == 1


def test_linked_questions_round_trip_and_errors(tmp_path: Path) -> None:
    items = [LinkedQuestion("Where was Douglas Adams born?", ("Q42",)),
             LinkedQuestion("Wo liegt Zürich?\tTab", ("Q72", "Q39")),
             LinkedQuestion("東京はどこ？", ()),
             LinkedQuestion("Where was Ada born?", ("Q7259",), "squad-id-1")]
    path = write_linked_questions(tmp_path / "linked.jsonl", items)
    assert list(iter_linked_questions(path)) == items
    lines = path.read_text(encoding="utf-8").splitlines()
    assert '"id"' not in lines[0] and lines[3].startswith('{"id": "squad-id-1"')
    bad = tmp_path / "linked_bad.jsonl"
    bad.write_text('{"question": "ok?", "entities": ["Q1"]}\n'
                   '{"question": "no entities?"}\n'
                   '{"question": "", "entities": []}\n'
                   '{"question": "ids?", "entities": [42]}\n', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"linked_bad\.jsonl, line 2: expected \"entities\" "
                                              r"as a list of non-empty id strings; got None"):
        list(iter_linked_questions(bad))
    skips = SkipCounter("linked")
    assert len(list(iter_linked_questions(bad, on_error="skip", skips=skips))) == 1
    assert skips.total == 3
