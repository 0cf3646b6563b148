"""Dense indexes built elsewhere (Pyserini's layout, no manifest): adopted, searched, refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tasks.io.errors import DataFormatError, MissingInputError
from tasks.retrieval.dense_shards import ModelMismatchError, shard_path, write_shard
from tasks.retrieval.encoder_spec import EncoderSpec
from tasks.retrieval.encoders import Embeddings
from tasks.retrieval.faiss_index import (
    IDS_FILE,
    INDEX_FILE,
    MANIFEST_FILE,
    build_faiss_index,
    dense_search,
    read_index_manifest,
)
from tasks.retrieval.prebuilt_dense import (
    adopt_dense_index,
    resolve_prebuilt_dense_index,
    source_stamp,
)

DIM, MODEL = 16, "a" * 64
SPEC = EncoderSpec(name="dpr-q", kind="dpr", question_model="q", ctx_model="c",
                   pooling="pooler", max_length=32, normalize=False, fingerprint=MODEL)


def _vectors(rows: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, DIM)).astype(np.float32)


def _our_index(root: Path, rows: int = 60, model: str = MODEL) -> Path:
    """One of our own flat indexes over random vectors with ids p0, p1, ..."""
    path = shard_path(root / "shards", 0)
    write_shard(path, _vectors(rows, 0), [f"p{i}" for i in range(rows)],
                {"start": 0, "end": rows, "model": "m", "model_fingerprint": model,
                 "passages_fingerprint": "tsv"})
    return build_faiss_index([path], root / "ours")


def _pyserini_layout(index_dir: Path, root: Path) -> Path:
    """What Pyserini's prebuilt dense indexes hold: ``index`` and ``docid``, no manifest."""
    root.mkdir(parents=True)
    for name in (INDEX_FILE, IDS_FILE):
        shutil.copy(index_dir / name, root / name)
    return root


def _queries(model: str = MODEL) -> Embeddings:
    return Embeddings(_vectors(5, 9), [f"q{i}" for i in range(5)], "dpr-q", model)


def _adopt(source: Path, index_dir: Path, spec: EncoderSpec = SPEC,
           dim: int | None = DIM) -> Path:
    return adopt_dense_index(str(source), index_dir, spec, source_stamp(source), dim=dim)


def test_an_index_without_manifest_is_searched_as_our_own(tmp_path):
    ours = _our_index(tmp_path)
    prebuilt = _pyserini_layout(ours, tmp_path / "prebuilt")
    adopted = _adopt(prebuilt, tmp_path / "adopted")
    assert sorted(p.name for p in adopted.iterdir()) == [MANIFEST_FILE]  # nothing copied
    manifest = read_index_manifest(adopted)
    assert (manifest["source"], manifest["rows"], manifest["dim"], manifest["model_declared"]) \
        == (str(prebuilt.resolve()), 60, DIM, True)
    assert manifest["model_fingerprint"] == MODEL and manifest["faiss_class"] == "IndexFlatIP"
    assert dense_search(adopted, _queries(), k=7) == dense_search(ours, _queries(), k=7)
    with pytest.raises(ModelMismatchError, match="dpr-q"):
        dense_search(adopted, _queries(model="b" * 64), k=7)  # the declared encoder only
    # the fingerprint follows the files: another docid file, another fingerprint
    (prebuilt / IDS_FILE).write_text("".join(f"x{i}\n" for i in range(60)), encoding="utf-8")
    again = read_index_manifest(_adopt(prebuilt, tmp_path / "adopted"))
    assert again["fingerprint"] != manifest["fingerprint"]
    shutil.rmtree(prebuilt)
    with pytest.raises(FileNotFoundError, match="stands for the prebuilt index"):
        dense_search(adopted, _queries(), k=7)


def test_an_hnsw_index_is_adopted_too(tmp_path):
    path = shard_path(tmp_path / "shards", 0)
    write_shard(path, _vectors(80, 1), [f"p{i}" for i in range(80)],
                {"start": 0, "end": 80, "model": "m", "model_fingerprint": MODEL,
                 "passages_fingerprint": "tsv"})
    ours = build_faiss_index([path], tmp_path / "ours", kind="hnsw")
    adopted = _adopt(_pyserini_layout(ours, tmp_path / "prebuilt"), tmp_path / "adopted")
    assert read_index_manifest(adopted)["faiss_class"] == "IndexHNSWFlat"
    assert len(dense_search(adopted, _queries(), k=5)["q0"]) == 5


