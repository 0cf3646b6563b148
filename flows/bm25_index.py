"""Flow: index the passage collection for BM25 (Pyserini/Lucene), once for the whole study.

psgs_w100.tsv -> Pyserini JsonCollection (contents = title + text) -> Lucene index with
positions, document vectors and raw documents. EntityQuestions (BM25 hard negatives for DPR
training) and the retrieval flow both use this index; a prebuilt Pyserini index
(``retrieval.bm25.prebuilt_index``) replaces it for real runs.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from flows._params import raw_input, resolve
from tasks.config import Params
from tasks.layout import Layout
from tasks.orchestration import path_fingerprint
from tasks.reporting.tables import publish_table_artifact
from tasks.retrieval.bm25 import build_bm25_index_task, export_collection_task


@flow(name="bm25-index", log_prints=True)
def bm25_index(params: Params | None = None, profile: str | None = None,
               params_file: str | None = None) -> str:
    """Build (or reuse from cache) the Lucene index; return its path or prebuilt name."""
    params = resolve(params, profile, params_file)
    bm25, layout = params.retrieval.bm25, Layout(params)
    if bm25.prebuilt_index:
        print(f"using Pyserini prebuilt index {bm25.prebuilt_index!r}")
        return bm25.prebuilt_index
    collection = export_collection_task(raw_input(params, "passages"), layout.collection_dir)
    index: Path = build_bm25_index_task(collection, layout.bm25_index, threads=bm25.threads,
                                        heap=bm25.java_heap)
    print(f"BM25 index: {index}")
    publish_table_artifact("bm25-index", ["index", "passages", "fingerprint"],
                           [[index.name, _documents(index), path_fingerprint(index)[:16]]],
                           "Lucene BM25 index of the passage collection (Pyserini)")
    return str(index)


def _documents(index: Path) -> object:
    """Documents recorded in the index manifest ('?' when it does not say)."""
    import json

    try:
        manifest = json.loads((index / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "?"
    return manifest.get("documents", manifest.get("passages", "?"))


if __name__ == "__main__":
    from flows.cli import main_for

    main_for("bm25-index")
