"""Dense encoders: length-sorted batching, pooling, DPR pairs, fingerprints, MiniLM parity."""

from __future__ import annotations

import re

import numpy as np
import pytest
from dense_testkit import minilm_path, tiny_bert, tiny_dpr

from tasks.retrieval.encoders import (
    encode_texts,
    load_encoder,
    load_shared_model,
    model_slug,
    resolve_encoder_spec,
)

TEXTS = [
    "Where was Ada Lindqvist born?",
    "short",
    "A much longer text about the history of a small town in the north, its river, its "
    "bridges and the people who lived there for several centuries before the railway came.",
    "Medium length sentence with a few more words in it.",
    "",
    "Another question about a painter from Marseille?",
    "x " * 300,  # truncated at max_length
]
TITLES = ["Ada Lindqvist", "", "Northtown", "Medium", "Empty text", "Bruno", "Long"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_shared_model(tiny_bert(tmp_path_factory.mktemp("tiny-bert")))


def _reference(model, tokenizer, texts, titles, pooling, max_length=64):
    """One text at a time, no padding, pooled by hand: the definition of the vectors."""
    import torch

    rows = []
    with torch.no_grad():
        for i, text in enumerate(texts):
            # DPR: tokenizer.encode(title, text_pair=text) when there is a title
            args = (titles[i],) if titles and titles[i] else (text,)
            pair = {"text_pair": text} if titles and titles[i] else {}
            enc = tokenizer(*args, **pair, truncation=True, max_length=max_length,
                            return_tensors="pt")
            hidden = model(input_ids=enc["input_ids"],
                           attention_mask=enc["attention_mask"]).last_hidden_state[0]
            rows.append((hidden[0] if pooling == "cls" else hidden.mean(0)).numpy())
    return np.stack(rows)


@pytest.mark.parametrize("with_titles", [False, True])
def test_length_sorted_batches_equal_one_by_one_encoding(tiny, with_titles):
    model, tokenizer = tiny
    titles = TITLES if with_titles else None
    batched = encode_texts(model, tokenizer, TEXTS, batch_size=3, max_length=64,
                           pooling="mean", titles=titles)
    reference = _reference(model, tokenizer, TEXTS, titles, "mean")
    assert batched.dtype == np.float32 and batched.shape == (len(TEXTS), 32)
    np.testing.assert_allclose(batched, reference, rtol=1e-4, atol=1e-5)
    unsorted = encode_texts(model, tokenizer, TEXTS, batch_size=3, max_length=64,
                            pooling="mean", titles=titles, sort_by_length=False)
    np.testing.assert_allclose(batched, unsorted, rtol=1e-4, atol=1e-5)


def test_title_is_the_first_segment_of_a_pair(tiny):
    model, tokenizer = tiny
    with_title = encode_texts(model, tokenizer, ["born in Uppsala"], titles=["Ada"],
                              pooling="cls")
    np.testing.assert_allclose(with_title, _reference(model, tokenizer, ["born in Uppsala"],
                                                      ["Ada"], "cls"), rtol=1e-4, atol=1e-5)
    without = encode_texts(model, tokenizer, ["born in Uppsala"], pooling="cls")
    assert not np.allclose(with_title, without)


def test_mean_and_cls_pooling_differ_and_normalisation(tiny):
    model, tokenizer = tiny
    mean = encode_texts(model, tokenizer, TEXTS, pooling="mean", max_length=64)
    cls = encode_texts(model, tokenizer, TEXTS, pooling="cls", max_length=64)
    assert not np.allclose(mean, cls, atol=1e-3)
    np.testing.assert_allclose(cls, _reference(model, tokenizer, TEXTS, None, "cls"),
                               rtol=1e-4, atol=1e-5)
    unit = encode_texts(model, tokenizer, TEXTS, pooling="mean", max_length=64, normalize=True)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-5)
    assert encode_texts(model, tokenizer, [], pooling="mean").shape == (0, 32)
    with pytest.raises(ValueError, match="pooling"):
        encode_texts(model, tokenizer, TEXTS, pooling="max")


