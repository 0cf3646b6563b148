"""Two torch trainings at once on one machine: OpenMP's wait policy decides whether that pays.

The study runs two stages side by side (``orchestration.concurrent_stages``), each in its own
process with the flow's torch thread count, so on 2 cores two 2-thread teams share the cores.
This measures, on a stand-in for the demo's reader training (the reader's start point, the
packaged MiniLM, as a question-answering model: ``--steps`` AdamW steps on ``--batch-size``
windows of ``--length`` random tokens, ``--threads`` torch threads, fixed seed), in fresh
processes:

* one training alone and two at once, with OpenMP's default spin-waiting (``ACTIVE``);
* the same with ``OMP_WAIT_POLICY=PASSIVE`` (what the study's stage workers get).

Prints one JSON line per case (seconds per process) and the ratio of two at once to the same
two one after the other (below 1: side by side pays). Every training must end with the same
weights (sha256 of the parameters): the wait policy and the company change the time, not the
numbers. Example::

    python bench/stage_concurrency.py --steps 40 --threads 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def train(steps: int, batch_size: int, length: int, threads: int) -> dict:
    """One stand-in training in this process: seconds and the weights' digest."""
    import torch

    from models.reader.api import load_qa_model
    from tasks.params_loading import load_params
    from tasks.reading.stages import resolve_reader_model

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = load_qa_model(resolve_reader_model(load_params().readers.model.model))[0]
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    ids = torch.randint(5, 20000, (batch_size, length))
    start = torch.randint(0, length // 2, (batch_size,))
    began = time.perf_counter()
    for _ in range(steps):
        loss = model(input_ids=ids, start_positions=start, end_positions=start + 2).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    seconds = time.perf_counter() - began
    digest = hashlib.sha256()
    for parameter in model.parameters():
        digest.update(parameter.detach().numpy().tobytes())
    return {"seconds": round(seconds, 2), "weights": digest.hexdigest()[:16]}


def run_case(processes: int, policy: str, args: argparse.Namespace) -> list[dict]:
    """``processes`` trainings started together, each in a fresh Python with ``policy``."""
    env = {**os.environ, "OMP_WAIT_POLICY": policy}
    command = [sys.executable, __file__, "--child", "--steps", str(args.steps), "--batch-size",
               str(args.batch_size), "--length", str(args.length), "--threads",
               str(args.threads)]
    children = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
                for _ in range(processes)]
    results = []
    for child in children:
        out, _ = child.communicate()
        if child.returncode:
            raise SystemExit(f"a training process failed (exit {child.returncode})")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40,
                        help="AdamW steps per training (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=2,
                        help="windows per step (default: %(default)s)")
    parser.add_argument("--length", type=int, default=200,
                        help="random tokens per window (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads per process")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(train(args.steps, args.batch_size, args.length, args.threads)))
        return
    digests = set()
    for policy in ("ACTIVE", "PASSIVE"):
        alone = run_case(1, policy, args)[0]
        together = run_case(2, policy, args)
        digests |= {alone["weights"], *(r["weights"] for r in together)}
        ratio = max(r["seconds"] for r in together) / (2 * alone["seconds"])
        print(json.dumps({"wait_policy": policy, "alone_s": alone["seconds"],
                          "two_at_once_s": [r["seconds"] for r in together],
                          "two_at_once_vs_one_after_the_other": round(ratio, 2)}))
    print(json.dumps({"same_weights_in_every_run": len(digests) == 1}))
    if len(digests) != 1:
        raise SystemExit(f"the weights differ between runs: {sorted(digests)}")


if __name__ == "__main__":
    main()
