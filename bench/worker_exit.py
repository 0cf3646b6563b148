"""How long a process takes to exit while it holds many objects, with and without ``gc.freeze``.

The study's stage workers are Dask worker processes, and Dask kills a worker that has not
exited 4 s after it was asked to close. After a demo run it killed one or two of them every
time; py-spy showed their main thread in ``gc_collect_main`` during the interpreter's
finalisation: the last garbage collection at exit walks every object the process still holds.
:func:`tasks.distribution.prepare_worker_exit` therefore freezes the heap before the close.

This measures that on a stand-in heap: a fresh process builds ``--objects`` small records
that reference each other in cycles (as parsed JSON, pydantic models and Prefect's state
objects do), held by a module global, then exits, with or without
:func:`~tasks.distribution.prepare_worker_exit` first. Prints one JSON line per case: seconds
from the start of the exit to the process's end (best of ``--repeats``), and the ratio frozen /
not frozen. Example::

    python bench/worker_exit.py --objects 3000000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time
sys.path.insert(0, {root!r})
from tasks.distribution import prepare_worker_exit

class Record:
    def __init__(self, number, previous):
        self.number, self.text, self.previous = number, str(number), previous
        self.hits = [(number, 1.0)]

def build(n):
    records, previous = [], None
    for number in range(n):
        previous = Record(number, previous)
        if number % 100 == 99:      # close a cycle every 100 records
            previous.hits.append(previous)
            previous = None
        records.append(previous)
    return records

HELD = build({objects})
if {freeze}:
    prepare_worker_exit()
print(time.monotonic(), flush=True)
"""


def exit_seconds(objects: int, freeze: bool) -> float:
    """Seconds from the child's last statement to its exit (CLOCK_MONOTONIC on both sides)."""
    code = CHILD.format(root=str(ROOT), objects=objects, freeze=freeze)
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True)
    return time.monotonic() - float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=3_000_000,
                        help="records the process holds when it exits (default 3,000,000)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per case; best is kept")
    args = parser.parse_args()
    best = {}
    for freeze in (False, True):
        best[freeze] = min(exit_seconds(args.objects, freeze) for _ in range(args.repeats))
        print(json.dumps({"objects": args.objects, "frozen": freeze,
                          "exit_s": round(best[freeze], 3)}))
    print(json.dumps({"ratio_frozen_over_not": round(best[True] / best[False], 3)}))


if __name__ == "__main__":
    main()
