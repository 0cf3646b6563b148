"""The SentencePiece vocabulary: lower-cased data, capped by what the data supports."""

from __future__ import annotations

import json

import pytest
import sentencepiece as spm

from tasks.paraphrase.text import NONE_TOKEN
from tasks.paraphrase.training_data import Triple, build_training_triples
from tasks.paraphrase.vocab import (
    train_sentencepiece,
    train_vocab,
    vocab_model_path,
    vocab_sentences,
)


@pytest.fixture(scope="module")
def triples_path(mini_params, tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "triples.parquet"
    build_training_triples(mini_params.raw_path("wikianswers"), mini_params.raw_path("quora"),
                           path, none_share=0.5)
    return path


def test_sentences_are_lower_cased_distinct_and_skip_none():
    triples = [Triple("What IS  it?", NONE_TOKEN, "what is it?"), Triple("a b", "C", "a b")]
    assert list(vocab_sentences(triples)) == ["what is it?", "a b", "c"]


def test_8k_request_on_tiny_data_gives_what_the_data_supports(triples_path, tmp_path):
    info = train_vocab(triples_path, tmp_path / "vocab", vocab_size=8000)
    sp = spm.SentencePieceProcessor(model_file=str(vocab_model_path(tmp_path / "vocab")))
    assert info["requested_vocab_size"] == 8000
    assert 30 < sp.get_piece_size() == info["pieces"] < 8000
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert not any(p != p.lower() for p in pieces if not p.startswith("<"))
    assert "<none>" not in pieces  # the paraphraser adds its own special tokens
    manifest = json.loads((tmp_path / "vocab" / "manifest.json").read_text())
    assert manifest["pieces"] == info["pieces"]
    assert sp.decode(sp.encode("what is the capital city of france?")) == \
        "what is the capital city of france?"


def test_size_below_the_character_count_is_raised_to_it():
    proto, info = train_sentencepiece(["abc def", "ghi"], vocab_size=8)
    assert info["trained_vocab_size"] == 9 + 1 + 3 and info["requested_vocab_size"] == 8
    assert spm.SentencePieceProcessor(model_proto=proto).get_piece_size() == 13
    with pytest.raises(ValueError, match="no sentences"):
        train_sentencepiece([])


def test_configured_size_is_respected_when_data_allows(triples_path, tmp_path):
    info = train_vocab(triples_path, tmp_path / "v", vocab_size=60)
    assert info["pieces"] == 60
