"""The retrieval core of the flows: index a collection and run a query set, for any retriever.

Written once for every query set (the test split, the frequency buckets, the paraphrased sets)
and every registered retriever (:mod:`tasks.retrieval.retrievers`):

- :func:`prepare_indexes`: the BM25 index of the collection (given: built by the
  ``bm25-index`` flow or a small one here) and, per dense retriever, its passages encoded in
  shards on the task runner (:mod:`flows.encode_passages`, cached and resumed per shard) ->
  its own FAISS index; or, for ``psgs_w100`` and a retriever with ``prebuilt_index``, an
  index built elsewhere (:mod:`tasks.retrieval.prebuilt_dense`);
- :func:`run`: one retriever on one query set -> TREC run. BM25 searches batches of questions
  on the task runner (:mod:`flows.bm25_search`); dense encodes the questions and searches its
  index; a hybrid fuses the runs of its two inputs (reciprocal rank fusion);
- :func:`run_all`: every retriever in dependency order;
- :func:`collect_passages`: the passages of all runs, read from the collection once.

Scoring a run is :func:`tasks.retrieval.core.evaluate`, called by the evaluation tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from flows.bm25_search import search_bm25_on
from flows.encode_passages import encode_passages_on
from tasks.config import OrchestrationConfig
from tasks.retrieval.core import collect_passages_task
from tasks.retrieval.dense_encoding import (
    build_dense_index_task,
    index_options,
    retrieve_dense_task,
)
from tasks.retrieval.fusion import fuse_runs_task
from tasks.retrieval.prebuilt_dense import (
    adopt_dense_index_task,
    question_dim_task,
    resolve_prebuilt_dense_index,
    source_stamp,
)
from tasks.retrieval.query_sets import QuerySet, write_query_set
from tasks.retrieval.retrievers import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    Retriever,
)


@dataclass(frozen=True)
class Collection:
    """A passage collection and where its indexes are.

    ``dense_paths(model_name) -> (shards_dir, index_dir)``; ``index_kind`` overrides the dense
    index kind of the retrievers (``flat`` for a small collection); ``takes_prebuilt``: the
    collection is the one prebuilt dense indexes cover (``psgs_w100``), so a retriever's
    ``prebuilt_index`` replaces encoding it.
    """

    name: str
    passages: Path
    bm25_index: str | Path | None
    dense_paths: Callable[[str], tuple[Path, Path]]
    index_kind: str | None = None
    takes_prebuilt: bool = False
    #: Where the passages' token ids are shared by their encodings (None: not kept).
    token_cache: Path | None = None


@dataclass(frozen=True)
class DenseIndexRef:
    """A built dense index and the encoder whose vectors it holds."""

    path: Path
    spec: object


def save_query_set(query_set: QuerySet, path: Path) -> Path:
    """The query set as the file the retrieval and evaluation tasks read (atomic, stable)."""
    print(f"query set {query_set.name!r}: {len(query_set)} questions in "
          f"{len(query_set.groups)} groups -> {path}")
    return write_query_set(query_set, path)


def prepare_indexes(retrievers: Iterable[Retriever], collection: Collection,
                    orchestration: OrchestrationConfig) -> dict[str, object]:
    """``{retriever: index}``: the BM25 index, or each dense retriever's FAISS index over the
    collection (passages encoded in shards on the task runner). Hybrids need none."""
    indexes: dict[str, object] = {}
    for retriever in retrievers:
        if isinstance(retriever, BM25Retriever):
            if collection.bm25_index is None:
                raise ValueError(f"{collection.name}: no BM25 index given for {retriever.name}")
            indexes[retriever.name] = collection.bm25_index
        elif isinstance(retriever, DenseRetriever) and retriever.config.prebuilt_index \
                and collection.takes_prebuilt:
            indexes[retriever.name] = _adopt_prebuilt(retriever, collection)
        elif isinstance(retriever, DenseRetriever):
            cfg, spec = retriever.config, retriever.encoder()
            shards_dir, index_dir = collection.dense_paths(retriever.model_name)
            if cfg.prebuilt_index:
                print(f"{retriever.name}: its prebuilt_index serves the retrieval flow's "
                      f"psgs_w100 only; encoding {collection.name} here")
            shards = encode_passages_on(orchestration, collection.passages, shards_dir, spec,
                                        cfg, token_cache=collection.token_cache)
            options = index_options(cfg)
            if collection.index_kind is not None:
                options["kind"] = collection.index_kind
            index = build_dense_index_task(shards, index_dir, spec, **options)
            print(f"{retriever.name}: dense index of {collection.name} ({options['kind']}, "
                  f"{spec.describe()}): {index}")
            indexes[retriever.name] = DenseIndexRef(Path(index), spec)
    return indexes


def _adopt_prebuilt(retriever: DenseRetriever, collection: Collection) -> DenseIndexRef:
    """The retriever's ``prebuilt_index``, checked and recorded as its index of the
    collection (nothing encoded)."""
    cfg, spec = retriever.config, retriever.encoder()
    source, name = resolve_prebuilt_dense_index(cfg.prebuilt_index)
    _, index_dir = collection.dense_paths(retriever.model_name)
    index = adopt_dense_index_task(str(source), index_dir, spec, source_stamp(source),
                                   prebuilt=name, dim=question_dim_task(spec, cfg.device))
    print(f"{retriever.name}: prebuilt dense index {source} over {collection.name}, searched "
          f"with {spec.describe()}: {index}")
    return DenseIndexRef(Path(index), spec)


def run(retriever: Retriever, queries: Path, run_path: Path, *,
        indexes: Mapping[str, object], runs: Mapping[str, Path],
        orchestration: OrchestrationConfig) -> Path:
    """One retriever on one query set (a file of :func:`save_query_set`) -> TREC run.

    ``runs``: the runs of this query set so far (a hybrid's inputs)."""
    if isinstance(retriever, BM25Retriever):
        return search_bm25_on(orchestration, indexes[retriever.name], queries, run_path,
                              retriever.config)
    if isinstance(retriever, DenseRetriever):
        cfg, ref = retriever.config, indexes[retriever.name]
        return retrieve_dense_task(ref.path, queries, run_path, ref.spec, k=cfg.top_k,
                                   batch_size=cfg.batch_size, device=cfg.device, bf16=cfg.bf16,
                                   cpu_threads=cfg.cpu_threads)
    if isinstance(retriever, HybridRetriever):
        return fuse_runs_task([runs[name] for name in retriever.inputs], run_path,
                              k=retriever.k, depth=retriever.depth)
    raise TypeError(f"not a retriever: {retriever!r}")


def run_all(retrievers: Iterable[Retriever], queries: Path, run_path: Callable[[str], Path],
            *, indexes: Mapping[str, object],
            orchestration: OrchestrationConfig) -> dict[str, Path]:
    """``{retriever: TREC run}`` of every retriever (hybrids after their inputs) on the query
    set; ``run_path(name)`` says where each run goes."""
    runs: dict[str, Path] = {}
    for retriever in retrievers:
        runs[retriever.name] = run(retriever, queries, run_path(retriever.name),
                                   indexes=indexes, runs=runs, orchestration=orchestration)
    return runs


def collect_passages(runs: Iterable[Path], collection: Collection, table: Path) -> Path:
    """The passages of every run in one table, the collection read once."""
    return collect_passages_task(list(runs), collection.passages, table)
