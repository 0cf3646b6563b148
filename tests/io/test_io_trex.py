"""T-REx reader/writer: round trip, validation, skip mode, streaming."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.trex import (
    TrexEntity,
    TrexTriple,
    iter_trex_documents,
    iter_trex_triples,
)
from tasks.io.trex_write import trex_document_to_dict, write_trex_documents

ENTITY = "http://www.wikidata.org/entity/"
PROP = "http://www.wikidata.org/prop/direct/"


def element(qid: str, start: int | None, end: int | None, form: str | None,
            annotator: str = "Wikidata_Spotlight_Entity_Linker") -> dict:
    return {"boundaries": None if start is None else [start, end], "surfaceform": form,
            "uri": qid if qid.startswith("http") else ENTITY + qid, "annotator": annotator}


def make_doc(qid: str = "Q72", title: str = "Zürich") -> dict:
    text = f"{title} is a city in Switzerland. It hosts 東京 \"Club\"."
    city_end = len(title)
    ch = text.index("Switzerland")
    return {
        "docid": qid,
        "uri": ENTITY + qid,
        "title": title,
        "text": text,
        "words_boundaries": [[0, city_end], [city_end + 1, city_end + 3]],
        "sentences_boundaries": [[0, ch + 12], [ch + 13, len(text)]],
        "entities": [element(qid, 0, city_end, title),
                     element("Q39", ch, ch + 11, "Switzerland")],
        "triples": [
            {
                "sentence_id": 0,
                "subject": element(qid, 0, city_end, title),
                "predicate": element(PROP + "P17", None, None, None, "NoSubject-Triple-aligner"),
                "object": element("Q39", ch, ch + 11, "Switzerland"),
                "dependency_path": None,
                "confidence": 1.0,
                "annotator": "NoSubject-Triple-aligner",
            },
            {
                "sentence_id": 0,
                "subject": element(qid, 0, city_end, title),
                "predicate": element(PROP + "P571", None, None, None),
                "object": element("+1200-01-01T00:00:00Z^^http://www.w3.org/2001/XMLSchema"
                                  "#dateTime", None, None, "1200"),
                "dependency_path": "nsubj",
                "confidence": 0.5,
                "annotator": "Simple-Aligner",
            },
        ],
    }


def dump(path: Path, docs: list) -> Path:
    path.write_text(json.dumps(docs, ensure_ascii=False), encoding="utf-8")
    return path


def test_round_trip_dicts_and_dataclasses(tmp_path: Path) -> None:
    docs = [make_doc("Q72", "Zürich"), make_doc("Q1490", "東京")]
    src = dump(tmp_path / "re-nlg_0-10.json", docs)
    read = list(iter_trex_documents(src))
    assert [d.docid for d in read] == ["Q72", "Q1490"]
    assert read[1].title == "東京" and '"Club"' in read[1].text
    assert [trex_document_to_dict(d) for d in read] == docs
    out = write_trex_documents(tmp_path / "out.json", read)
    assert json.loads(out.read_text(encoding="utf-8")) == docs
    assert "東京" in out.read_text(encoding="utf-8")  # ensure_ascii=False
    again = write_trex_documents(tmp_path / "dicts.json", docs)
    assert list(iter_trex_documents(again)) == read


def test_triple_properties() -> None:
    triple = TrexTriple(
        0, TrexEntity(ENTITY + "Q72", "Zürich", (0, 6), "a"),
        TrexEntity(PROP + "P17", None, None, "a"), TrexEntity(ENTITY + "Q39", "CH", (1, 2), "a"),
        1.0, "a")
    assert (triple.relation, triple.subject_id, triple.object_id) == ("P17", "Q72", "Q39")
    bad = TrexTriple(0, triple.subject, TrexEntity("http://example.org/prop/P17", None, None, None),
                     triple.object, None, None)
    with pytest.raises(DataFormatError, match=r"Wikidata property URI"):
        _ = bad.relation
    literal = TrexTriple(0, triple.subject, triple.predicate,
                         TrexEntity("+1200^^http://www.w3.org/2001/XMLSchema#dateTime",
                                    "1200", None, None), None, None)
    with pytest.raises(DataFormatError, match=r"Wikidata item URI"):
        _ = literal.object_id
    with pytest.raises(AttributeError):
        triple.confidence = 0.5  # type: ignore[misc]  # frozen


def test_iter_triples_filters_relations_and_literals(tmp_path: Path) -> None:
    a = dump(tmp_path / "a.json", [make_doc("Q72")])
    b = dump(tmp_path / "b.json", [make_doc("Q64", "Berlin")])
    skips = SkipCounter("trex")
    pairs = list(iter_trex_triples([a, b], skips=skips))
    assert [(d.docid, t.relation, t.object_id) for d, t in pairs] == [
        ("Q72", "P17", "Q39"), ("Q64", "P17", "Q39")]
    assert skips.total == 2  # the two date-valued P571 triples, counted not dropped silently
    assert list(iter_trex_triples(str(a), relations={"P19"})) == []
    all_pairs = list(iter_trex_triples(a, items_only=False))
    assert [t.relation for _, t in all_pairs] == ["P17", "P571"]


@pytest.mark.parametrize(("mutate", "pattern"), [
    (lambda d: d.pop("triples"), r"document 1 \(docid 'Q2'\): expected a document with 'uri', "
                                 r"'text' and 'triples'; got no 'triples'"),
    (lambda d: d.pop("text"), r"document 1 \(docid 'Q2'\).*got no 'text'"),
    (lambda d: d.pop("uri"), r"document 1 \(docid 'Q2'\).*got no 'uri'"),
    (lambda d: d["triples"][0]["predicate"].update(uri="http://dbpedia.org/ontology/birth"),
     r"document 1 \(docid 'Q2'\), triples\[0\]\.predicate\.uri: expected a Wikidata property "
     r"URI http://www\.wikidata\.org/prop/direct/P<digits>"),
    (lambda d: d["entities"][1].update(boundaries=[10, 500]),
     r"document 1 \(docid 'Q2'\), entities\[1\]\.boundaries: expected boundaries inside the "
     r"text \(0\.\.\d+\); got \[10, 500\]"),
    (lambda d: d["words_boundaries"].append([5, 3]),
     r"document 1 \(docid 'Q2'\), words_boundaries\[2\]: expected boundaries with "
     r"start <= end; got \[5, 3\]"),
    (lambda d: d["triples"][0]["object"].update(boundaries=[-1, 2]),
     r"document 1 \(docid 'Q2'\), triples\[0\]\.object\.boundaries: expected boundaries "
     r"inside the text"),
    # what the inline check of word pairs passes on to the full one
    (lambda d: d["words_boundaries"].append([True, 3]),
     r"document 1 \(docid 'Q2'\), words_boundaries\[2\]: expected \[start, end\] integer "
     r"offsets; got \[True, 3\]"),
    (lambda d: d["words_boundaries"].append([0, 2.0]),
     r"document 1 \(docid 'Q2'\), words_boundaries\[2\]: expected \[start, end\] integer offsets"),
    (lambda d: d["words_boundaries"].append([0, 1, 2]),
     r"document 1 \(docid 'Q2'\), words_boundaries\[2\]: expected \[start, end\] integer offsets"),
    (lambda d: d["words_boundaries"].insert(0, None),
     r"document 1 \(docid 'Q2'\), words_boundaries\[0\]: expected \[start, end\] offsets; "
     r"got null"),
    (lambda d: d["sentences_boundaries"].append([0, 10_000]),
     r"document 1 \(docid 'Q2'\), sentences_boundaries\[2\]: expected boundaries inside the text"),
    # what the inline check of an element passes on to the full one
    (lambda d: d["entities"][0].update(boundaries=[False, 2]),
     r"document 1 \(docid 'Q2'\), entities\[0\]\.boundaries: expected \[start, end\] integer "
     r"offsets; got \[False, 2\]"),
    (lambda d: d["entities"][0].update(boundaries=[3, 1]),
     r"document 1 \(docid 'Q2'\), entities\[0\]\.boundaries: expected boundaries with "
     r"start <= end"),
    (lambda d: d["entities"][0].update(uri=""),
     r"document 1 \(docid 'Q2'\), entities\[0\]\.uri: expected a non-empty URI string"),
    (lambda d: d["entities"][0].update(surfaceform=7),
     r"document 1 \(docid 'Q2'\), entities\[0\]\.surfaceform: expected a string or null; "
     r"got 7"),
    (lambda d: d["triples"][0]["subject"].update(annotator=["x"]),
     r"document 1 \(docid 'Q2'\), triples\[0\]\.subject\.annotator: expected a string or null"),
    (lambda d: d["entities"].insert(0, ["not", "an", "object"]),
     r"document 1 \(docid 'Q2'\), entities\[0\]: expected an object \{boundaries, "
     r"surfaceform, uri, annotator\}"),
])
def test_malformed_documents(tmp_path: Path, mutate, pattern: str) -> None:
    bad = make_doc("Q2", "Paris")
    mutate(bad)
    path = dump(tmp_path / "re-nlg_bad.json", [make_doc("Q1"), bad, make_doc("Q3")])
    with pytest.raises(DataFormatError, match=r"re-nlg_bad\.json, " + pattern):
        list(iter_trex_documents(path))
    skips = SkipCounter("trex")
    kept = list(iter_trex_documents(path, on_error="skip", skips=skips))
    assert [d.docid for d in kept] == ["Q1", "Q3"]
    assert skips.total == 1 and "re-nlg_bad.json" in skips.examples[0]


@pytest.mark.parametrize("value", [
    {"uri": ENTITY + "Q1", "surfaceform": "Paris", "boundaries": [0, 5], "annotator": "a"},
    {"uri": ENTITY + "Q1", "boundaries": None},
    {"uri": ENTITY + "Q1"},
    {"uri": ENTITY + "Q1", "surfaceform": None, "boundaries": [5, 5], "annotator": None},
    {"uri": ENTITY + "Q1", "boundaries": (0, 5)},  # a tuple: not from JSON, the full check
    {"uri": ENTITY + "Q1", "boundaries": [0, 5], "extra": 1},
])
def test_inline_element_check_builds_what_the_full_check_builds(value) -> None:
    from collections import OrderedDict

    from tasks.io.trex import _checked_element, _element

    assert _element(value, 10, "e") == _checked_element(value, 10, "e")
    assert _element(OrderedDict(value), 10, "e") == _element(value, 10, "e")


def test_not_a_json_array(tmp_path: Path) -> None:
    path = tmp_path / "re-nlg_obj.json"
    path.write_text(json.dumps({"docid": "Q1"}), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"re-nlg_obj\.json, start of file: expected a JSON "
                                              r"array of T-REx documents; got a file starting"):
        list(iter_trex_documents(path))
    empty = tmp_path / "empty.json"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"got an empty file"):
        list(iter_trex_documents(empty, on_error="skip", skips=SkipCounter("x")))


def test_streaming_yields_before_malformed_tail(tmp_path: Path) -> None:
    docs = [make_doc(f"Q{i}", f"City {i}") for i in range(1, 401)]
    body = json.dumps(docs, ensure_ascii=False)
    path = tmp_path / "re-nlg_big.json"
    path.write_text(body[:-1] + ', {"docid": "Q999", "text": "trunc', encoding="utf-8")
    stream = iter_trex_documents(path)
    first = next(stream)  # available without the (broken) rest of the file
    assert first.docid == "Q1"
    seen = [first.docid]
    # the unterminated string starts in column 699,339 of the one line
    with pytest.raises(DataFormatError, match=r"re-nlg_big\.json, record 400, line 1, column "
                                              r"699339: expected well-formed JSON"):
        for document in stream:
            seen.append(document.docid)
    assert len(seen) == 400


def test_utf16_offsets_are_accepted(tmp_path: Path) -> None:
    doc = make_doc("Q5", "Gothic 𐌰")
    # Java-style offsets count the astral character as two code units.
    doc["words_boundaries"].append([0, len(doc["text"]) + 1])
    path = dump(tmp_path / "astral.json", [doc])
    assert next(iter_trex_documents(path)).words_boundaries[-1] == (0, len(doc["text"]) + 1)
    doc2 = copy.deepcopy(doc)
    doc2["words_boundaries"][-1] = [0, len(doc["text"]) + 2]
    with pytest.raises(DataFormatError, match="inside the text"):
        list(iter_trex_documents(dump(tmp_path / "astral2.json", [doc2])))


@pytest.mark.parametrize(("key", "value", "pattern"), [
    ("title", [], r"document 1 \(docid 'Q2'\), title: expected a string or null; got \[\]"),
    ("title", 0, r"document 1 \(docid 'Q2'\), title: expected a string or null; got 0"),
    ("title", False, r"document 1 \(docid 'Q2'\), title: expected a string or null; got False"),
    ("title", {"en": "Paris"}, r"document 1 \(docid 'Q2'\), title: expected a string or null; "
                               r"got \{'en': 'Paris'\}"),
    ("docid", [1], r"document 1 \(docid \?\), docid: expected a non-empty string or an integer "
                   r"\(or null\); got \[1\]"),
    ("docid", 1.5, r"document 1 \(docid \?\), docid: expected a non-empty string .*; got 1\.5"),
    ("docid", True, r"document 1 \(docid \?\), docid: expected .*; got True"),
    ("docid", "", r"document 1 \(docid \?\), docid: expected a non-empty string .*; got ''"),
])
def test_wrong_typed_title_or_docid_is_an_error(tmp_path: Path, key: str, value,
                                                pattern: str) -> None:
    bad = make_doc("Q2", "Paris")
    bad[key] = value
    path = dump(tmp_path / "re-nlg_types.json", [make_doc("Q1"), bad, make_doc("Q3")])
    with pytest.raises(DataFormatError, match=r"re-nlg_types\.json, " + pattern):
        list(iter_trex_documents(path))
    skips = SkipCounter("trex")
    assert [d.docid for d in iter_trex_documents(path, on_error="skip", skips=skips)] == [
        "Q1", "Q3"]
    assert skips.total == 1


def test_missing_or_null_title_and_docid_keep_their_defaults(tmp_path: Path) -> None:
    no_title, null_title = make_doc("Q2", "Paris"), make_doc("Q3", "Rome")
    no_title.pop("title")
    null_title["title"] = None
    no_docid, null_docid, int_docid = make_doc("Q4"), make_doc("Q5"), make_doc("Q6")
    no_docid.pop("docid")
    null_docid["docid"] = None
    int_docid["docid"] = 6
    path = dump(tmp_path / "defaults.json", [no_title, null_title, no_docid, null_docid,
                                             int_docid])
    read = list(iter_trex_documents(path))
    assert [d.title for d in read[:2]] == ["", ""]
    assert [d.docid for d in read] == ["Q2", "Q3", "Q4", "Q5", "6"]  # from the uri when absent
