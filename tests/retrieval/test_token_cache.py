"""The token-id cache of passage shards: the same ids and vectors as tokenising, one
tokenisation per tokenizer and shard, and a damaged or mismatched file never trusted."""

from __future__ import annotations

import numpy as np
import pytest
from dense_testkit import tiny_bert, tiny_passages

from models.retriever.data import tokenize_passages
from tasks.io.passages import write_passages
from tasks.retrieval import token_cache
from tasks.retrieval.dense_shards import encode_shard, plan_shards, shard_path
from tasks.retrieval.encoder_spec import resolve_encoder_spec
from tasks.retrieval.token_cache import (
    cache_file,
    passage_token_ids,
    tokenizer_fingerprint,
)


@pytest.fixture(scope="module")
def encoders(tmp_path_factory):
    """Two different tiny BERTs with the same (MiniLM) tokenizer."""
    root = tmp_path_factory.mktemp("tiny")
    return tiny_bert(root / "a", seed=0), tiny_bert(root / "b", seed=1)


@pytest.fixture
def passages_tsv(tmp_path):
    path = tmp_path / "psgs.tsv"
    write_passages(path, tiny_passages())
    return path


def _tokenizer(path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path))


def _counting(monkeypatch):
    calls = []
    real = token_cache.tokenize_passages

    def counted(tokenizer, texts, titles, max_length):
        calls.append(len(texts))
        return real(tokenizer, texts, titles, max_length)

    monkeypatch.setattr(token_cache, "tokenize_passages", counted)
    return calls


def test_cached_ids_are_the_tokenizers_and_are_read_back(tmp_path, encoders, monkeypatch):
    tokenizer = _tokenizer(encoders[0])
    passages = tiny_passages()
    titles, texts = [p.title for p in passages], [p.text for p in passages]
    titles[3] = ""  # a passage without a title is tokenised alone, as DPR does
    n, kw = len(texts), {"max_length": 12, "titles": titles, "texts": texts}
    expected = tokenize_passages(tokenizer, texts, titles, 12)
    calls = _counting(monkeypatch)
    first = passage_token_ids(tmp_path, "fp", 0, n, tokenizer, **kw)
    again = passage_token_ids(tmp_path, "fp", 0, n, tokenizer, **kw)
    assert calls == [n]
    for got in (first, again):
        assert [row.tolist() for row in got] == expected
    assert max(len(row) for row in expected) == 12  # truncated to max_length
    # another max_length, row range or passage file is another file
    passage_token_ids(tmp_path, "fp", 0, n, tokenizer, **{**kw, "max_length": 16})
    passage_token_ids(tmp_path, "fp2", 0, n, tokenizer, **kw)
    assert calls == [n] * 3
    with pytest.raises(ValueError, match="given 3 texts"):
        passage_token_ids(tmp_path, "fp", 0, 5, tokenizer, max_length=12, titles=titles[:3],
                          texts=texts[:3])


def test_tokenizer_fingerprint_is_content_not_call_state(encoders):
    from transformers import AutoTokenizer, BertTokenizer

    a, b = _tokenizer(encoders[0]), _tokenizer(encoders[1])
    assert tokenizer_fingerprint(a) == tokenizer_fingerprint(b)
    a("some text " * 50, truncation=True, max_length=8)  # leaves truncation set on the backend
    assert tokenizer_fingerprint(a) == tokenizer_fingerprint(b)
    cased = AutoTokenizer.from_pretrained(str(encoders[0]), do_lower_case=False)
    assert tokenizer_fingerprint(cased) != tokenizer_fingerprint(a)
    assert tokenizer_fingerprint(BertTokenizer.from_pretrained(str(encoders[0]))) is None
    # remembered by content, not by object: the same tokenizer changed gets a new fingerprint
    before = tokenizer_fingerprint(a)
    a.add_tokens(["zzqxword"])
    assert tokenizer_fingerprint(a) != before
    assert tokenizer_fingerprint(b) == before


@pytest.mark.parametrize("damage", ["garbage", "truncated", "short", "missing key"])
def test_a_damaged_cache_file_is_tokenised_again(tmp_path, encoders, monkeypatch, caplog,
                                                 damage):
    tokenizer = _tokenizer(encoders[0])
    passages = tiny_passages()
    titles, texts = [p.title for p in passages], [p.text for p in passages]
    n = len(texts)
    path = cache_file(tmp_path, "fp", 0, n, tokenizer_fingerprint(tokenizer), 32)
    path.parent.mkdir(parents=True, exist_ok=True)
    if damage == "garbage":
        path.write_bytes(b"not an npz")
    elif damage == "truncated":  # a zip cut short: its magic bytes, not its directory
        np.savez(path, ids=np.arange(400, dtype=np.int32), offsets=np.arange(n + 1))
        path.write_bytes(path.read_bytes()[:200])
    elif damage == "short":  # the ids of fewer passages than the shard holds
        np.savez(path, ids=np.arange(4, dtype=np.int32), offsets=np.array([0, 2, 4]))
    else:
        np.savez(path, ids=np.arange(4, dtype=np.int32))
    calls = _counting(monkeypatch)
    kw = {"max_length": 32, "titles": titles, "texts": texts}
    got = passage_token_ids(tmp_path, "fp", 0, n, tokenizer, **kw)
    assert calls == [n]
    assert [row.tolist() for row in got] == tokenize_passages(tokenizer, texts, titles, 32)
    assert "tokenising again" in caplog.text
    assert passage_token_ids(tmp_path, "fp", 0, n, tokenizer, **kw) is not None
    assert calls == [n]  # the replaced file is read back


def test_encodings_share_token_ids_and_give_the_same_vectors(tmp_path, encoders, passages_tsv,
                                                             monkeypatch):
    """Two encoders with one tokenizer: the second reads the first's ids, and every vector is
    bit-identical to an encoding without the cache."""
    cache = tmp_path / "tokens"
    calls = _counting(monkeypatch)
    for number, model in enumerate(encoders):
        spec = resolve_encoder_spec(str(model), pooling="mean", normalize=False,
                                    name=f"tiny-{number}")
        for start, end in plan_shards(passages_tsv, 10):
            cached = encode_shard(passages_tsv, start, end,
                                  shard_path(tmp_path / f"cached-{number}", start), spec,
                                  batch_size=4, cpu_threads=1, token_cache=cache)
            plain = encode_shard(passages_tsv, start, end,
                                 shard_path(tmp_path / f"plain-{number}", start), spec,
                                 batch_size=4, cpu_threads=1)
            np.testing.assert_array_equal(np.load(cached["path"]), np.load(plain["path"]))
    assert calls == [10, 10, 4]  # the first encoder's three shards, once
    files = sorted(cache.glob("*.npz"))
    assert len(files) == 3
    with np.load(files[0]) as data:
        assert data["ids"].dtype == np.uint16  # MiniLM's 30,522 ids fit in two bytes


def test_ids_that_do_not_fit_two_bytes_are_kept_as_int32(tmp_path, monkeypatch):
    big = [[101, 70_000, 102], [101, 5, 102]]
    monkeypatch.setattr(token_cache, "tokenize_passages", lambda *args: big)
    monkeypatch.setattr(token_cache, "tokenizer_fingerprint", lambda tokenizer: "t")
    got = passage_token_ids(tmp_path, "fp", 0, 2, object(), max_length=8, titles=["a", "b"],
                            texts=["x", "y"])
    assert [row.tolist() for row in got] == big and got[0].dtype == np.int32
