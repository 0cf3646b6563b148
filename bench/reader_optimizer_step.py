"""Where a reader training step goes: forward + backward vs gradient clipping + AdamW step,
for torch's three AdamW implementations (for-loop, ``foreach``, ``fused``), on the same model
and the same batch in one run. The reader trains with ``fused`` (``models/reader/module.py``).

Prints one JSON line per implementation (milliseconds per step, median over ``--steps`` after
``--warmup`` steps) and the fused / for-loop ratio of the clip + optimizer time. Example::

    python bench/reader_optimizer_step.py --batch-size 2 --length 160 --threads 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="packaged:all-MiniLM-L6-v2",
                        help="reader start point (local dir, cached hub name or packaged:<name>)")
    parser.add_argument("--batch-size", type=int, default=2, help="windows per step (demo: 2)")
    parser.add_argument("--length", type=int, default=160, help="tokens per window")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per implementation")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForQuestionAnswering

    from tasks.reading.stages import resolve_reader_model

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    path = resolve_reader_model(args.model)
    model = AutoModelForQuestionAnswering.from_pretrained(str(path)).train()
    ids = torch.randint(1000, 20000, (args.batch_size, args.length))
    starts = torch.randint(0, args.length // 2, (args.batch_size,))
    ends = starts + 2
    results = {}
    for name, options in (("for-loop", {"foreach": False}), ("foreach", {"foreach": True}),
                          ("fused", {"fused": True})):
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, **options)
        forward, update = [], []
        for step in range(args.warmup + args.steps):
            t0 = time.perf_counter()
            model(input_ids=ids, start_positions=starts, end_positions=ends).loss.backward()
            t1 = time.perf_counter()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            t2 = time.perf_counter()
            if step >= args.warmup:
                forward.append(t1 - t0)
                update.append(t2 - t1)
        results[name] = {"forward_backward_ms": round(1000 * statistics.median(forward), 1),
                         "clip_and_adamw_ms": round(1000 * statistics.median(update), 1)}
        print(json.dumps({"adamw": name, **results[name]}), flush=True)
    ratio = results["fused"]["clip_and_adamw_ms"] / results["for-loop"]["clip_and_adamw_ms"]
    print(json.dumps({"fused_over_for_loop": round(ratio, 3), "model": args.model,
                      "batch_size": args.batch_size, "length": args.length,
                      "threads": args.threads}))


if __name__ == "__main__":
    main()
