"""Benchmark: reading every shard of a passage TSV, as dense encoding does, vs one bare pass.

Writes a synthetic ``psgs_w100.tsv`` of ``--passages`` 100-word passages (DPR-style integer
ids, quoted text), plans shards of ``--shard-size`` and reads each shard's passages on the
same file, three ways:

* csv (the raw library): one ``csv.reader`` pass over the whole file building nothing but the
  rows -- the floor for reading every passage once;
* qastress: :func:`tasks.retrieval.dense_shards.read_passage_range` for every shard in a fresh
  process state (one checked pass that marks the file, then each shard from its mark);
* from the start: each shard as the islice of a full checked read from the file's first
  record, which is how shards were read before Session 44.

The shards' passages must be the same both ways (asserted). Each way is timed ``--repeats``
times, interleaved, best kept. Prints seconds, the ratios and the machine. Example:
``python bench/bench_passage_shards.py --passages 500000 --shard-size 50000``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tasks.io.passages import Passage, iter_passages, write_passages  # noqa: E402
from tasks.retrieval import dense_shards  # noqa: E402


def synthetic_passages(path: Path, n: int, seed: int) -> None:
    """``n`` passages of 100 words of a 5,000-word vocabulary, some with quotes and tabs."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(5000)]
    write_passages(path, (Passage(str(i), " ".join(rng.choices(vocab, k=100))
                                  + (' "quoted"\tx' if i % 10 == 0 else ""), f"Title {i}")
                          for i in range(1, n + 1)))


def bare_csv(path: Path) -> int:
    csv.field_size_limit(2**31 - 1)
    with open(path, encoding="utf-8", newline="") as stream:
        return sum(1 for _ in csv.reader(stream, delimiter="\t", quotechar='"'))


def ours(path: Path, plan: list[tuple[int, int]]) -> list[list[Passage]]:
    dense_shards._MARKS.clear()  # as a fresh stage process: the file is marked once
    return [dense_shards.read_passage_range(path, start, end) for start, end in plan]


def from_the_start(path: Path, plan: list[tuple[int, int]]) -> list[list[Passage]]:
    return [list(itertools.islice(iter_passages(path), start, end)) for start, end in plan]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=200_000,
                        help="passages in the synthetic file (default 200,000)")
    parser.add_argument("--shard-size", type=int, default=20_000,
                        help="passages per shard (default 20,000: 10 shards)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per way (best kept)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic file")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "psgs_w100.tsv"
        synthetic_passages(path, args.passages, args.seed)
        plan = dense_shards.plan_shards(path, args.shard_size)
        assert ours(path, plan) == from_the_start(path, plan)
        ways = {"csv (one pass)": lambda: bare_csv(path), "qastress": lambda: ours(path, plan),
                "from the start": lambda: from_the_start(path, plan)}
        best = {name: float("inf") for name in ways}
        for _ in range(args.repeats):
            for name, run in ways.items():
                start = time.perf_counter()
                run()
                best[name] = min(best[name], time.perf_counter() - start)
    print(f"{args.passages:,} passages in {len(plan)} shards of {args.shard_size:,} "
          f"({platform.processor() or platform.machine()}, best of {args.repeats})")
    for name, seconds in best.items():
        print(f"  {name:16s} {seconds:8.2f} s")
    floor = best["csv (one pass)"]
    print(f"  qastress / csv {best['qastress'] / floor:.2f}; from the start / csv "
          f"{best['from the start'] / floor:.2f}; from the start / qastress "
          f"{best['from the start'] / best['qastress']:.2f}")


if __name__ == "__main__":
    main()
