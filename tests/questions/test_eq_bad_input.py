"""Bad input reaches the construction's entry as a clear error naming the file and the record,
or, with ``entity_questions.on_bad_record: skip``, as a counted skip."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from eq_world import world_params

from flows._params import resolve
from flows.entity_questions import construct
from tasks.io.errors import DataFormatError
from tasks.layout import Layout
from tasks.params_loading import ParamsError


def _with_sources(params, **paths):
    return params.model_copy(update={"sources": params.sources.model_copy(
        update={k: str(v) for k, v in paths.items()})})


@pytest.fixture()
def setup(eq_world, tmp_path):
    """Params writing under tmp_path, reading the hand-built world, and its T-REx documents."""
    world, _ = eq_world
    raw = world / "data" / "raw"
    params = _with_sources(world_params(tmp_path), **{
        "entity_labels": raw / "wikidata" / "entity_labels.jsonl",
        "hyperlink_counts": raw / "hyperlinks" / "entity_counts.tsv",
        "passages": raw / "wikipedia" / "psgs_w100.tsv",
        "nq_train": raw / "nq" / "nq-train.json"})
    docs = json.loads((raw / "trex" / "re-nlg_0-10000.json").read_text())
    return params, docs, tmp_path


def _trex(tmp_path: Path, docs: list) -> Path:
    path = tmp_path / "bad" / "re-nlg_0-3.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(docs), encoding="utf-8")
    return path


def _break(docs: list, how: str) -> list:
    docs = copy.deepcopy(docs)
    doc = docs[1]
    if how == "no triples":
        del doc["triples"]
    elif how == "predicate":
        doc["triples"][0]["predicate"]["uri"] = "http://example.org/prop/born_in"
    elif how == "boundaries":
        doc["triples"][0]["object"]["boundaries"] = [5, len(doc["text"]) + 40]
    return docs


@pytest.mark.parametrize("how,message", [
    ("no triples", r"document 1 \(docid 'Q\d+'\): expected a document with 'uri', 'text' and "
                   r"'triples'; got no 'triples'"),
    ("predicate", r"document 1 \(docid 'Q\d+'\), triples\[0\]\.predicate\.uri: expected a "
                  r"Wikidata property URI"),
    ("boundaries", r"document 1 \(docid 'Q\d+'\), triples\[0\]\.object\.boundaries: expected "
                   r"boundaries inside the text"),
])
def test_bad_trex_document_names_file_and_record(setup, how, message):
    params, docs, tmp_path = setup
    path = _trex(tmp_path, _break(docs[:3] + docs[-200:], how))
    params = _with_sources(params, trex=path)
    with pytest.raises(DataFormatError, match=message) as caught:
        construct(params, plain=True)
    assert str(caught.value).startswith(str(path))


def test_bad_trex_documents_are_counted_when_skipping(setup):
    params, docs, tmp_path = setup
    broken = _break(docs, "no triples")
    broken[5]["triples"][0]["predicate"]["uri"] = "http://example.org/prop/born_in"
    params = _with_sources(params, trex=_trex(tmp_path, broken))
    params = params.model_copy(update={"entity_questions": params.entity_questions.model_copy(
        update={"on_bad_record": "skip", "min_triples": 1, "dpr_training": False})})
    construct(params, plain=True)
    summary = Layout(params).eq_summary.read_text()
    assert "T-REx: skipped 2 records" in summary


def test_bad_hyperlink_line_names_file_and_line(setup):
    params, docs, tmp_path = setup
    good = Path(params.sources.hyperlink_counts).read_text().splitlines()
    bad = tmp_path / "counts.tsv"
    bad.write_text("\n".join([*good[:4], "Q10001 1200", *good[4:]]) + "\n")
    params = _with_sources(params, trex=_trex(tmp_path, docs), hyperlink_counts=bad)
    with pytest.raises(DataFormatError, match=r"counts\.tsv, line 5: expected 2 tab-separated "
                                              r"fields \(entity, count\)"):
        construct(params, plain=True)
    bad.write_text("\n".join([*good[:4], "Q10001\tmany", *good[4:]]) + "\n")
    with pytest.raises(DataFormatError, match=r"line 5: expected a non-negative integer count"):
        construct(params, plain=True)
    params = params.model_copy(update={"entity_questions": params.entity_questions.model_copy(
        update={"on_bad_record": "skip", "min_triples": 1, "dpr_training": False})})
    construct(params, plain=True)
    assert "skipped 1 records" in Layout(params).eq_summary.read_text()


def test_unknown_relation_in_params_is_named(tmp_path):
    params_file = tmp_path / "params.yaml"
    params_file.write_text("entity_questions:\n  relations: [P19, P20, P9999]\n")
    with pytest.raises(ParamsError, match=r"entity_questions\.relations: .*unknown relation\(s\) "
                                          r"\['P9999'\]"):
        resolve(params_file=str(params_file))


def test_no_trex_files_is_a_clear_error(setup):
    params, _, tmp_path = setup
    params = _with_sources(params, trex=tmp_path / "nowhere" / "*.json")
    with pytest.raises(FileNotFoundError, match=r"no file matches sources\.trex"):
        construct(params, plain=True)
