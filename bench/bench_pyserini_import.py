"""Benchmark: importing Pyserini's ``LuceneSearcher`` in a fresh process, plainly and as the
study's BM25 does it (:func:`tasks.retrieval.pyserini_lucene.lucene_searcher_class`, without
the neural query encoders that ``pyserini.search.lucene`` otherwise imports with its package).

Each JVM worker process of a study run (one per pipeline process that searches BM25) pays this
once, beside a stage worker that trains. Every measurement is a fresh Python process that starts
the JVM (:func:`tasks.retrieval.jvm.start_jvm`, the same in both ways), imports the class and
reports its wall time, its CPU time (user + system) and whether torch came with it; the two ways
alternate, ``--repeats`` times each, and the medians and their ratio are printed.
Example: ``python bench/bench_pyserini_import.py --repeats 3``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

IMPORTS = {
    "plain": "from pyserini.search.lucene import LuceneSearcher",
    "ours": "from tasks.retrieval.pyserini_lucene import lucene_searcher_class; "
            "LuceneSearcher = lucene_searcher_class()",
}

PROBE = """
import json, resource, sys, time
from tasks.retrieval.jvm import start_jvm
start_jvm()
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
wall, before = time.perf_counter(), cpu()
{import_line}
print(json.dumps({{"wall_s": time.perf_counter() - wall, "cpu_s": cpu() - before,
                   "torch": "torch" in sys.modules}}))
"""


def measure(way: str) -> dict:
    """One fresh process importing the class ``way``'s way."""
    done = subprocess.run([sys.executable, "-c", PROBE.format(import_line=IMPORTS[way])],
                          cwd=ROOT, capture_output=True, text=True, check=True, timeout=600)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per way")
    args = parser.parse_args()
    results: dict[str, list[dict]] = {way: [] for way in IMPORTS}
    for _ in range(args.repeats):
        for way in IMPORTS:
            results[way].append(measure(way))
            print(f"{way:>6}: {results[way][-1]}")
    print(f"\n{platform.processor() or platform.machine()}, {args.repeats} processes per way "
          "(medians):")
    medians = {way: {key: statistics.median(r[key] for r in runs) for key in ("wall_s", "cpu_s")}
               for way, runs in results.items()}
    for way, median in medians.items():
        torch = {r["torch"] for r in results[way]}
        print(f"{way:>6}: wall {median['wall_s']:.2f} s, CPU {median['cpu_s']:.2f} s, "
              f"torch imported: {', '.join(map(str, sorted(torch)))}")
    for key in ("wall_s", "cpu_s"):
        print(f"ours / plain, {key[:-2]}: {medians['ours'][key] / medians['plain'][key]:.3f}")


if __name__ == "__main__":
    main()
