"""Every reader of a real format, fed damaged copies of a valid file, either reads it or raises
:class:`DataFormatError`: never another exception (a traceback instead of the file, line and
what was expected). Each format's valid sample is damaged 120 seeded ways (bytes deleted,
structural bytes such as quotes, brackets, tabs, newlines, NUL and broken UTF-8 inserted or
written over, the file cut short), and read both raising and skipping."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tasks.io import (
    dpr,
    dpr_results,
    entity_labels,
    entityquestions,
    hyperlinks,
    linking,
    passages,
    ppdb,
    quora,
    squad,
    squad_predictions,
    trec,
    trex,
    wikianswers,
)
from tasks.io.errors import DataFormatError, SkipCounter

MUTATIONS = 120
INSERTS = [b'"', b"\\", b"[", b"]", b"{", b"}", b",", b":", b"\t", b"\n", b"\r", b" ", b"\x00",
           b"\xff", b"\xc3", b"null", b"1e999", b"-", b"NaN", b"true", b'""', b"[]", b"{}",
           b"0", b"\xef\xbb\xbf", "\u2028".encode()]

CTX = {"title": "Zürich", "text": "Zürich is a city in Switzerland.", "score": 12.5,
       "title_score": 0, "passage_id": "17"}
RESULT = {"question": "where is zürich?", "answers": ["Switzerland"],
          "ctxs": [{"id": "17", "title": "Zürich", "text": "Zürich is in Switzerland.",
                    "score": "81.2", "has_answer": True},
                   {"id": "3", "title": "Ulm", "text": "Ulm [1] is a \"city\".", "score": "70",
                    "has_answer": False}]}
SQUAD = {"version": "1.1", "data": [{"title": "Zürich", "paragraphs": [{
    "context": "Zürich lies on Lake Zürich.",
    "qas": [{"id": "q1", "question": "Where does Zürich lie?",
             "answers": [{"text": "Lake Zürich", "answer_start": 15}]}]}]}]}
PPDB_FEATURES = "PPDB2.0Score=4.21 p(e|f)=1.2"


def _trex_doc(qid: str, title: str) -> dict:
    """A T-REx document with one triple (subject in the text, object in the text)."""
    text = f"{title} is a city in Switzerland."
    where = text.index("Switzerland")

    def element(uri: str, start: int | None, end: int | None, form: str | None) -> dict:
        return {"boundaries": None if start is None else [start, end], "surfaceform": form,
                "uri": uri, "annotator": "Wikidata_Spotlight_Entity_Linker"}

    subject = element(f"http://www.wikidata.org/entity/{qid}", 0, len(title), title)
    country = element("http://www.wikidata.org/entity/Q39", where, where + 11, "Switzerland")
    return {"docid": qid, "uri": subject["uri"], "title": title, "text": text,
            "words_boundaries": [[0, len(title)]], "sentences_boundaries": [[0, len(text)]],
            "entities": [subject, country],
            "triples": [{"sentence_id": 0, "subject": subject, "object": country,
                         "predicate": element("http://www.wikidata.org/prop/direct/P17", None,
                                              None, None),
                         "dependency_path": None, "confidence": 1.0,
                         "annotator": "NoSubject-Triple-aligner"}]}


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1).encode()


#: format -> (file name, valid content, reader(path, **on_error)).
FORMATS: dict[str, tuple[str, bytes, Callable[..., Any]]] = {
    "T-REx JSON": ("re-nlg_0-1000.json",
                   _json([_trex_doc("Q72", "Zürich"), _trex_doc("Q64", "Berlin")]),
                   lambda p, **k: list(trex.iter_trex_documents(p, **k))),
    "psgs_w100.tsv": ("psgs_w100.tsv",
                      "id\ttext\ttitle\n1\tZürich is a city.\tZürich\n2\t\"Ulm\" [1]\tUlm\n"
                      .encode(), lambda p, **k: list(passages.iter_passages(p, **k))),
    "DPR training JSON": ("nq-train.json", _json([{
        "dataset": "nq", "question": "where is zürich?", "answers": ["Switzerland"],
        "positive_ctxs": [CTX], "negative_ctxs": [], "hard_negative_ctxs": [CTX]}]),
        lambda p, **k: list(dpr.iter_dpr_examples(p, **k))),
    "DPR qa.csv": ("nq-test.qa.csv", 'where is zürich\t["Switzerland"]\nwho\t["A", "B"]\n'
                   .encode(), lambda p, **k: list(dpr.iter_qa_csv(p, **k))),
    "retrieval results JSON": ("P19.json", _json([RESULT, RESULT]),
                               lambda p, **k: dpr_results.read_retrieval_results(p, **k)),
    "EntityQuestions JSON": ("P19.test.json", _json([
        {"question": "Where was Zoë born?", "answers": ["Ulm", "Ulm, Germany"]},
        {"question": "Where was Bo born?", "answers": ["Rome"]}]),
        lambda p, **k: entityquestions.read_eq_file(p, **k)),
    "SQuAD v1.1 JSON": ("dev-v1.1.json", _json(SQUAD), lambda p, **k: squad.read_squad(p, **k)),
    "SQuAD predictions": ("predictions.json", _json({"q1": "Lake Zürich", "q2": ""}),
                          lambda p, **k: squad_predictions.read_predictions(p, **k)),
    "TREC run": ("run.trec", b"q1 Q0 d7 1 12.5 bm25\nq1 Q0 d3 2 11.0 bm25\nq2 Q0 d1 1 -0.1 bm25\n",
                 lambda p, **k: trec.read_trec_run(p, **k)),
    "entity labels JSONL": ("entity_labels.jsonl", (
        '{"id": "Q1", "label": "Zoë", "aliases": ["Z."], "type": "human", "description": "x"}\n'
        '{"id": "Q2", "label": "Ulm", "aliases": [], "type": "city", "description": ""}\n'
    ).encode(), lambda p, **k: list(entity_labels.iter_entity_labels(p, **k))),
    "entity-linking JSONL": ("nq-train.entities.jsonl", (
        '{"question": "where is zürich", "entities": ["Q72"]}\n'
        '{"question": "who is bo", "entities": []}\n').encode(),
        lambda p, **k: list(linking.iter_linked_questions(p, **k))),
    "hyperlink counts TSV": ("entity_counts.tsv", b"entity\tcount\nQ72\t50000\nQ64\t3\n",
                             lambda p, **k: hyperlinks.read_hyperlink_counts(p, **k)),
    "PPDB 2.0": ("ppdb-2.0-s-all", (
        f"[VP] ||| is married to ||| is wed to ||| {PPDB_FEATURES} ||| 0-0 2-2 ||| Equivalence\n"
        f"[NN] ||| town ||| city ||| {PPDB_FEATURES} ||| 0-0 ||| Equivalence\n").encode(),
        lambda p, **k: list(ppdb.iter_ppdb_rules(p, **k))),
    "Quora duplicates TSV": ("quora_duplicate_questions.tsv", (
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        "0\t1\t2\tWhen did Zoë die?\tWhen was Zoë's death?\t1\n"
        "1\t3\t4\tWho founded Ulm?\tWhere is Ulm?\t0\n").encode(),
        lambda p, **k: list(quora.iter_quora_pairs(p, **k))),
    "WikiAnswers alignments": ("word_alignments.tsv", (
        "which city did zoë visit ?\twhat city did zoë go to ?\t0-0 1-1 2-2 3-3 5-6\n"
        "who is bo ?\twho's bo ?\t0-0 2-1 3-2\n").encode(),
        lambda p, **k: list(wikianswers.iter_wikianswers_pairs(p, **k))),
}


def damaged(data: bytes, rng: random.Random) -> bytes:
    """``data`` with one to five random edits."""
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 3, 5])):
        at = rng.randrange(len(out) + 1)
        edit = rng.random()
        if edit < 0.3:
            del out[at:at + rng.randrange(1, 20)]
        elif edit < 0.6:
            out[at:at] = rng.choice(INSERTS)
        elif edit < 0.85:
            out[at:at + rng.randrange(1, 30)] = rng.choice(INSERTS) * rng.randrange(1, 3)
        else:
            del out[at:]
    return bytes(out)


@pytest.mark.parametrize("name", list(FORMATS))
def test_a_damaged_file_is_read_or_named_never_a_traceback(tmp_path: Path, name: str) -> None:
    filename, valid, read = FORMATS[name]
    path = tmp_path / filename
    path.write_bytes(valid)
    assert read(path), f"the valid {name} sample reads as nothing"
    rng = random.Random(name)
    outcomes = {"read": 0, "named": 0}
    for _ in range(MUTATIONS):
        data = damaged(valid, rng)
        path.write_bytes(data)
        for on_error in ({}, {"on_error": "skip", "skips": SkipCounter(name)}):
            try:
                read(path, **on_error)
            except DataFormatError as error:
                assert str(path) in str(error), error
                outcomes["named"] += 1
            except Exception as error:  # noqa: BLE001 (the finding this test looks for)
                pytest.fail(f"{name}: {type(error).__name__}: {error} on {data!r}")
            else:
                outcomes["read"] += 1
    assert outcomes["named"] > MUTATIONS // 4, outcomes  # the damage does reach the checks
