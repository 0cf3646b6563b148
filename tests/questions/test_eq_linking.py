"""Entity linking: the offline alias linker, the external-output adapter, precision/recall."""

from __future__ import annotations

import json

import pytest

from tasks.io.entity_labels import EntityLabel
from tasks.io.errors import DataFormatError, SkipCounter
from tasks.io.linking import LinkedQuestion, iter_linked_questions, write_linked_questions
from tasks.questions.linking import (
    AliasLinker,
    elq_to_interchange,
    link_nq_step,
    linking_scores,
    normalise_tokens,
    read_external_links,
    title_index,
)

ENTITIES = [
    EntityLabel("Q1", "New York", ("NYC",)),
    EntityLabel("Q2", "New York City", ()),
    EntityLabel("Q3", "York", ()),
    EntityLabel("Q4", "Paris", ("City of Light",)),
    EntityLabel("Q5", "Paris", ()),  # Paris, Texas: less popular
    EntityLabel("Q6", "The Who", ()),  # only stop words: never indexed
    EntityLabel("Q7", "Zoë Saldaña", ("Zoe Saldana",)),
    EntityLabel("Q8", "It", ()),
]
POPULARITY = {"Q1": 500, "Q2": 900, "Q3": 40, "Q4": 1000, "Q5": 10}


@pytest.fixture(scope="module")
def linker() -> AliasLinker:
    return AliasLinker.from_entities(ENTITIES, POPULARITY)


def test_longest_match_wins(linker):
    assert linker.link("who was the mayor of new york city in 1990").entities == ("Q2",)
    assert linker.link("where is new york state").entities == ("Q1",)
    assert linker.link("is york older than paris").entities == ("Q3", "Q4")


def test_ties_go_to_the_more_popular_entity(linker):
    assert linker.link("Where is Paris?").entities == ("Q4",)
    flipped = AliasLinker.from_entities(ENTITIES, {"Q4": 1, "Q5": 2})
    assert flipped.link("Where is Paris?").entities == ("Q5",)
    equal = AliasLinker.from_entities(ENTITIES, {})
    assert equal.link("Where is Paris?").entities == ("Q4",)  # then the smaller id


def test_aliases_case_accents_and_stop_words(linker):
    assert linker.link("films starring ZOE SALDANA").entities == ("Q7",)
    assert linker.link("films starring Zoë Saldaña").entities == ("Q7",)
    assert linker.link("what is the city of light").entities == ("Q4",)
    assert linker.link("who is it").entities == ()  # "It" too short, "The Who" stop words
    assert normalise_tokens("Zoë  Saldaña!") == ("zoe", "saldana")


def test_each_entity_once_in_question_order(linker):
    assert linker.link("paris or york or paris again").entities == ("Q4", "Q3")
    mentions = linker.mentions("NYC and Paris")
    assert [(m.start, m.end, m.entity_id) for m in mentions] == [(0, 1, "Q1"), (2, 3, "Q4")]


def test_precision_recall_micro_over_entity_pairs():
    truth = [LinkedQuestion("a", ("Q1",)), LinkedQuestion("b", ("Q2", "Q3")),
             LinkedQuestion("c", ("Q4",)), LinkedQuestion("a", ("Q5",))]
    predicted = [LinkedQuestion("a", ("Q1", "Q9")), LinkedQuestion("b", ("Q2",)),
                 LinkedQuestion("a", ("Q5",))]
    scores = linking_scores(predicted, truth)
    assert (scores.true_positives, scores.false_positives, scores.false_negatives) == (3, 1, 2)
    assert scores.precision == pytest.approx(0.75) and scores.recall == pytest.approx(0.6)
    assert scores.to_dict()["f1"] == pytest.approx(66.67, abs=0.01)


def test_linker_on_a_world_with_known_truth(eq_world, tmp_path):
    """The hand-built world's NQ questions each name one person, lower-cased."""
    root, _ = eq_world
    raw = root / "data" / "raw"
    record = link_nq_step(raw / "nq" / "nq-train.json", raw / "wikidata" / "entity_labels.jsonl",
                          raw / "hyperlinks" / "entity_counts.tsv", tmp_path / "links.jsonl",
                          tmp_path / "eval.json",
                          linker_truth=raw / "nq" / "nq-train.entities.jsonl")
    scores = record["scores"]
    assert scores["questions"] == 60
    assert scores["precision"] >= 95 and scores["recall"] >= 95
    assert json.loads((tmp_path / "eval.json").read_text())["scores"] == scores
    assert len(list(iter_linked_questions(tmp_path / "links.jsonl"))) == 60


