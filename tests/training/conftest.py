"""Tiny inputs for the training tests: a 1-layer BERT (hidden 32) with the packaged MiniLM
tokenizer, and DPR training JSON whose positive passage shares a word with the question."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

TINY_HIDDEN = 32


def make_tiny_bert(path: Path, hidden: int = TINY_HIDDEN, seed: int = 0) -> Path:
    """A randomly initialised ``BertForMaskedLM`` (1 layer) + the MiniLM tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    from tasks.retrieval.encoders import resolve_model_path

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path("packaged:all-MiniLM-L6-v2"))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden,
                        num_hidden_layers=1, num_attention_heads=2, intermediate_size=2 * hidden,
                        max_position_embeddings=128)
    BertForMaskedLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


WORDS = ("tiger", "piano", "river", "castle", "pepper", "rocket", "violin", "garden", "dragon",
         "winter", "silver", "forest", "engine", "island", "candle", "mirror", "thunder",
         "basket", "lemon", "anchor", "saddle", "marble", "falcon", "copper", "desert")


def dpr_examples(n: int, seed: int = 0) -> list[dict]:
    """``n`` (at most 24) DPR training examples: question i asks about a word found only in
    its positive passage; the hard negative is about the next word."""
    words = list(WORDS)
    random.Random(seed).shuffle(words)
    out = []
    for i in range(n):
        out.append({
            "dataset": "tiny", "question": f"where is the {words[i]}", "answers": [f"room {i}"],
            "positive_ctxs": [{"title": words[i].title(), "text": f"the {words[i]} is in room {i}",
                               "score": 1.0, "passage_id": str(i)}],
            "negative_ctxs": [],
            "hard_negative_ctxs": [{"title": words[i + 1].title(),
                                    "text": f"the {words[i + 1]} is somewhere else",
                                    "passage_id": str(1000 + i)}],
        })
    return out


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    """A tiny BERT directory (session-wide; tests must not modify it)."""
    return make_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert")


@pytest.fixture(scope="session")
def tiny_train_json(tmp_path_factory) -> Path:
    """A DPR training JSON of 24 tiny examples."""
    path = tmp_path_factory.mktemp("dpr") / "train.json"
    path.write_text(json.dumps(dpr_examples(24)), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tiny_config():
    """A factory of CPU configs for seconds-long runs (lr high enough for the tiny model)."""
    return _tiny_config


def _tiny_config(**overrides):
    from models.retriever import RetrieverTrainConfig

    values = {"max_steps": 20, "max_epochs": None, "batch_size": 8, "lr": 3e-3,
              "warmup_steps": 0, "max_length": 32, "log_every_n_steps": 1,
              "checkpoint_every_n_steps": 5, "accelerator": "cpu", "seed": 3, "cpu_threads": 1}
    values.update(overrides)
    return RetrieverTrainConfig(**values)
