"""Encoding runs with a pinned torch thread count, whatever the caller set; FAISS threads do
not change search results (exact inner product, ties included)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from dense_testkit import tiny_bert, tiny_dpr, tiny_passages

from models.threads import machine_cpu_threads, torch_threads
from tasks.retrieval import encoding
from tasks.retrieval.encoders import encode_texts, load_encoder, load_shared_model

TEXTS = [p.text for p in tiny_passages()]
TITLES = [p.title for p in tiny_passages()]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_shared_model(tiny_bert(tmp_path_factory.mktemp("tiny-bert")))


@pytest.fixture
def seen_threads(monkeypatch):
    """The torch thread count of every batch the model encodes."""
    seen: list[int] = []
    pool = encoding._pool

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return pool(*args, **kwargs)

    monkeypatch.setattr(encoding, "_pool", spy)
    return seen


@pytest.mark.parametrize("pinned", [1, 2, None])
def test_vectors_and_threads_do_not_depend_on_the_callers_setting(tiny, seen_threads, pinned):
    model, tokenizer = tiny
    want = machine_cpu_threads() if pinned is None else pinned
    vectors = []
    for caller in (1, 3, 2):
        with torch_threads(caller):
            vectors.append(encode_texts(model, tokenizer, TEXTS, batch_size=5, max_length=32,
                                        titles=TITLES, cpu_threads=pinned))
            assert torch.get_num_threads() == caller  # the caller's count is restored
    assert len(seen_threads) == 3 * 5 and set(seen_threads) == {want}
    assert all(v.tobytes() == vectors[0].tobytes() for v in vectors[1:])


def test_dpr_pair_encodes_both_sides_with_the_configured_threads(tmp_path, seen_threads):
    from tasks.retrieval.encoders import resolve_encoder_spec

    question, ctx = tiny_dpr(tmp_path)
    spec = resolve_encoder_spec(str(question), str(ctx), max_length=32)
    encoder = load_encoder(spec, "cpu")
    with torch_threads(3):
        encoder.encode_questions(TEXTS[:4], batch_size=4, cpu_threads=1)
        encoder.encode_passages(TITLES, TEXTS, batch_size=24, cpu_threads=1)
        assert torch.get_num_threads() == 3
    assert seen_threads == [1, 1]


def test_thread_counts_are_per_worker_thread():
    """Two task-runner workers pinning different counts at the same time each keep their own
    (torch's OpenMP backend: ``omp_set_num_threads`` is per thread)."""
    barrier, seen = threading.Barrier(2), {}

    def work(n: int) -> None:
        with torch_threads(n):
            barrier.wait()
            seen[n] = torch.get_num_threads()
            barrier.wait()

    workers = [threading.Thread(target=work, args=(n,)) for n in (1, 3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert seen == {1: 1, 3: 3}


def test_faiss_threads_do_not_change_flat_search_ties_included(tmp_path):
    import faiss

    from tasks.retrieval.dense_shards import shard_path, write_shard
    from tasks.retrieval.encoders import Embeddings
    from tasks.retrieval.faiss_index import DenseIndex, build_faiss_index

    rng = np.random.default_rng(0)
    base = rng.standard_normal((400, 16)).astype(np.float32)
    vectors = np.concatenate([base, base[:100], base[:50]])  # duplicates: tied scores
    ids = [f"p{i}" for i in range(len(vectors))]
    shard = write_shard(shard_path(tmp_path / "shards", 0), vectors, ids,
                        {"start": 0, "end": len(ids), "model": "m", "model_fingerprint": "fp"})
    index = DenseIndex.open(build_faiss_index([shard], tmp_path / "index",
                                              model_fingerprint="fp"))
    before = faiss.omp_get_max_threads()
    try:
        for n_queries in (5, 40):  # FAISS: one-by-one scan below 20 queries, BLAS above
            queries = rng.standard_normal((n_queries, 16)).astype(np.float32)
            queries[0] = vectors[3]
            embeddings = Embeddings(queries, [f"q{i}" for i in range(n_queries)], "m", "fp")
            runs = []
            for threads in (1, 2, 4):
                faiss.omp_set_num_threads(threads)
                runs.append(index.search_run(embeddings, 50))
            ties = sum(a[1] == b[1] for hits in runs[0].values()
                       for a, b in zip(hits, hits[1:], strict=False))
            assert ties > 0  # the test covers tied scores
            assert runs[1] == runs[0] and runs[2] == runs[0]
    finally:
        faiss.omp_set_num_threads(before)
