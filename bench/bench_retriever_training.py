"""Benchmark of DPR bi-encoder training: the Lightning module vs a bare PyTorch loop.

Both train the SAME model (a small random BERT pair, same initial weights) on the SAME
pre-collated batches (synthetic DPR examples, one hard negative each) with the same optimiser
(fused AdamW, linear warm-up/decay), loss (in-batch + hard-negative NLL) and gradient clipping
(2.0):

* ours: ``RetrieverModule`` under the Trainer of ``models.retriever.api.build_trainer``
  (the one training uses: ``last.ckpt`` callback, clipping, no logger);
* bare: ``zero_grad / forward / dpr_loss / backward / clip_grad_norm_ / step`` in a loop,
  then ``torch.save`` of model, optimizer and scheduler, fsynced (the Trainer's ``last.ckpt``
  at the end of fit is the same work: training's checkpoint writer fsyncs before it renames,
  so that a crash cannot leave a torn checkpoint; ~0.05-0.1 s for this model's 100 MB here).

The whole ``trainer.fit`` call is timed (Trainer start-up included), as is the whole bare loop.
Runs alternate (bare, ours, bare, ours, ...) so machine load hits both; the median of each is
reported. Prints questions/s of both, the ratio (target >= 0.95) and the machine. Example:
``python bench/bench_retriever_training.py --steps 60 --repeats 3 --threads 1``.

On a GPU (``--device cuda``, optionally ``--precision bf16-mixed``; the bare loop then runs
under ``torch.autocast`` as Lightning's bf16-mixed does) it also prints the peak GPU memory of
each (``torch.cuda.max_memory_allocated``), and ``--batch-sizes`` sweeps several batch sizes in
one process. BERT-base's shape: ``--hidden 768 --layers 12 --max-length 256 --passage-words
100`` (DPR's 100-word passages). ``--tokenizer`` names any tokenizer directory (default: the
packaged MiniLM's, BERT's uncased vocabulary).
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WORDS = [f"{a}{b}" for a in ("river", "stone", "cloud", "field", "light", "storm", "maple",
                            "ember", "frost", "grove") for b in ("side", "gate", "fall",
                                                                  "wood", "port", "mere")]


FILLER = "it was built long ago and is visited by many people from town {i} every year."


def _lengthen(text: str, words: int, i: int) -> str:
    """``text`` followed by filler sentences until it holds at least ``words`` words."""
    while len(text.split()) < words:
        text += " " + FILLER.format(i=i)
    return text


def make_samples(n: int, passage_words: int = 0):
    """Synthetic DPR samples: question i about a word only its positive passage contains;
    passages are padded with filler sentences to ``passage_words`` words (0: as written)."""
    from models.retriever.data import BiEncoderSample
    from tasks.io.dpr import DprCtx

    out = []
    for i in range(n):
        word, other = WORDS[i % len(WORDS)], WORDS[(i + 1) % len(WORDS)]
        positive = f"the {word} number {i} is found in the valley near town {i}. " + \
            FILLER.format(i=i)
        negative = f"the {other} is somewhere else, far from town {i}."
        out.append(BiEncoderSample(
            f"where is the {word} number {i} found",
            DprCtx(word.title(), _lengthen(positive, passage_words, i)),
            (DprCtx(other.title(), _lengthen(negative, passage_words, i + 1)),)))
    return out


def build_model(hidden: int, layers: int, seed: int, model_dir: Path,
                tokenizer_dir: str = "packaged:all-MiniLM-L6-v2"):
    """A random BERT (the tokenizer of ``tokenizer_dir``) saved to ``model_dir``; returns the
    tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from tasks.retrieval.encoders import resolve_model_path

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(tokenizer_dir))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=hidden,
                        num_hidden_layers=layers, num_attention_heads=max(1, hidden // 64),
                        intermediate_size=4 * hidden)
    BertModel(config, add_pooling_layer=False).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    return tokenizer


