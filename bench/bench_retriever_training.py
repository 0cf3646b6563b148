"""Benchmark of DPR bi-encoder training: the Lightning module vs a bare PyTorch loop.

Both train the SAME model (a small random BERT pair, same initial weights) on the SAME
pre-collated batches (synthetic DPR examples, one hard negative each) with the same optimiser
(fused AdamW, linear warm-up/decay), loss (in-batch + hard-negative NLL) and gradient clipping
(2.0):

* ours: ``RetrieverModule`` under the Trainer of ``models.retriever.api.build_trainer``
  (the one training uses: ``last.ckpt`` callback, clipping, no logger);
* bare: ``zero_grad / forward / dpr_loss / backward / clip_grad_norm_ / step`` in a loop,
  then ``torch.save`` of model, optimizer and scheduler (the Trainer's ``last.ckpt`` at the
  end of fit is the same work).

The whole ``trainer.fit`` call is timed (Trainer start-up included), as is the whole bare loop.
Runs alternate (bare, ours, bare, ours, ...) so machine load hits both; the median of each is
reported. Prints questions/s of both, the ratio (target >= 0.95) and the machine. Example:
``python bench/bench_retriever_training.py --steps 60 --repeats 3 --threads 1``.
"""

from __future__ import annotations

import argparse
import copy
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = [f"{a}{b}" for a in ("river", "stone", "cloud", "field", "light", "storm", "maple",
                            "ember", "frost", "grove") for b in ("side", "gate", "fall",
                                                                  "wood", "port", "mere")]


def make_samples(n: int):
    """Synthetic DPR samples: question i about a word only its positive passage contains."""
    from models.retriever.data import BiEncoderSample
    from tasks.io.dpr import DprCtx

    out = []
    for i in range(n):
        word, other = WORDS[i % len(WORDS)], WORDS[(i + 1) % len(WORDS)]
        out.append(BiEncoderSample(
            f"where is the {word} number {i} found",
            DprCtx(word.title(), f"the {word} number {i} is found in the valley near town {i}. "
                   "it was built long ago and is visited by many people every year."),
            (DprCtx(other.title(), f"the {other} is somewhere else, far from town {i}."),)))
    return out


