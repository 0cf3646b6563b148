"""Benchmark: writing DPR training's ``last.ckpt``: Lightning's default writer vs ours vs a bare
``torch.save``.

The state is a checkpoint of the shape DPR training writes: the weights of a BERT pair and
AdamW's two moments per weight (``--hidden 768 --layers 12``: BERT-base, 2.6 GB; random values,
since the time does not depend on them). Writers:

* lightning: ``TorchCheckpointIO.save_checkpoint`` (``_atomic_save``: the whole checkpoint
  serialised into memory, copied, then written);
* ours: ``models.checkpoint_io.StreamingAtomicCheckpointIO`` (``torch.save`` streamed
  into a temporary sibling, fsynced, renamed onto the path);
* bare: ``torch.save(state, path)`` (not atomic: a kill mid-save leaves a torn file).

Each writer runs in its own process so that its peak resident memory is its own; runs alternate.
Prints seconds per save (median), peak memory over the state itself, and ours / lightning.
Example: ``python bench/bench_checkpoint_save.py --hidden 768 --layers 12 --repeats 3``.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WRITERS = ("lightning", "ours", "bare")


def build_state(hidden: int, layers: int, vocab: int = 30522) -> dict:
    """A DPR-shaped Lightning checkpoint: two BERTs' weights and AdamW's moments for each."""
    import torch
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=max(1, hidden // 64), intermediate_size=4 * hidden)
    weights = {}
    for side in ("question_model", "ctx_model"):
        for name, tensor in BertModel(config, add_pooling_layer=False).state_dict().items():
            weights[f"model.{side}.{name}"] = tensor
    moments = {i: {"step": torch.tensor(10.0), "exp_avg": torch.randn_like(t),
                   "exp_avg_sq": torch.rand_like(t)} for i, t in enumerate(weights.values())}
    return {"state_dict": weights, "global_step": 10, "epoch": 0,
            "optimizer_states": [{"state": moments, "param_groups": []}]}


def save_once(writer: str, state: dict, path: Path) -> float:
    """Seconds of one save of ``state`` to ``path`` by ``writer``."""
    import torch
    from pytorch_lightning.plugins import TorchCheckpointIO

    from models.checkpoint_io import StreamingAtomicCheckpointIO

    start = time.perf_counter()
    if writer == "lightning":
        TorchCheckpointIO().save_checkpoint(state, path)
    elif writer == "ours":
        StreamingAtomicCheckpointIO().save_checkpoint(state, path)
    else:
        torch.save(state, path)
    return time.perf_counter() - start


def child(args: argparse.Namespace) -> None:
    """One writer, one save, in this process: prints its seconds and memory as JSON."""
    def rss_mb() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    state = build_state(args.hidden, args.layers)
    base = rss_mb()
    seconds = save_once(args.writer, state, Path(args.path))
    size = Path(args.path).stat().st_size
    print(json.dumps({"writer": args.writer, "seconds": seconds, "file_mb": size / 2 ** 20,
                      "peak_over_state_mb": rss_mb() - base}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=768,
                        help="hidden size of each of the two BERTs (default: %(default)s, "
                        "BERT-base)")
    parser.add_argument("--layers", type=int, default=12,
                        help="transformer layers of each BERT (default: %(default)s, BERT-base)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="saves per writer, alternating between writers; the median is shown "
                        "(default: %(default)s)")
    parser.add_argument("--writer", choices=WRITERS, help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.writer:
        child(args)
        return
    runs: dict[str, list[dict]] = {w: [] for w in WRITERS}
    with tempfile.TemporaryDirectory(prefix="bench-ckpt-", dir=".") as tmp:
        for _ in range(args.repeats):
            for writer in WRITERS:
                path = Path(tmp) / f"{writer}.ckpt"
                out = subprocess.run([sys.executable, __file__, "--writer", writer, "--path",
                                      str(path), "--hidden", str(args.hidden), "--layers",
                                      str(args.layers)], capture_output=True, text=True,
                                     check=True)
                runs[writer].append(json.loads(out.stdout.strip().splitlines()[-1]))
                path.unlink()
    size = runs["bare"][0]["file_mb"]
    print(f"checkpoint: 2 x BERT hidden {args.hidden}, {args.layers} layers, with AdamW "
          f"moments: {size / 1024:.2f} GiB; {args.repeats} saves per writer, alternating")
    median = {w: statistics.median(r["seconds"] for r in runs[w]) for w in WRITERS}
    for writer in WRITERS:
        peak = max(r["peak_over_state_mb"] for r in runs[writer])
        seconds = ", ".join(f"{r['seconds']:.2f}" for r in runs[writer])
        print(f"{writer:>10}: {median[writer]:6.2f} s per save (runs {seconds}); peak memory "
              f"over the state {peak / 1024:.2f} GiB")
    print(f"ours / lightning (time): {median['ours'] / median['lightning']:.3f}; "
          f"ours / bare: {median['ours'] / median['bare']:.3f}")


if __name__ == "__main__":
    main()