@pytest.mark.parametrize("damage, error, match", [
    ("no docid", DataFormatError, r"docid, file: expected a dense index in Pyserini's layout"),
    ("short docid", DataFormatError, r"one passage id per index row \(60\); got 59 ids"),
    ("empty id", DataFormatError, r"docid, line 3: expected one passage id per line"),
    ("repeated id", DataFormatError, r"line 5: expected unique passage ids; got 'p1' again "
                                     r"\(first on line 2\)"),
    ("latin-1 id", DataFormatError, r"docid, line 2: expected UTF-8 text"),
    ("not faiss", DataFormatError, r"index, start of file: expected a FAISS index"),
    ("l2 index", DataFormatError, r"expected an inner-product index"),
    ("our manifest, other model", ModelMismatchError, r"cannot search it"),
    ("other dimension", ModelMismatchError, r"index holds 16-dim vectors, but the question "
                                            r"encoder 'dpr-q' .* gives 384-dim ones"),
])
def test_a_bad_prebuilt_index_is_refused(tmp_path, damage, error, match):
    import faiss

    ours = _our_index(tmp_path, model="b" * 64 if "other model" in damage else MODEL)
    prebuilt = _pyserini_layout(ours, tmp_path / "prebuilt")
    ids = [f"p{i}" for i in range(60)]
    if damage == "no docid":
        (prebuilt / IDS_FILE).unlink()
    elif damage in ("short docid", "empty id", "repeated id"):
        ids = ids[:59] if damage == "short docid" else ids
        if damage == "empty id":
            ids[2] = ""
        if damage == "repeated id":
            ids[4] = "p1"
        (prebuilt / IDS_FILE).write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
    elif damage == "latin-1 id":
        (prebuilt / IDS_FILE).write_bytes(b"p0\np\xe91\n" + "".join(
            f"{i}\n" for i in ids[2:]).encode())
    elif damage == "other dimension":
        pass
    elif damage == "not faiss":
        (prebuilt / INDEX_FILE).write_bytes(b"not an index at all" * 10)
    elif damage == "l2 index":
        index = faiss.IndexFlatL2(DIM)
        index.add(_vectors(60, 0))
        faiss.write_index(index, str(prebuilt / INDEX_FILE))
    else:
        shutil.copy(ours / MANIFEST_FILE, prebuilt / MANIFEST_FILE)
    with pytest.raises(error, match=match):
        _adopt(prebuilt, tmp_path / "adopted", dim=384 if damage == "other dimension" else DIM)
    assert not (tmp_path / "adopted").exists()


def test_a_directory_resolves_as_it_is_and_a_missing_one_is_named(tmp_path):
    assert resolve_prebuilt_dense_index(str(tmp_path)) == (tmp_path.resolve(), None)
    with pytest.raises(MissingInputError, match=r"no-such-dir: no such directory"):
        resolve_prebuilt_dense_index(str(tmp_path / "no-such-dir"))


def test_a_pyserini_name_resolves_through_pyserini_s_cache(tmp_path, monkeypatch):
    """Pyserini finds an index it unpacked before (its cache directory, named after the
    tarball and its md5) without the network; an unknown name lists the known ones."""
    from tasks.retrieval.jvm import in_jvm_process

    name = "wikipedia-dpr-100w.dpr-single-nq"
    info = in_jvm_process(_faiss_index_info, name)
    unpacked = (tmp_path / "indexes" /
                f"{info['filename'].removesuffix('.tar.gz')}.{info['md5']}")
    _pyserini_layout(_our_index(tmp_path), unpacked)
    monkeypatch.setenv("PYSERINI_CACHE", str(tmp_path))
    assert resolve_prebuilt_dense_index(name) == (unpacked, name)
    with pytest.raises(MissingInputError, match=r"known names like it: .*"
                                                r"wikipedia-dpr-100w\.dpr-multi"):
        resolve_prebuilt_dense_index("wikipedia-dpr-100w.no-such-encoder")


def _faiss_index_info(name: str) -> dict:
    from tasks.retrieval.jvm import start_jvm

    start_jvm()
    from pyserini.prebuilt_index_info import FAISS_INDEX_INFO

    return dict(FAISS_INDEX_INFO[name])


def test_the_retrieval_core_searches_a_prebuilt_index_instead_of_encoding(tmp_path,
                                                                         prefect_api):
    """Two retrievers with one tiny encoder: one encodes the passages, the other is given
    its index in Pyserini's layout; the same TREC run, and nothing encoded for the second."""
    from dense_testkit import tiny_bert, write_tiny_world
    from prefect import flow

    from flows._retrieve import Collection, prepare_indexes, run_all
    from tasks.config import DenseConfig, OrchestrationConfig
    from tasks.orchestration import run_settings
    from tasks.retrieval.query_sets import eq_split, write_query_set
    from tasks.retrieval.retrievers import DenseRetriever

    passages, dataset = write_tiny_world(tmp_path / "world")
    cfg = DenseConfig(model=str(tiny_bert(tmp_path / "tiny")), max_length=64, shard_size=10,
                      batch_size=8, top_k=5, device="cpu")
    queries = write_query_set(eq_split(dataset), tmp_path / "test.json")
    dirs = lambda name: (tmp_path / name / "shards", tmp_path / name / "index")  # noqa: E731
    collection = Collection("psgs_w100", passages, None, dirs, takes_prebuilt=True)
    orchestration = OrchestrationConfig()

    @flow
    def retrieve(retrievers: list) -> dict:
        indexes = prepare_indexes(retrievers, collection, orchestration)
        return run_all(retrievers, queries, lambda name: tmp_path / f"{name}.trec",
                       indexes=indexes, orchestration=orchestration)

    with run_settings(tmp_path / "state"):
        encoded = retrieve([DenseRetriever(cfg, name="encoded")])["encoded"]
        prebuilt = _pyserini_layout(tmp_path / "encoded" / "index", tmp_path / "prebuilt")
        given = DenseRetriever(cfg.model_copy(update={"prebuilt_index": str(prebuilt)}),
                               name="given")
        adopted = retrieve([given])["given"]
        # a question encoder of another dimension is refused before any question is encoded
        wrong = DenseRetriever(DenseConfig(prebuilt_index=str(prebuilt), max_length=64,
                                           device="cpu"), name="wrong")
        with pytest.raises(ModelMismatchError, match=r"holds 32-dim vectors, but the question "
                                                     r"encoder 'wrong' .* gives 384-dim ones"):
            retrieve([wrong])
    assert adopted.read_text().replace("dense_given", "dense_encoded") == encoded.read_text()
    assert not (tmp_path / "given" / "shards").exists()
    assert read_index_manifest(tmp_path / "given" / "index")["source"] == str(prebuilt)
    assert json.loads((tmp_path / "given" / "index" / MANIFEST_FILE).read_text())["rows"] == 24
