"""FAISS indexes over shards: exactness of flat search, HNSW/IVF-PQ, and every refusal."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from tasks.io.passages import Passage, write_passages
from tasks.retrieval.dense_shards import (
    ModelMismatchError,
    ShardError,
    ids_path,
    plan_shards,
    shard_path,
    validate_shard,
    write_shard,
)
from tasks.retrieval.encoders import Embeddings
from tasks.retrieval.faiss_index import (
    DenseIndex,
    build_faiss_index,
    dense_search,
    read_index_manifest,
)

DIM = 16
MODEL = "f" * 64


def _vectors(rows: int, dim: int = DIM, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)


def _shards(directory, sizes, dim=DIM, model=MODEL, seed=0):
    """Random shards with ids p0, p1, ...; returns (paths, all vectors, all ids)."""
    paths, start, blocks = [], 0, []
    for number, rows in enumerate(sizes):
        vectors = _vectors(rows, dim, seed + number)
        ids = [f"p{start + i}" for i in range(rows)]
        path = shard_path(directory, number)
        write_shard(path, vectors, ids, {"start": start, "end": start + rows, "model": "m",
                                         "model_fingerprint": model,
                                         "passages_fingerprint": "tsv"})
        paths.append(path)
        blocks.append(vectors)
        start += rows
    return paths, np.concatenate(blocks), [f"p{i}" for i in range(start)]


def _queries(n=7, model=MODEL, name="m", seed=99):
    return Embeddings(_vectors(n, DIM, seed), [f"q{i}" for i in range(n)], name, model)


def test_flat_search_equals_brute_force_inner_product(tmp_path):
    paths, vectors, ids = _shards(tmp_path / "shards", [40, 40, 23])
    index_dir = build_faiss_index(paths[::-1], tmp_path / "index")  # any order of shards
    queries = _queries()
    run = dense_search(index_dir, queries, k=10)
    scores = queries.vectors @ vectors.T
    for qi, qid in enumerate(queries.ids):
        top = np.argsort(-scores[qi], kind="stable")[:10]
        assert [d for d, _ in run[qid]] == [ids[i] for i in top]
        np.testing.assert_allclose([s for _, s in run[qid]], scores[qi, top], rtol=1e-5,
                                   atol=1e-5)
    manifest = read_index_manifest(index_dir)
    assert (manifest["index_kind"], manifest["dim"], manifest["rows"], manifest["shards"]) == \
        ("flat", DIM, 103, 3)
    assert manifest["model_fingerprint"] == MODEL and manifest["fingerprint"]
    assert len(dense_search(index_dir, queries, k=500)["q0"]) == 103  # k above the size


def _search_with_pyserini(index_dir: str, vectors: np.ndarray,
                          k: int) -> list[list[tuple[str, float]]]:
    """Open ``index_dir`` with Pyserini's own dense searcher and search each query vector
    (in the JVM worker: importing ``pyserini.search`` starts the JVM)."""
    from tasks.retrieval.jvm import start_jvm

    start_jvm()
    from pyserini.search.faiss import FaissSearcher

    searcher = FaissSearcher(index_dir, query_encoder=None)  # queries come as vectors
    return [[(hit.docid, float(hit.score)) for hit in searcher.search(vector[None, :], k=k)]
            for vector in vectors]


def test_pyserini_faiss_searcher_opens_our_index_and_ranks_as_we_do(tmp_path):
    from tasks.retrieval.jvm import in_jvm_process

    paths, _, _ = _shards(tmp_path / "shards", [40, 23])
    index_dir = build_faiss_index(paths, tmp_path / "index")
    queries = _queries()
    ours = dense_search(index_dir, queries, k=10)
    theirs = in_jvm_process(_search_with_pyserini, str(index_dir), queries.vectors, 10)
    for qid, hits in zip(queries.ids, theirs, strict=True):
        assert [d for d, _ in hits] == [d for d, _ in ours[qid]]
        np.testing.assert_allclose([s for _, s in hits], [s for _, s in ours[qid]], rtol=1e-6)


def test_hnsw_and_ivfpq_indexes(tmp_path):
    paths, vectors, ids = _shards(tmp_path / "shards", [300, 300])
    queries = _queries(20)
    exact = np.argsort(-(queries.vectors @ vectors.T), axis=1)[:, :10]
    hnsw = build_faiss_index(paths, tmp_path / "hnsw", kind="hnsw", hnsw_m=16, ef_search=64)
    run = dense_search(hnsw, queries, k=10)
    recall = np.mean([len({ids[i] for i in exact[q]} & {d for d, _ in run[f"q{q}"]}) / 10
                      for q in range(20)])
    assert recall >= 0.9
    ivf = build_faiss_index(paths, tmp_path / "ivf", kind="ivfpq", nlist=8, nprobe=8,
                            pq_m=4, train_size=600)
    manifest = read_index_manifest(ivf)
    assert manifest["params"]["pq_m"] == 4 and manifest["params"]["nprobe"] == 8
    assert manifest["params"]["pq_nbits"] == 8
    run = dense_search(ivf, queries, k=10)
    assert all(len(hits) == 10 and len({d for d, _ in hits}) == 10 for hits in run.values())
    assert manifest["fingerprint"] != read_index_manifest(hnsw)["fingerprint"]
    one_list = build_faiss_index(paths, tmp_path / "ivf1", kind="ivfpq", nlist=8, nprobe=1,
                                 pq_m=4)  # one list probed: fewer than k hits (rows -1)
    short = dense_search(one_list, queries, k=500)
    assert all(0 < len(hits) < 500 for hits in short.values())
    assert {d for hits in short.values() for d, _ in hits} <= set(ids)
    with pytest.raises(ValueError, match="pq_m=5 must divide"):
        build_faiss_index(paths, tmp_path / "bad", kind="ivfpq", pq_m=5)


def test_shard_with_wrong_dimension_is_refused(tmp_path):
    paths, _, _ = _shards(tmp_path / "shards", [5, 5])
    other = shard_path(tmp_path / "shards", 2)
    write_shard(other, _vectors(5, DIM + 1), [f"x{i}" for i in range(5)],
                {"start": 10, "end": 15, "model": "m", "model_fingerprint": MODEL,
                 "passages_fingerprint": "tsv"})
    with pytest.raises(ShardError, match="wrong dimension: 17"):
        build_faiss_index([*paths, other], tmp_path / "index")
    with pytest.raises(ShardError, match="wrong dimension: 17, expected 16"):
        validate_shard(other, dim=DIM)
    meta = json.loads(ids_path(paths[0]).read_text())
    meta["dim"] = 8
    ids_path(paths[0]).write_text(json.dumps(meta))
    with pytest.raises(ShardError, match="records dim 8"):
        validate_shard(paths[0])
    assert not (tmp_path / "index").exists()


def test_ids_rows_mismatch_and_unfinished_shard_are_refused(tmp_path):
    paths, _, _ = _shards(tmp_path / "shards", [5, 5, 5])
    meta = json.loads(ids_path(paths[1]).read_text())
    meta["ids"] = meta["ids"][:-1]
    ids_path(paths[1]).write_text(json.dumps(meta))
    with pytest.raises(ShardError, match="ids/rows mismatch: 5 vectors, 4 ids"):
        build_faiss_index(paths, tmp_path / "index")
    ids_path(paths[2]).unlink()
    with pytest.raises(ShardError, match="unfinished"):
        validate_shard(paths[2])
    complete, _, _ = _shards(tmp_path / "complete", [5, 5, 5])
    with pytest.raises(ShardError, match="starts at row 10 .* leaves a gap"):
        build_faiss_index([complete[0], complete[2]], tmp_path / "index")
    with pytest.raises(ShardError, match="overlaps the previous shard"):
        build_faiss_index([complete[0], complete[0]], tmp_path / "index")
    assert not (tmp_path / "index").exists()


def test_shards_and_queries_of_another_model_are_refused(tmp_path):
    paths, _, _ = _shards(tmp_path / "shards", [5])
    others, _, _ = _shards(tmp_path / "others", [5, 5], model="e" * 64)
    with pytest.raises(ModelMismatchError, match="one index, one model"):
        build_faiss_index([paths[0], others[1]], tmp_path / "index")
    with pytest.raises(ModelMismatchError, match="expected fingerprint eeeeeeeeeeee"):
        build_faiss_index(paths, tmp_path / "index", model_fingerprint="e" * 64)
    index_dir = build_faiss_index(paths, tmp_path / "index", model_fingerprint=MODEL)
    wrong = _queries(model="d" * 64, name="other-encoder")
    with pytest.raises(ModelMismatchError) as error:
        dense_search(index_dir, wrong, k=3)
    message = str(error.value)
    assert "'m'" in message and "'other-encoder'" in message and "dddddddddddd" in message
    with pytest.raises(TypeError, match="Embeddings"):
        dense_search(index_dir, wrong.vectors, k=3)
    opened = DenseIndex.open(index_dir)
    assert opened.search(_queries().vectors, 3)[1].shape == (7, 3)


def test_plan_shards(tmp_path):
    tsv = tmp_path / "psgs.tsv"
    write_passages(tsv, [Passage(str(i), f"text {i}", f"T{i}") for i in range(1, 11)])
    assert plan_shards(tsv, 4) == [(0, 4), (4, 8), (8, 10)]
    assert plan_shards(tsv, 10) == [(0, 10)]
    with pytest.raises(ValueError, match="shard_size"):
        plan_shards(tsv, 0)


def test_shards_read_from_marks_hold_the_files_passages(tmp_path, monkeypatch):
    """Every shard of every size reads its own passages, seeking to a mark of one checked
    pass per process and file version (not one pass from the start per shard)."""
    from tasks.retrieval import dense_shards

    tsv = tmp_path / "psgs.tsv"
    passages = [Passage(str(i), f"text {i}" + ("\nline" if i % 4 == 0 else ""), f"T{i}")
                for i in range(1, 31)]
    write_passages(tsv, passages)
    passes, mark = [], dense_shards.mark_passages

    def counted(path, every):
        passes.append(every)
        return mark(path, every)

    monkeypatch.setattr(dense_shards, "MARK_EVERY", 7)
    monkeypatch.setattr(dense_shards, "_MARKS", {})
    monkeypatch.setattr(dense_shards, "mark_passages", counted)
    for size in (1, 4, 7, 30):
        for start, end in plan_shards(tsv, size):
            assert dense_shards.read_passage_range(tsv, start, end) == passages[start:end]
    assert passes == [7]
    with pytest.raises(ShardError, match="has only 30 passages"):
        dense_shards.read_passage_range(tsv, 28, 31)
    write_passages(tsv, passages[:12])  # a new version of the file is marked again
    os.utime(tsv, ns=(1, 1))
    assert dense_shards.read_passage_range(tsv, 8, 12) == passages[8:12]
    assert passes == [7, 7]


def test_a_shard_killed_while_re_encoded_is_not_taken_for_finished(tmp_path, monkeypatch):
    """Re-encoding a finished shard with another model, killed after the new vectors landed
    and before the new ids file: the old ids file (naming the old model) must not remain
    beside the new vectors, where the shard check would take them for the old model's."""
    from tasks.retrieval import dense_shards

    paths, _, _ = _shards(tmp_path / "shards", [5])
    shard = paths[0]

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed between the vectors and the ids file")

    monkeypatch.setattr(dense_shards, "write_json", killed)
    with pytest.raises(KeyboardInterrupt):
        write_shard(shard, _vectors(5, seed=7), [f"p{i}" for i in range(5)],
                    {"start": 0, "end": 5, "model": "other", "model_fingerprint": "e" * 64,
                     "passages_fingerprint": "tsv"})
    assert not ids_path(shard).exists()
    with pytest.raises(ShardError, match="unfinished"):
        validate_shard(shard, model_fingerprint=MODEL)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads Linux's /proc")
def test_a_flat_index_is_memory_mapped_not_read(tmp_path):
    """Opening a flat index maps its file: the process does not grow by the vectors' size
    (a real DPR index is 64 GB), and the search is the same as on an index read in full."""
    import faiss

    rows, dim = 100_000, 512  # 205 MB of vectors
    path = shard_path(tmp_path / "shards", 0)
    write_shard(path, _vectors(rows, dim), [f"p{i}" for i in range(rows)],
                {"start": 0, "end": rows, "model": "m", "model_fingerprint": MODEL,
                 "passages_fingerprint": "tsv"})
    index_dir = build_faiss_index([path], tmp_path / "index")
    before = _rss_bytes()
    opened = DenseIndex.open(index_dir)
    grown = _rss_bytes() - before
    assert grown < 50_000_000, f"opening grew the process by {grown / 1e6:.0f} MB"
    queries = _vectors(3, dim, seed=5)
    in_memory = faiss.read_index(str(index_dir / "index"))
    assert _rss_bytes() - before > 150_000_000  # the measure sees a full read
    np.testing.assert_array_equal(opened.search(queries, 10)[1], in_memory.search(queries, 10)[1])
