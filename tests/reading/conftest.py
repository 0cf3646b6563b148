"""Fixtures of the reader tests: the packaged MiniLM tokenizer and a tiny random BERT QA
checkpoint with that tokenizer (trains in seconds on CPU)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def minilm_dir():
    from tasks.reading.stages import resolve_reader_model

    return resolve_reader_model("packaged:all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def tokenizer(minilm_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(minilm_dir))


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory, tokenizer):
    """A 2-layer, 64-wide BERT for QA with random weights (seed 0) and the MiniLM tokenizer."""
    import torch
    from transformers import BertConfig, BertForQuestionAnswering

    torch.manual_seed(0)
    model = BertForQuestionAnswering(BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=128, max_position_embeddings=160,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    path = tmp_path_factory.mktemp("tiny") / "tiny-bert"
    model.save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path
