"""The encoding loop with tokenisation ahead of the model (the CUDA path, run here on CPU):
identical vectors whatever the prefetch, errors of the producer thread reach the caller, and
the tokenizer's thread pool is switched on only around CUDA encodings."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from dense_testkit import tiny_bert

from tasks.retrieval import encoding
from tasks.retrieval.encoders import encode_texts, load_shared_model

TEXTS = [f"passage {i} " + "word " * (i * 7 % 40) for i in range(23)] + ["", "x " * 300]
TITLES = [f"Title {i}" if i % 3 else "" for i in range(len(TEXTS))]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_shared_model(tiny_bert(tmp_path_factory.mktemp("tiny-bert")))


class Recording:
    """A tokenizer wrapper that records the thread and TOKENIZERS_PARALLELISM of each call."""

    def __init__(self, tokenizer, fail: bool = False):
        self.tokenizer, self.fail, self.calls = tokenizer, fail, []

    def __getattr__(self, name):
        return getattr(self.tokenizer, name)

    def __call__(self, *args, **kwargs):
        self.calls.append((threading.current_thread().name,
                           os.environ.get("TOKENIZERS_PARALLELISM")))
        if self.fail:
            raise ValueError("tokenizer failed")
        return self.tokenizer(*args, **kwargs)


def test_prefetched_batches_give_identical_vectors_in_text_order(tiny, monkeypatch):
    model, tokenizer = tiny
    monkeypatch.setattr(encoding, "SORT_WINDOW", 7)  # several windows
    inline = encode_texts(model, tokenizer, TEXTS, batch_size=3, max_length=64, titles=TITLES,
                          normalize=True, prefetch=0)
    recording = Recording(tokenizer)
    for ahead in (1, 4):
        ahead_vectors = encode_texts(model, recording, TEXTS, batch_size=3, max_length=64,
                                     titles=TITLES, normalize=True, prefetch=ahead)
        assert np.array_equal(ahead_vectors, inline)
    assert {name for name, _ in recording.calls} == {"encode-tokenizer"}  # the producer
    single = encode_texts(model, tokenizer, TEXTS[5:6], max_length=64, titles=TITLES[5:6],
                          normalize=True)
    assert np.array_equal(single[0], inline[5])  # row order kept
    assert not [t for t in threading.enumerate() if t.name == "encode-tokenizer"]


def test_cpu_default_is_inline_with_tokenizer_parallelism_off(tiny):
    model, tokenizer = tiny
    recording = Recording(tokenizer)
    encode_texts(model, recording, TEXTS, batch_size=4, max_length=64)
    assert {name for name, _ in recording.calls} == {threading.current_thread().name}
    assert {value for _, value in recording.calls} == {os.environ.get("TOKENIZERS_PARALLELISM")}


def test_a_failing_tokenizer_raises_in_the_caller(tiny):
    model, tokenizer = tiny
    with pytest.raises(ValueError, match="tokenizer failed"):
        encode_texts(model, Recording(tokenizer, fail=True), TEXTS, max_length=64, prefetch=2)
    assert not [t for t in threading.enumerate() if t.name == "encode-tokenizer"]


def test_tokenizer_parallelism_only_inside_cuda_encodings(monkeypatch):
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    with encoding._tokenizer_parallelism(True):
        assert os.environ["TOKENIZERS_PARALLELISM"] == "true"
        with encoding._tokenizer_parallelism(True):  # a concurrent encoding
            pass
        assert os.environ["TOKENIZERS_PARALLELISM"] == "true"
    assert os.environ["TOKENIZERS_PARALLELISM"] == "false"
    with encoding._tokenizer_parallelism(False):
        assert os.environ["TOKENIZERS_PARALLELISM"] == "false"
