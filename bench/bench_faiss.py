"""Benchmark: our dense search stage vs bare FAISS search on the same index and queries.

Writes random unit vectors as passage shards, builds the index with
``tasks.retrieval.faiss_index.build_faiss_index``, then times, in the same process,
interleaved, on the same queries:

(a) ``dense_search(index_dir, queries, k)``: our stage (opens the FAISS ``index``, memory-mapped
    where FAISS can, reads the ids and the manifest, checks the query encoder, searches,
    returns ``{qid: [(docid, score), ...]}``);
(b) bare FAISS: ``faiss.read_index`` + ``index.search`` (arrays of row numbers and scores);
(c) bare FAISS, mapped: the same with ``IO_FLAG_MMAP_IFC | IO_FLAG_READ_ONLY``, as ours opens.

Checks that they rank the same passages and prints queries/s of each and the ratios ours/bare
(target >= 0.95), plus the search-only figures on an already opened index, and the machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=50_000, help="passages in the index")
    parser.add_argument("--dim", type=int, default=384, help="vector dimension")
    parser.add_argument("--shard-size", type=int, default=10_000,
                        help="passages per vector shard the index is built from (default: "
                        "%(default)s)")
    parser.add_argument("--queries", type=int, default=2_000,
                        help="number of random query vectors (default: %(default)s)")
    parser.add_argument("--k", type=int, default=100, help="hits per query")
    parser.add_argument("--kind", default="flat", choices=("flat", "hnsw", "ivfpq"),
                        help="FAISS index type to build and search (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed repetitions (best kept)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random passage and query vectors (default: %(default)s)")
    args = parser.parse_args()

    import faiss
    import numpy as np

    from tasks.retrieval.dense_shards import shard_path, write_shard
    from tasks.retrieval.encoders import Embeddings
    from tasks.retrieval.faiss_index import (
        INDEX_FILE,
        DenseIndex,
        build_faiss_index,
        dense_search,
    )

    rng = np.random.default_rng(args.seed)

    def unit(n: int) -> np.ndarray:
        x = rng.standard_normal((n, args.dim)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    work = Path(tempfile.mkdtemp(prefix="qastress-bench-faiss-"))
    model = "bench-random-unit-vectors"
    shards = []
    for number, start in enumerate(range(0, args.rows, args.shard_size)):
        end = min(args.rows, start + args.shard_size)
        shards.append(write_shard(shard_path(work / "shards", number), unit(end - start),
                                  [str(i + 1) for i in range(start, end)],
                                  {"start": start, "end": end, "model": model,
                                   "model_fingerprint": model, "passages_fingerprint": "none"}))
    built = time.perf_counter()
    index_dir = build_faiss_index(shards, work / "index", kind=args.kind)
    built = time.perf_counter() - built
    queries = Embeddings(unit(args.queries), [f"q{i}" for i in range(args.queries)], model,
                         model)

    def ours() -> dict:
        return dense_search(index_dir, queries, args.k)

    def bare() -> tuple:
        index = faiss.read_index(str(index_dir / INDEX_FILE))
        return index.search(queries.vectors, args.k)

    def bare_mapped() -> tuple:
        index = faiss.read_index(str(index_dir / INDEX_FILE),
                                 faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
        if args.kind == "hnsw":
            index.hnsw.efSearch = opened.index.hnsw.efSearch
        elif args.kind == "ivfpq":
            index.nprobe = opened.index.nprobe
        return index.search(queries.vectors, args.k)

    opened = DenseIndex.open(index_dir)
    bare_index = faiss.read_index(str(index_dir / INDEX_FILE))
    if args.kind == "hnsw":  # the same search parameters as ours
        bare_index.hnsw.efSearch = opened.index.hnsw.efSearch
    elif args.kind == "ivfpq":
        bare_index.nprobe = opened.index.nprobe

    def ours_loaded() -> dict:
        return opened.search_run(queries, args.k)

    def bare_loaded() -> tuple:
        return bare_index.search(queries.vectors, args.k)

    runners = {"ours": ours, "bare": bare, "bare, mapped": bare_mapped,
               "ours (opened index)": ours_loaded,
               "bare (opened index)": bare_loaded}
    bare_loaded()  # warm-up
    best: dict[str, float] = {}
    results: dict[str, object] = {}
    for _ in range(args.repeats):
        for name, fn in runners.items():
            start = time.perf_counter()
            results[name] = fn()
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
    _, rows = results["bare"]
    same_mapped = bool((results["bare, mapped"][1] == rows).all())
    same = all([d for d, _ in results["ours"][qid]] == [str(r + 1) for r in rows[i] if r >= 0]
               for i, qid in enumerate(queries.ids))
    qps = {name: args.queries / seconds for name, seconds in best.items()}
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, faiss {faiss.__version__} "
          f"with {faiss.omp_get_max_threads()} OpenMP threads, device cpu")
    print(f"index: {args.kind}, {args.rows} x {args.dim} (built in {built:.1f} s); "
          f"{args.queries} queries, k={args.k}, best of {args.repeats}")
    for name in runners:
        print(f"{name:>22}: {qps[name]:9.1f} queries/s  ({best[name]:.3f} s)")
    print(f"ratio ours/bare (open index + search): {qps['ours'] / qps['bare']:.3f} "
          f"(target >= 0.95); identical rankings: {same and same_mapped}")
    print(f"ratio ours/bare, mapped (open index + search, both mapped): "
          f"{qps['ours'] / qps['bare, mapped']:.3f}")
    print(f"ratio ours/bare (opened index, search only): "
          f"{qps['ours (opened index)'] / qps['bare (opened index)']:.3f}")


if __name__ == "__main__":
    main()