def run_bare(model, batches, config, checkpoint: Path | None = None, device: str = "cpu",
             bf16: bool = False) -> tuple[float, float]:
    """Seconds of a plain PyTorch training loop over ``batches``, whole and of its steps
    alone (first batch to the last optimizer step); like the Trainer, it moves
    the model and each batch to ``device``, runs forward and loss under bf16 autocast when
    ``bf16`` (Lightning's bf16-mixed), and saves a resumable checkpoint (model, optimizer,
    scheduler, step) at the end, fsynced as training's checkpoint writer does."""
    import contextlib

    import torch

    from models.optim import adamw, decay_groups
    from models.retriever.loss import dpr_loss
    from models.retriever.module import linear_schedule

    start = time.perf_counter()
    model.to(device).train()
    autocast = (torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16)
                if bf16 else contextlib.nullcontext())
    params = [p for p in model.parameters() if p.requires_grad]
    # the module's optimizer (models/optim.py): BERT's decay groups, AdamW fused except under
    # mixed precision, where Lightning's clipping refuses it
    optimizer = adamw(decay_groups(model.named_parameters(), config.weight_decay),
                      lr=config.lr, precision="bf16-mixed" if bf16 else None,
                      eps=config.adam_eps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, linear_schedule(config.warmup_steps, config.max_steps))
    cuda = torch.device(device).type == "cuda"
    first = time.perf_counter()
    for batch in batches:
        batch = type(batch)(*(t.to(device, non_blocking=True) for t in batch))
        optimizer.zero_grad(set_to_none=True)
        with autocast:
            q, ctx = model(batch.q_ids, batch.q_mask, batch.ctx_ids, batch.ctx_mask)
            loss, _, _ = dpr_loss(q, ctx, batch.positive_idx)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, config.grad_clip)
        optimizer.step()
        scheduler.step()
    if cuda:
        torch.cuda.synchronize()
    steps = time.perf_counter() - first
    if checkpoint is not None:
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        with open(checkpoint, "wb") as handle:
            torch.save({"state_dict": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "global_step": len(batches)},
                       handle)
            handle.flush()
            os.fsync(handle.fileno())
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - start, steps


def run_lightning(model, batches, config, scratch: Path) -> tuple[float, float, float]:
    """Seconds of ``trainer.fit`` of :class:`RetrieverModule` over ``batches`` (Trainer
    creation included), of its training loop (first batch to the end) and of its steps alone
    (first batch to the end of the last batch)."""
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import DataLoader

    from models.retriever.api import build_trainer
    from models.retriever.module import RetrieverModule

    marks: dict[str, float] = {}

    class Clock(pl.Callback):
        def on_train_batch_start(self, trainer, module, batch, batch_idx):
            marks.setdefault("first", time.perf_counter())

        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            if trainer.global_step == len(batches):
                if torch.cuda.is_available() and module.device.type == "cuda":
                    torch.cuda.synchronize()
                marks["last"] = time.perf_counter()

    module = RetrieverModule(model, config)
    loader = DataLoader(batches, batch_size=None, shuffle=False)
    start = time.perf_counter()
    trainer = build_trainer(config, scratch, has_val=False, callbacks=[Clock()])
    trainer.fit(module, train_dataloaders=loader)
    end = time.perf_counter()
    assert trainer.global_step == len(batches), trainer.global_step
    return end - start, end - marks["first"], marks["last"] - marks["first"]


def peak_gib(device: str) -> float | None:
    """Peak GPU memory (GiB) since the last reset on ``device``; None on CPU."""
    import torch

    if torch.device(device).type != "cuda":
        return None
    return torch.cuda.max_memory_allocated() / 2 ** 30


def reset_peak(device: str) -> None:
    """Forget the GPU memory peak (and cached blocks) before the next run."""
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def _peak_text(gib: float | None) -> str:
    return f"  peak {gib:.2f} GiB" if gib is not None else ""


