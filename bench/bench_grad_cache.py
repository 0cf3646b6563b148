"""Gradient cache vs the plain DPR step: time and peak memory per step as the batch grows.

Both compute the gradients of the same loss on the same batch (DPR's in-batch + hard-negative
NLL; `models/retriever/grad_cache.py`): the plain step keeps the activations of the whole
batch, the gradient cache those of one chunk, at the price of one more forward pass. Each
(mode, batch size) runs in its own process, so that its peak is its own: peak resident memory
(``ru_maxrss``) on CPU, ``torch.cuda.max_memory_allocated`` on a GPU. The model is a BERT pair
of the demo's MLM shape by default, or ``--model DIR`` (any BERT-family checkpoint, two
copies), random token ids of ``--q-length`` / ``--ctx-length`` tokens, one hard negative per
question. Prints one JSON line per run (a run that fails, e.g. out of GPU memory, prints its
last error line instead), then per batch size the cached / plain ratios of time and of the
peak's growth over the model alone. Example::

    python bench/bench_grad_cache.py --batch-sizes 16 64 128 --chunk 16 --threads 2
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _peak_mb(device: str) -> float:
    import torch

    if device == "cuda":
        return torch.cuda.max_memory_allocated() / 2 ** 20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_one(args: argparse.Namespace) -> dict:
    """One mode at one batch size, in this process: seconds per step and peak memory."""
    import torch
    from _harness import mlm_shaped_bert
    from transformers import BertModel

    from models.retriever.data import BiEncoderBatch
    from models.retriever.grad_cache import grad_cache_step
    from models.retriever.loss import dpr_loss
    from models.retriever.network import BiEncoder

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.model:
        question, ctx = BertModel.from_pretrained(args.model), BertModel.from_pretrained(args.model)
    else:
        from tasks.params_loading import load_params

        mlm = load_params(profile=args.profile).retriever_training.mlm
        question, ctx = mlm_shaped_bert(mlm), mlm_shaped_bert(mlm)
    model = BiEncoder(question, ctx, pooling="mean").to(args.device)
    b = args.batch_size
    ids = lambda n, length: torch.randint(1000, 20000, (n, length), device=args.device)  # noqa: E731
    batch = BiEncoderBatch(ids(b, args.q_length), torch.ones(b, args.q_length, dtype=torch.long,
                                                             device=args.device),
                           ids(2 * b, args.ctx_length),
                           torch.ones(2 * b, args.ctx_length, dtype=torch.long,
                                      device=args.device),
                           torch.arange(b, device=args.device) * 2)
    if args.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    base = _peak_mb(args.device)  # the model and the batch, before any step
    times = []
    for _ in range(args.steps):
        model.zero_grad(set_to_none=True)
        start = time.perf_counter()
        if args.mode == "plain":
            q, c = model(batch.q_ids, batch.q_mask, batch.ctx_ids, batch.ctx_mask)
            dpr_loss(q, c, batch.positive_idx)[0].backward()
        else:
            grad_cache_step(model, batch, args.chunk)
        if args.device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return {"mode": args.mode, "batch_size": b, "chunk": args.chunk if args.mode == "cached"
            else None, "seconds_per_step": round(statistics.median(times[1:] or times), 4),
            "peak_mb": round(_peak_mb(args.device), 1), "base_mb": round(base, 1),
            "device": args.device, "threads": args.threads}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 64, 128],
                        help="questions per step (each with a positive and a hard negative)")
    parser.add_argument("--chunk", type=int, default=16, help="grad_cache_chunk")
    parser.add_argument("--model", default=None, help="BERT-family checkpoint (default: a "
                        "random BERT of the profile's MLM shape; demo: 2 layers x 128)")
    parser.add_argument("--profile", default="demo", help="params.yaml profile for that shape")
    parser.add_argument("--q-length", type=int, default=32,
                        help="tokens per question (random ids; default: %(default)s)")
    parser.add_argument("--ctx-length", type=int, default=256,
                        help="tokens per passage, positive and hard negative (random ids; default: "
                        "%(default)s)")
    parser.add_argument("--steps", type=int, default=3, help="steps per run (the first untimed)")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="where the steps run; the peak is resident memory on cpu, "
                        "torch.cuda.max_memory_allocated on cuda (default: %(default)s)")
    parser.add_argument("--mode", choices=["plain", "cached"], help=argparse.SUPPRESS)
    parser.add_argument("--batch-size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.mode:  # a child run
        print(json.dumps(run_one(args)))
        return
    runs = {}
    for b in args.batch_sizes:
        for mode in ("plain", "cached"):
            child = [sys.executable, __file__, "--mode", mode, "--batch-size", str(b),
                     "--chunk", str(args.chunk), "--q-length", str(args.q_length),
                     "--ctx-length", str(args.ctx_length), "--steps", str(args.steps),
                     "--threads", str(args.threads), "--device", args.device,
                     "--profile", args.profile]
            if args.model:
                child += ["--model", args.model]
            out = subprocess.run(child, capture_output=True, text=True)
            if out.returncode == 0:
                runs[(mode, b)] = json.loads(out.stdout.strip().splitlines()[-1])
            else:  # e.g. out of GPU memory: reported, and the other runs go on
                tail = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
                runs[(mode, b)] = {"mode": mode, "batch_size": b, "failed": tail[:300],
                                   "returncode": out.returncode}
            print(json.dumps(runs[(mode, b)]), flush=True)
    for b in args.batch_sizes:
        plain, cached = runs[("plain", b)], runs[("cached", b)]
        if "failed" in plain or "failed" in cached:
            continue
        grown = [r["peak_mb"] - r["base_mb"] for r in (plain, cached)]
        print(json.dumps({
            "batch_size": b, "chunk": args.chunk,
            "time_cached_over_plain": round(cached["seconds_per_step"]
                                            / plain["seconds_per_step"], 3),
            "peak_growth_mb": {"plain": round(grown[0], 1), "cached": round(grown[1], 1)},
            "peak_growth_cached_over_plain": round(grown[1] / grown[0], 3) if grown[0] else None}))


if __name__ == "__main__":
    main()
