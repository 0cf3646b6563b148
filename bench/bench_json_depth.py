"""Benchmark: the nesting guard in front of ijson, on a DPR retrieval-results file.

``tasks.io._jsondepth.DepthGuard`` scans every byte ijson reads, so that a file nested too
deep is an error naming the record instead of ijson's memory growing with the square of the
depth. This measures what the scan costs. Writes a synthetic retrieval-results JSON
(``--questions`` questions x ``--ctxs`` passages of 100 words, with quotes, brackets and
backslashes in the text so every path of the scan runs), then times on the same file:

* ijson (the raw library): ``ijson.items(file, "item")``, the items built and dropped;
* ijson + guard: the same, reading through ``DepthGuard`` with qastress's chunk size;
* qastress: :func:`tasks.io._jsonstream.iter_json_array` (guard, error handling);
* loader: :func:`tasks.io.dpr_results.read_retrieval_results` (every record checked).

Each is timed ``--repeats`` times, interleaved, and the best time is kept. Prints seconds,
the ratios to bare ijson, and the machine. Example: ``python bench/bench_json_depth.py``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ijson  # noqa: E402

from tasks.io._jsondepth import DepthGuard  # noqa: E402
from tasks.io._jsonstream import READ_BYTES, iter_json_array  # noqa: E402
from tasks.io.dpr_results import read_retrieval_results  # noqa: E402

#: Passage words: mostly plain, with a quoted word in 1 of 25, a bracket in 1 of 100 and a
#: backslash in 1 of 500 (Wikipedia text has quotes often, brackets and backslashes rarely).
_WORDS = {"the": 200, "river": 100, "(born": 60, "Zürich": 60, "1879)": 60, "\"Ulm\"": 20,
          "[1]": 5, "C:\\path": 1}


def write_results(path: Path, questions: int, ctxs: int, seed: int) -> None:
    """A retrieval-results file shaped like DPR's ``dense_retriever.py`` output."""
    rng = random.Random(seed)
    records = [{"question": f"Where was person {q} born?", "answers": [f"City {q}"],
                "ctxs": [{"id": str(rng.randrange(21_000_000)), "title": f"Title {c}",
                          "text": " ".join(rng.choices(list(_WORDS), list(_WORDS.values()), k=100)),
                          "score": str(rng.uniform(40, 90)), "has_answer": c == 0}
                         for c in range(ctxs)]}
               for q in range(questions)]
    path.write_text(json.dumps(records, ensure_ascii=False, indent=4), encoding="utf-8")


def count_items(path: Path, guarded: bool) -> int:
    """Items of the file's array, through bare ijson or the guard."""
    with open(path, "rb") as stream:
        source = DepthGuard(stream) if guarded else stream
        return sum(1 for _ in ijson.items(source, "item", use_float=True,
                                          buf_size=READ_BYTES))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000, help="records in the file")
    parser.add_argument("--ctxs", type=int, default=100, help="passages per record")
    parser.add_argument("--repeats", type=int, default=3, help="timings per reader (best kept)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic text")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "retrieval-results.json"
        write_results(path, args.questions, args.ctxs, args.seed)
        size = path.stat().st_size / 1e6
        timings: dict[str, float] = {}
        for _ in range(args.repeats):   # interleaved: a shared machine slows all alike
            for name, fn in (("ijson", lambda: count_items(path, False)),
                             ("ijson + guard", lambda: count_items(path, True)),
                             ("qastress", lambda: sum(1 for _ in iter_json_array(path))),
                             ("loader", lambda: len(read_retrieval_results(path)))):
                start = time.perf_counter()
                assert fn() == args.questions
                timings[name] = min(timings.get(name, float("inf")), time.perf_counter() - start)
    print(f"{args.questions} questions x {args.ctxs} passages ({size:.1f} MB), best of "
          f"{args.repeats}; {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    for name, seconds in timings.items():
        print(f"  {name:>13}: {seconds:7.3f} s  ({seconds / timings['ijson']:.2f}x ijson, "
              f"{size / seconds:6.0f} MB/s)")
    guard = timings["ijson + guard"] - timings["ijson"]
    print(f"  the guard's share of the loader: {guard / timings['loader']:.1%}")


if __name__ == "__main__":
    main()