def bench_batch_size(args, batch_size: int, initial, tokenizer, tmp: Path) -> dict:
    """Times the bare loop and the Lightning module at one batch size (alternating runs)."""
    import torch

    from models.retriever import RetrieverTrainConfig
    from models.retriever.data import BiEncoderCollator

    bf16 = args.precision == "bf16-mixed"
    config = RetrieverTrainConfig(max_steps=args.steps, max_epochs=None,
                                  batch_size=batch_size, max_length=args.max_length,
                                  warmup_steps=max(1, args.steps // 10), accelerator=args.device,
                                  precision=args.precision, log_every_n_steps=10,
                                  checkpoint_every_n_steps=10 ** 6)
    samples = make_samples(args.steps * batch_size, args.passage_words)
    collate = BiEncoderCollator(tokenizer, args.max_length)
    batches = [collate(samples[i:i + batch_size])
               for i in range(0, len(samples), batch_size)]
    tokens = float(batches[0].ctx_mask.sum()) / batches[0].ctx_mask.shape[0]
    run_bare(copy.deepcopy(initial), batches[:3], config, device=args.device,
             bf16=bf16)  # warm-up (allocator, kernels)
    bare, ours, loops, bare_peak, ours_peak = [], [], [], [], []
    bare_steps, ours_steps = [], []
    for repeat in range(args.repeats):
        torch.manual_seed(repeat)
        reset_peak(args.device)
        whole, steps = run_bare(copy.deepcopy(initial), batches, config,
                                tmp / "bare" / "last.pt", args.device, bf16)
        bare.append(whole)
        bare_steps.append(steps)
        bare_peak.append(peak_gib(args.device))
        shutil.rmtree(tmp / "bare")  # BERT-base's pair with AdamW state: 2.6 GB a checkpoint
        torch.manual_seed(repeat)
        reset_peak(args.device)
        whole, loop, steps = run_lightning(copy.deepcopy(initial), batches, config,
                                           tmp / "ckpt")
        ours_steps.append(steps)
        ours_peak.append(peak_gib(args.device))
        shutil.rmtree(tmp / "ckpt")
        ours.append(whole)
        loops.append(loop)
    n = args.steps * batch_size
    return {"batch_size": batch_size, "passage_tokens": tokens, "bare": bare, "ours": ours,
            "loops": loops, "bare_qps": n / statistics.median(bare),
            "bare_steps_qps": n / statistics.median(bare_steps),
            "ours_steps_qps": n / statistics.median(ours_steps),
            "ours_qps": n / statistics.median(ours), "loop_qps": n / statistics.median(loops),
            "bare_peak_gib": max(bare_peak) if bare_peak[0] is not None else None,
            "ours_peak_gib": max(ours_peak) if ours_peak[0] is not None else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=60, help="training steps per run")
    parser.add_argument("--batch-size", type=int, default=16, help="questions per step")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=None,
                        help="several batch sizes, one after another (overrides --batch-size)")
    parser.add_argument("--hidden", type=int, default=128,
                        help="hidden size of each of the two random BERTs (768: BERT-base; "
                        "default: %(default)s)")
    parser.add_argument("--layers", type=int, default=2,
                        help="transformer layers of each BERT (12: BERT-base; default: "
                        "%(default)s)")
    parser.add_argument("--max-length", type=int, default=64,
                        help="tokens per question and per passage; longer ones are truncated "
                        "(default: %(default)s)")
    parser.add_argument("--passage-words", type=int, default=0,
                        help="pad passages with filler sentences to this many words (0: short)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="where both train; on cuda the peak GPU memory is printed too "
                        "(default: %(default)s)")
    parser.add_argument("--precision", default="32-true", choices=["32-true", "bf16-mixed"],
                        help="bf16-mixed needs --device cuda")
    parser.add_argument("--tokenizer", default="packaged:all-MiniLM-L6-v2",
                        help="the tokenizer: a Hugging Face model directory or packaged:<name> "
                        "(default: the packaged all-MiniLM-L6-v2's, BERT's uncased vocabulary)")
    args = parser.parse_args()

    import logging

    import torch

    from models.retriever.network import BiEncoder

    logging.getLogger("pytorch_lightning").setLevel(logging.ERROR)
    torch.set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-retriever-") as tmp:
        tmp = Path(tmp)
        tokenizer = build_model(args.hidden, args.layers, 0, tmp / "bert", args.tokenizer)
        initial = BiEncoder.from_pretrained(tmp / "bert")
        for batch_size in args.batch_sizes or [args.batch_size]:
            rows.append(bench_batch_size(args, batch_size, initial, tokenizer, tmp))
    params = sum(p.numel() for p in initial.parameters())
    gpu = f", {torch.cuda.get_device_name()}" if args.device == "cuda" else ""
    print(f"machine: {platform.machine()} {platform.system()}, torch {torch.__version__}, "
          f"{args.threads} thread(s){gpu}; model: 2 x BERT hidden {args.hidden}, {args.layers} "
          f"layers ({params / 1e6:.1f}M params); {args.steps} steps, max_length "
          f"{args.max_length}, precision {args.precision}")
    for row in rows:
        b = row["batch_size"]
        print(f"batch {b} questions (+{b * 2} passages of {row['passage_tokens']:.0f} tokens):")
        print(f"  bare PyTorch loop : {row['bare_qps']:8.1f} questions/s"
              f"{_peak_text(row['bare_peak_gib'])}"
              f"  (runs: {', '.join(f'{s:.2f}s' for s in row['bare'])})")
        print(f"  Lightning module  : {row['ours_qps']:8.1f} questions/s"
              f"{_peak_text(row['ours_peak_gib'])}"
              f"  (runs: {', '.join(f'{s:.2f}s' for s in row['ours'])})")
        print(f"    (Trainer start-up: median "
              f"{statistics.median(row['ours']) - statistics.median(row['loops']):.2f}s of each "
              f"run; training loop alone {row['loop_qps']:.1f} questions/s)")
        print(f"  ratio Lightning / bare: {row['ours_qps'] / row['bare_qps']:.3f} "
              "(target >= 0.95)")
        print(f"  steps alone (no start-up, no checkpoint): bare {row['bare_steps_qps']:.1f}, "
              f"Lightning {row['ours_steps_qps']:.1f} questions/s, ratio "
              f"{row['ours_steps_qps'] / row['bare_steps_qps']:.3f}")


if __name__ == "__main__":
    main()