@pytest.mark.slow  # importing sentence-transformers takes ~10 s; bench/bench_dense.py checks too
def test_packaged_minilm_matches_sentence_transformers():
    from sentence_transformers import SentenceTransformer

    spec = resolve_encoder_spec("packaged:all-MiniLM-L6-v2", pooling="mean", normalize=True)
    assert (spec.kind, spec.pooling, spec.name) == ("shared", "mean", "all-MiniLM-L6-v2")
    ours = load_encoder(spec, "cpu").encode_questions(TEXTS, batch_size=4)
    theirs = SentenceTransformer(str(minilm_path()), device="cpu").encode(TEXTS, batch_size=4)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_dpr_pair_is_detected_and_uses_two_encoders(tmp_path):
    question_dir, ctx_dir = tiny_dpr(tmp_path)
    spec = resolve_encoder_spec(str(question_dir))  # ctx encoder found by its name
    assert (spec.kind, spec.pooling) == ("dpr", "pooler")
    assert spec.ctx_model == str(ctx_dir.resolve())
    encoder = load_encoder(spec, "cpu")
    questions = encoder.encode_questions(["who?", "where was she born?"])
    passages = encoder.encode_passages(["", ""], ["who?", "where was she born?"])
    assert questions.shape == passages.shape == (2, 32)
    assert not np.allclose(questions, passages)  # different weights for the two sides
    renamed = tmp_path / "my-question-model"
    question_dir.rename(renamed)
    with pytest.raises(ValueError, match="name its context encoder"):
        resolve_encoder_spec(str(renamed))
    assert resolve_encoder_spec(str(renamed), ctx_model=str(ctx_dir)).fingerprint == \
        spec.fingerprint
    with pytest.raises(ValueError, match="DPRContextEncoder"):
        resolve_encoder_spec(str(renamed), ctx_model=str(renamed))


def test_a_saved_pairs_question_encoder_alone_is_refused(tmp_path):
    """A plain (mean-pooled) pair saved as question_encoder/ + ctx_encoder/: naming only the
    question encoder would silently encode passages with it too (a "shared" spec)."""
    question = tiny_bert(tmp_path / "run" / "question_encoder", seed=0)
    ctx = tiny_bert(tmp_path / "run" / "ctx_encoder", seed=1)
    with pytest.raises(ValueError, match="question encoder of a saved pair.*dense.ctx_model"):
        resolve_encoder_spec(str(question))
    spec = resolve_encoder_spec(str(question), ctx_model=str(ctx))
    assert (spec.kind, spec.ctx_model) == ("pair", str(ctx))
    alone = tiny_bert(tmp_path / "alone" / "question_encoder", seed=0)  # no pair beside it
    assert resolve_encoder_spec(str(alone)).kind == "shared"


def test_concurrent_loads_share_one_encoder(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from tasks.retrieval import encoders

    spec = resolve_encoder_spec(str(tiny_bert(tmp_path / "m")))
    encoders._load_encoder.cache_clear()
    with ThreadPoolExecutor(3) as pool:  # from_pretrained is not thread-safe by itself
        loaded = list(pool.map(lambda _: load_encoder(spec, "cpu"), range(3)))
    assert all(item is loaded[0] for item in loaded)


def test_fingerprint_follows_weights_and_settings(tmp_path):
    first = tiny_bert(tmp_path / "a", seed=0)
    base = resolve_encoder_spec(str(first))
    assert resolve_encoder_spec(str(first)).fingerprint == base.fingerprint
    for changed in (resolve_encoder_spec(str(first), pooling="cls"),
                    resolve_encoder_spec(str(first), max_length=128),
                    resolve_encoder_spec(str(first), normalize=False),
                    resolve_encoder_spec(str(tiny_bert(tmp_path / "b", seed=1)))):
        assert changed.fingerprint != base.fingerprint
    with pytest.raises(FileNotFoundError, match="neither a local model directory"):
        resolve_encoder_spec("no-such-org/no-such-model")


def test_a_model_not_found_says_why(tmp_path, monkeypatch):
    """A mistyped path is named as a path; a hub name not in the cache says that the hub is
    off and how to allow it (when it is off)."""
    for path in (str(tmp_path / "gone"), "./models/gone", "data/models/retriever/gone"):
        with pytest.raises(FileNotFoundError, match=f"^{re.escape(path)}: no such model "
                                                    "directory$"):
            resolve_encoder_spec(path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(FileNotFoundError, match=r"the hub is off \(HF_HUB_OFFLINE=1.*run with "
                                                r"`HF_HUB_OFFLINE=0`"):
        resolve_encoder_spec("no-such-org/no-such-model")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr("huggingface_hub.snapshot_download", _no_such_repository)
    with pytest.raises(FileNotFoundError, match="neither a local") as info:
        resolve_encoder_spec("no-such-org/no-such-model")
    assert "HF_HUB_OFFLINE" not in str(info.value)


def _no_such_repository(name: str) -> str:
    raise OSError(f"{name}: 404")  # what the hub answers, without touching the network
    with pytest.raises(ValueError, match="unknown packaged model"):
        resolve_encoder_spec("packaged:nope")


def test_model_slug():
    assert model_slug("packaged:all-MiniLM-L6-v2") == "all-MiniLM-L6-v2"
    assert model_slug("facebook/dpr-question_encoder-single-nq-base") == \
        "facebook--dpr-question_encoder-single-nq-base"
    assert model_slug("/models/my-encoder/") == "my-encoder"
