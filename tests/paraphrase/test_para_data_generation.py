"""Generation: the paraphraser interface, the PPDB baseline, candidate counts, the neural model."""

from __future__ import annotations

import importlib.util

import pytest

from tasks.io.tables import read_table, write_table
from tasks.paraphrase.generation import (
    PPDBSubstitution,
    generate_candidates,
    join_tokens,
    load_generator,
    train_paraphraser_model,
)
from tasks.paraphrase.ppdb_lookup import PPDBTable, build_ppdb_table
from tasks.paraphrase.suggestions import SUGGESTIONS_SCHEMA
from tasks.paraphrase.text import NONE_TOKEN, tokenize
from tasks.paraphrase.training_data import build_training_triples
from tasks.paraphrase.vocab import train_vocab

HAS_MODEL = importlib.util.find_spec("models.paraphraser.checkpoint") is not None


@pytest.fixture(scope="module")
def ppdb_path(mini_params, tmp_path_factory):
    path = tmp_path_factory.mktemp("gen") / "ppdb.sqlite"
    build_ppdb_table(mini_params.raw_path("ppdb"), path)
    return path


def test_join_tokens():
    assert join_tokens(tokenize("What's the U.S. capital, (roughly)? Don't ask.")) == \
        "what's the u.s. capital, (roughly)? don't ask."
    assert join_tokens(tokenize("I can't go")) == "i can't go"


@pytest.mark.parametrize("suggestion, expected", [
    ("authored", "who authored the novel moby dick?"),
    ("book", "who wrote the book moby dick?"),
    (None, "who wrote the novel moby dick?"),
    (NONE_TOKEN, "who wrote the novel moby dick?"),
    ("unrelated words", "who wrote the novel moby dick?"),
])
def test_ppdb_substitution_baseline(ppdb_path, suggestion, expected):
    with PPDBTable(ppdb_path) as table:
        out = PPDBSubstitution(table).generate([(suggestion, "who wrote the novel moby dick?")])
    assert out == [expected]


def test_best_scoring_span_is_replaced(ppdb_path):
    with PPDBTable(ppdb_path) as table:
        # "the writer" paraphrases only "the author"; "writer" only "author"
        out = PPDBSubstitution(table).generate([("the writer", "where was the author born?"),
                                                ("writer", "where was the author born?")])
    assert out == ["where was the writer born?", "where was the writer born?"]


class Scripted:
    """A stub paraphraser answering from a dict, recording its inputs."""

    def __init__(self, answers):
        self.answers, self.seen = answers, []

    def generate(self, inputs, beam_size=None):
        self.seen += list(inputs)
        return [self.answers.get(item, "") for item in inputs]


def test_candidate_counts(tmp_path):
    base = {"question": "Who wrote it?", "source": "who wrote it?", "phrase": "wrote",
            "score": 1.0}
    write_table(tmp_path / "s.parquet", [
        {**base, "qid": "a", "rank": 1, "suggestion": "penned"},
        {**base, "qid": "a", "rank": 2, "suggestion": "authored"},
        {**base, "qid": "a", "rank": 3, "suggestion": "composed"},
        {**base, "qid": "b", "rank": 0, "phrase": None, "suggestion": None, "score": None},
    ], schema=SUGGESTIONS_SCHEMA)
    stub = Scripted({("penned", "who wrote it?"): "Who  penned it?",
                     ("authored", "who wrote it?"): "who penned it?",     # duplicate
                     ("composed", "who wrote it?"): "who wrote it?",      # unchanged
                     (None, "who wrote it?"): "who is the writer?"})
    counts = generate_candidates(tmp_path / "s.parquet", tmp_path / "c.parquet", stub)
    assert len(stub.seen) == 5  # 3 suggestions of a, and once without for each question
    assert counts == {"inputs": 5, "empty": 0, "unchanged": 1, "duplicates": 1,
                      "candidates": 3, "suggestion_in_output": 1, "questions": 2,
                      "questions_with_candidates": 2}
    rows = read_table(tmp_path / "c.parquet").to_pylist()
    assert [(r["qid"], r["suggestion"], r["paraphrase"]) for r in rows] == [
        ("a", "penned", "who penned it?"), ("a", None, "who is the writer?"),
        ("b", None, "who is the writer?")]
    counts = generate_candidates(tmp_path / "s.parquet", tmp_path / "c.parquet", stub,
                                 without_suggestion=False)
    assert counts["inputs"] == 3 and counts["empty"] == 0


def test_unknown_or_incomplete_generator(ppdb_path):
    with pytest.raises(ValueError, match="unknown paraphraser"):
        load_generator("magic", None, ppdb_path)
    with pytest.raises(ValueError, match="needs model_dir"):
        load_generator("neural", None, ppdb_path)
    with pytest.raises(ValueError, match="needs ppdb_table"):
        load_generator("ppdb_substitution", None, None)


@pytest.mark.skipif(not HAS_MODEL, reason="models/paraphraser is not there yet")
def test_neural_paraphraser_trains_loads_and_generates(mini_params, tmp_path):
    triples = tmp_path / "triples.parquet"
    build_training_triples(mini_params.raw_path("wikianswers"), mini_params.raw_path("quora"),
                           triples)
    train_vocab(triples, tmp_path / "vocab", vocab_size=200)
    config = mini_params.paraphrase.model.model_copy(update={"max_steps": 2})
    state = train_paraphraser_model(triples, tmp_path / "vocab", tmp_path / "model", config)
    assert state["global_step"] == 2 and state["triples"] == 18
    generator = load_generator("neural", tmp_path / "model")
    out = generator.generate([("penned", "who wrote the novel moby dick?"),
                              (None, "are zebras striped?")], beam_size=2)
    assert len(out) == 2 and all(isinstance(text, str) for text in out)