def build_model(hidden: int, layers: int, seed: int, model_dir: Path):
    """A random BERT (MiniLM tokenizer) saved to ``model_dir``; returns the tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from tasks.retrieval.encoders import resolve_model_path

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path("packaged:all-MiniLM-L6-v2"))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden,
                        num_hidden_layers=layers, num_attention_heads=max(1, hidden // 64),
                        intermediate_size=4 * hidden)
    BertModel(config, add_pooling_layer=False).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return tokenizer


def run_bare(model, batches, config, checkpoint: Path | None = None) -> float:
    """Seconds of a plain PyTorch training loop over ``batches``; like the Trainer, it saves
    a resumable checkpoint (model, optimizer, scheduler, step) at the end."""
    import torch

    from models.retriever.loss import dpr_loss
    from models.retriever.module import linear_schedule

    model.train()
    start = time.perf_counter()
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for n, p in model.named_parameters()
             if p.requires_grad and not (p.ndim < 2 or "LayerNorm" in n)]
    no_decay = [p for n, p in model.named_parameters()
                if p.requires_grad and (p.ndim < 2 or "LayerNorm" in n)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=config.lr, eps=config.adam_eps,
                                  fused=True)  # as the module's (models/optim.py)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, linear_schedule(config.warmup_steps, config.max_steps))
    for batch in batches:
        optimizer.zero_grad(set_to_none=True)
        q, ctx = model(batch.q_ids, batch.q_mask, batch.ctx_ids, batch.ctx_mask)
        loss, _, _ = dpr_loss(q, ctx, batch.positive_idx)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, config.grad_clip)
        optimizer.step()
        scheduler.step()
    if checkpoint is not None:
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"state_dict": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "global_step": len(batches)},
                   checkpoint)
    return time.perf_counter() - start


def run_lightning(model, batches, config, scratch: Path) -> tuple[float, float]:
    """Seconds of ``trainer.fit`` of :class:`RetrieverModule` over ``batches`` (Trainer
    creation included), and of its training loop alone (first batch to the end)."""
    import pytorch_lightning as pl
    from torch.utils.data import DataLoader

    from models.retriever.api import build_trainer
    from models.retriever.module import RetrieverModule

    marks: dict[str, float] = {}

    class Clock(pl.Callback):
        def on_train_batch_start(self, trainer, module, batch, batch_idx):
            marks.setdefault("first", time.perf_counter())

    module = RetrieverModule(model, config)
    loader = DataLoader(batches, batch_size=None, shuffle=False)
    start = time.perf_counter()
    trainer = build_trainer(config, scratch, has_val=False, callbacks=[Clock()])
    trainer.fit(module, train_dataloaders=loader)
    end = time.perf_counter()
    assert trainer.global_step == len(batches), trainer.global_step
    return end - start, end - marks["first"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=60, help="training steps per run")
    parser.add_argument("--batch-size", type=int, default=16, help="questions per step")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args()

    import logging

    import torch

    from models.retriever import RetrieverTrainConfig
    from models.retriever.data import BiEncoderCollator
    from models.retriever.network import BiEncoder

    logging.getLogger("pytorch_lightning").setLevel(logging.ERROR)
    torch.set_num_threads(args.threads)
    config = RetrieverTrainConfig(max_steps=args.steps, max_epochs=None,
                                  batch_size=args.batch_size, max_length=args.max_length,
                                  warmup_steps=max(1, args.steps // 10), accelerator="cpu",
                                  log_every_n_steps=10, checkpoint_every_n_steps=10 ** 6)
    with tempfile.TemporaryDirectory(prefix="bench-retriever-") as tmp:
        tmp = Path(tmp)
        tokenizer = build_model(args.hidden, args.layers, 0, tmp / "bert")
        samples = make_samples(args.steps * args.batch_size)
        collate = BiEncoderCollator(tokenizer, args.max_length)
        batches = [collate(samples[i:i + args.batch_size])
                   for i in range(0, len(samples), args.batch_size)]
        initial = BiEncoder.from_pretrained(tmp / "bert")
        run_bare(copy.deepcopy(initial), batches[:3], config)  # warm-up (allocator, kernels)
        bare, ours, loops = [], [], []
        for repeat in range(args.repeats):
            torch.manual_seed(repeat)
            bare.append(run_bare(copy.deepcopy(initial), batches, config,
                                 tmp / f"bare{repeat}" / "last.pt"))
            torch.manual_seed(repeat)
            whole, loop = run_lightning(copy.deepcopy(initial), batches, config,
                                        tmp / f"ckpt{repeat}")
            ours.append(whole)
            loops.append(loop)
    n = args.steps * args.batch_size
    bare_qps, ours_qps = n / statistics.median(bare), n / statistics.median(ours)
    params = sum(p.numel() for p in initial.parameters())
    print(f"machine: {platform.machine()} {platform.system()}, torch {torch.__version__}, "
          f"{args.threads} thread(s); model: 2 x BERT hidden {args.hidden}, {args.layers} "
          f"layers ({params / 1e6:.1f}M params); {args.steps} steps x {args.batch_size} "
          f"questions (+{args.batch_size * 2} passages), max_length {args.max_length}")
    print(f"bare PyTorch loop : {bare_qps:8.1f} questions/s  (runs: "
          f"{', '.join(f'{s:.2f}s' for s in bare)})")
    print(f"Lightning module  : {ours_qps:8.1f} questions/s  (runs: "
          f"{', '.join(f'{s:.2f}s' for s in ours)})")
    print(f"  (Trainer start-up: median {statistics.median(ours) - statistics.median(loops):.2f}s"
          f" of each run; training loop alone {n / statistics.median(loops):.1f} questions/s)")
    print(f"ratio Lightning / bare: {ours_qps / bare_qps:.3f} (target >= 0.95)")


if __name__ == "__main__":
    main()