def test_linker_on_the_demo_world(smoke_demo_world, tmp_path):
    """Demo world: truth = its file when it writes one, else the gold passages' entities."""
    params = smoke_demo_world
    cfg = params.entity_questions
    truth = params.paths.raw / "nq" / "nq-train.entities.jsonl"
    record = link_nq_step(params.raw_path("nq_train"), params.raw_path("entity_labels"),
                          params.raw_path("hyperlink_counts"), tmp_path / "l.jsonl",
                          tmp_path / "e.json", linker_truth=truth if truth.exists() else None,
                          min_chars=cfg.linker_min_chars, max_ngram=cfg.linker_max_ngram)
    scores = record["scores"]
    assert scores is not None and scores["questions"] > 0
    print("demo linker:", record["truth"], scores)
    assert scores["recall"] >= 70 and scores["precision"] >= 50


def test_external_adapter_maps_titles_and_counts_unmapped(tmp_path):
    path = tmp_path / "elq.jsonl"
    write_linked_questions(path, [LinkedQuestion("q1", ("Q4", "New_York_City", "Nowhere"))])
    skips = SkipCounter("links")
    linked = read_external_links(path, title_index(ENTITIES), skips=skips)
    assert linked == [LinkedQuestion("q1", ("Q4", "Q2"))]
    assert skips.total == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "entities": "Q1"}\n')
    with pytest.raises(DataFormatError, match=r"bad.jsonl, line 1"):
        read_external_links(bad)


def test_elq_output_is_converted_to_the_interchange(tmp_path):
    elq = tmp_path / "elq_preds.jsonl"
    elq.write_text(json.dumps({"id": 0, "text": "where was zoe saldana born",
                               "pred_tuples_string": [["Zoë Saldaña", "zoe saldana"]],
                               "pred_triples": [["123", 3, 5]], "scores": [-0.1]}) + "\n"
                   + json.dumps({"text": "no entity here", "pred_tuples_string": []}) + "\n")
    out = tmp_path / "links.jsonl"
    assert elq_to_interchange(elq, out, title_index(ENTITIES)) == 2
    assert list(iter_linked_questions(out)) == [
        LinkedQuestion("where was zoe saldana born", ("Q7",)),
        LinkedQuestion("no entity here", ())]


def test_elq_titles_it_cannot_map_are_kept_for_the_reader_to_count(tmp_path):
    elq = tmp_path / "elq_preds.jsonl"
    elq.write_text(json.dumps({"text": "where was zoe saldana born in nowhere",
                               "pred_tuples_string": [["Zoë Saldaña", "zoe saldana"],
                                                      ["Nowhere", "nowhere"]]}) + "\n")
    out = tmp_path / "links.jsonl"
    assert elq_to_interchange(elq, out, title_index(ENTITIES)) == 1
    assert list(iter_linked_questions(out)) == [
        LinkedQuestion("where was zoe saldana born in nowhere", ("Q7", "Nowhere"))]
    skips = SkipCounter("links")
    assert read_external_links(out, title_index(ENTITIES), skips=skips) == [
        LinkedQuestion("where was zoe saldana born in nowhere", ("Q7",))]
    assert skips.counts == {"entity not mapped to a Wikidata id": 1}


@pytest.mark.parametrize("tuples", [[["", "m"]], [[]], ["Paris"], [[3, "m"]], "Paris"])
def test_elq_tuple_without_a_title_names_the_line(tmp_path, tuples):
    elq = tmp_path / "elq_preds.jsonl"
    elq.write_text(json.dumps({"text": "ok", "pred_tuples_string": []}) + "\n"
                   + json.dumps({"text": "q", "pred_tuples_string": tuples}) + "\n")
    with pytest.raises(DataFormatError, match=r"elq_preds.jsonl, line 2: expected an ELQ"):
        elq_to_interchange(elq, tmp_path / "out.jsonl", title_index(ENTITIES))
    skips = SkipCounter("elq")
    assert elq_to_interchange(elq, tmp_path / "out.jsonl", title_index(ENTITIES),
                              on_error="skip", skips=skips) == 1
    assert skips.total == 1
