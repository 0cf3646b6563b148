"""Benchmark: reading a TREC run, qastress's ``read_trec_run`` vs bare ``pyarrow.csv``.

Writes a synthetic run with ``write_trec_run`` (``--queries`` queries of ``--depth`` hits,
EntityQuestions-style qids, DPR-style docids, ``repr`` scores), then times on the same file:

* arrow (the raw library): ``pyarrow.csv.read_csv`` of the 6 columns with their types, nothing
  else -- the floor for any reader built on it;
* qastress: :func:`tasks.io.trec.read_trec_run`, which parses with Arrow, checks the run
  (Q0, NaN, white space, duplicates) and builds ``{qid: [(docid, score), ...]}`` in rank order;
* line by line: the reader's fallback for files Arrow does not take (every check per line).

The two readers' results must be identical (asserted). Each is timed ``--repeats`` times,
interleaved, and the best time is kept. Prints seconds, the ratios and the machine. Example:
``python bench/bench_trec.py --queries 7200 --depth 100``.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tasks.io.trec import _read_line_by_line, read_trec_run, write_trec_run  # noqa: E402


def synthetic_run(queries: int, depth: int, seed: int) -> dict[str, list[tuple[str, float]]]:
    """``queries`` EntityQuestions-style qids, each with ``depth`` distinct docids."""
    rng = random.Random(seed)
    run = {}
    for q in range(queries):
        docs = rng.sample(range(1, 21_000_000), depth)
        scores = sorted((rng.uniform(0, 40) for _ in docs), reverse=True)
        run[f"P{q % 24}:{q:06d}"] = [(str(d), s) for d, s in zip(docs, scores, strict=True)]
    return run


def arrow_only(path: Path) -> int:
    import pyarrow as pa
    from pyarrow import csv

    names = ["qid", "q0", "docid", "rank", "score", "tag"]
    types = dict(zip(names, [pa.string(), pa.string(), pa.string(), pa.int64(), pa.float64(),
                             pa.string()], strict=True))
    table = csv.read_csv(path, read_options=csv.ReadOptions(column_names=names,
                                                            use_threads=False),
                         parse_options=csv.ParseOptions(delimiter=" ", quote_char=False),
                         convert_options=csv.ConvertOptions(column_types=types))
    return table.num_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=7200, help="queries in the run")
    parser.add_argument("--depth", type=int, default=100, help="hits per query")
    parser.add_argument("--repeats", type=int, default=3, help="timings per reader (best kept)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the synthetic run's docids and scores (default: %(default)s)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = write_trec_run(Path(tmp) / "run.trec",
                              synthetic_run(args.queries, args.depth, args.seed), tag="bench")
        size = path.stat().st_size / 1e6
        timings: dict[str, float] = {}
        results: dict[str, object] = {}
        for _ in range(args.repeats):   # interleaved: a shared machine slows all alike
            for name, fn in (("arrow", lambda: arrow_only(path)),
                             ("qastress", lambda: read_trec_run(path)),
                             ("line by line", lambda: _read_line_by_line(path, "raise", None))):
                start = time.perf_counter()
                results[name] = fn()
                timings[name] = min(timings.get(name, float("inf")), time.perf_counter() - start)
        assert results["qastress"] == results["line by line"], "the readers disagree"
    print(f"{args.queries} queries x {args.depth} hits ({size:.1f} MB), best of {args.repeats}; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    for name, seconds in timings.items():
        print(f"  {name:>12}: {seconds:7.3f} s  ({seconds / timings['arrow']:.2f}x arrow)")
    print(f"  qastress / line by line: {timings['qastress'] / timings['line by line']:.3f}")


if __name__ == "__main__":
    main()
