"""Benchmark: our BM25 stage vs bare Pyserini ``LuceneSearcher.batch_search`` on the same work.

Builds (or reuses) a Lucene index over a passages TSV, then times, in the same process and on
the same questions, (a) ``tasks.retrieval.bm25.bm25_search`` (our stage: batching, progress,
result conversion) and (b) a bare ``LuceneSearcher.batch_search``; checks both return the same
hits and prints queries/s of each and their ratio (target >= 0.95), plus the machine.

Without --passages it generates the demo world of ``--profile`` (default: demo) into a temp dir.
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
    parser.add_argument("--passages", type=Path, help="psgs_w100.tsv (default: demo world)")
    parser.add_argument("--profile", default="demo", help="demo-world profile when generating")
    parser.add_argument("--queries", type=int, default=5000, help="number of queries")
    parser.add_argument("--k", type=int, default=100, help="hits per query")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="threads for indexing and for both searches (default: this "
                        "machine's CPU count, %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="timed repetitions (best kept)")
    args = parser.parse_args()

    from tasks.io.passages import iter_passages
    from tasks.retrieval.bm25 import bm25_search, build_bm25_index, export_collection, open_searcher

    work = Path(tempfile.mkdtemp(prefix="qastress-bench-bm25-"))
    passages = args.passages
    if passages is None:
        from tasks.demo import generate_demo_world
        from tasks.params_loading import load_params

        params = load_params(profile=args.profile)
        generate_demo_world(params.demo_world, work / "raw")
        passages = work / "raw" / params.sources.passages
    index = build_bm25_index(export_collection(passages, work / "collection"), work / "index",
                             threads=args.threads)
    # Queries: passage titles and first words, cycled to the requested count.
    pool = [f"{p.title} {' '.join(p.text.split()[:6])}" for p in iter_passages(passages)]
    queries = [pool[i % len(pool)] for i in range(args.queries)]
    qids = [f"q{i}" for i in range(len(queries))]

    searcher = open_searcher(index)
    searcher.batch_search(queries[:100], qids[:100], k=args.k, threads=args.threads)  # warm-up

    def ours() -> dict:
        return bm25_search(index, queries, qids, k=args.k, threads=args.threads, progress=False)

    def bare() -> dict:
        hits = searcher.batch_search(queries, qids, k=args.k, threads=args.threads)
        return {q: [(h.docid, h.score) for h in hits[q]] for q in qids}

    best = {}
    results = {}
    for name, fn in (("ours", ours), ("bare", bare)) * args.repeats:
        start = time.perf_counter()
        results[name] = fn()
        best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
    same = all([d for d, _ in results["ours"][q]] == [d for d, _ in results["bare"][q]]
               for q in qids)
    qps = {name: len(queries) / seconds for name, seconds in best.items()}
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, python "
          f"{platform.python_version()}")
    print(f"collection: {passages}; {len(queries)} queries, k={args.k}, "
          f"threads={args.threads}, best of {args.repeats}")
    print(f"bare LuceneSearcher.batch_search: {qps['bare']:.0f} queries/s")
    print(f"qastress BM25 stage:              {qps['ours']:.0f} queries/s")
    print(f"ratio ours/bare: {qps['ours'] / qps['bare']:.3f} (target >= 0.95); "
          f"identical rankings: {same}")


if __name__ == "__main__":
    main()
