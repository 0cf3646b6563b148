"""Benchmark of the reader: inference vs the ``transformers`` QA pipeline, training vs a bare loop.

Model: the packaged all-MiniLM-L6-v2 with a seeded random QA head (speed does not depend on the
weights). Inputs: synthetic questions over contexts long enough for several windows.

* inference: ``Reader.predict`` (windows sorted by length, padded per batch, exact n-best
  decoding on the batch) vs ``pipeline("question-answering")`` on the same model, questions,
  ``max_seq_len``/``doc_stride`` and batch size; questions/s of both and the ratio (target
  >= 1.0);
* training: ``Trainer.fit`` of :class:`ReaderModule` (Lightning, the code ``train_reader``
  runs) vs a bare PyTorch loop (fused AdamW, same schedule, clip, same collated batches);
  windows/s of both and the ratio (target >= 0.95).

Runs alternate between ours and the bare library. Example:
``python bench/bench_reader.py --questions 48 --steps 12 --threads 2``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def make_examples(n: int, seed: int, sentences: int):
    """``n`` questions, each over its own context of ``sentences`` sentences."""
    from models.reader.features import QAExample
    from tasks.io.squad import SquadAnswer

    rng = random.Random(seed)
    cities = ["Paris", "Lyon", "Oslo", "Lima", "Quito", "Turin", "Porto", "Graz", "Kyoto"]
    words = ["river", "market", "bridge", "tower", "garden", "harbour", "school", "church"]
    out = []
    for i in range(n):
        facts = [(f"Person{rng.randint(0, 99999)}", rng.choice(cities), rng.choice(words))
                 for _ in range(sentences)]
        context = " ".join(f"{p} was born in {c} near the old {w} and later moved away."
                           for p, c, w in facts)
        name, city, _ = facts[rng.randrange(sentences)]
        start = context.index(f"{name} was born in ") + len(f"{name} was born in ")
        out.append(QAExample(f"q{i}", f"Where was {name} born?", context,
                             (SquadAnswer(city, start),)))
    return out


def bench_inference(args, run_ours, run_pipeline, n_windows: int, max_answer: int) -> None:
    """Interleaved timed runs of ours and the pipeline; prints questions/s and the ratio."""
    times: dict[str, list[float]] = {"ours": [], "pipeline": []}
    run_ours(), run_pipeline()  # warm-up
    for _ in range(args.repeats):
        for name, fn in (("ours", run_ours), ("pipeline", run_pipeline)):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    qps = {k: args.questions / statistics.median(v) for k, v in times.items()}
    print(f"inference: {args.questions} questions, {n_windows} windows of <= {args.max_length} "
          f"tokens, batch {args.batch_size}, max answer {max_answer} tokens")
    for name, value in qps.items():
        print(f"  {name:>9}: {value:7.2f} questions/s (runs "
              f"{', '.join(f'{t:.2f}s' for t in times[name])})")
    print(f"  ratio ours / pipeline: {qps['ours'] / qps['pipeline']:.2f}x (target >= 1.0)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=48,
                        help="synthetic questions, each over its own context (training uses "
                        "them four times over; default: %(default)s)")
    parser.add_argument("--sentences", type=int, default=20, help="context sentences")
    parser.add_argument("--max-length", type=int, default=256,
                        help="inference window in tokens, question included (both; default: "
                        "%(default)s)")
    parser.add_argument("--doc-stride", type=int, default=64,
                        help="context tokens shared by consecutive inference windows (both; "
                        "default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=16,
                        help="windows per batch at inference and per training step (both; default: "
                        "%(default)s)")
    parser.add_argument("--steps", type=int, default=12, help="training steps (both)")
    parser.add_argument("--train-length", type=int, default=128, help="training window")
    parser.add_argument("--repeats", type=int, default=2,
                        help="timed runs of each, alternating; the median is shown (default: "
                        "%(default)s)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads of both sides, ours (Reader.predict's "
                        "cpu_threads) and the pipeline's (default: the machine's count)")
    parser.add_argument("--device", default="cpu",
                        help="torch device, e.g. cpu or cuda (default: %(default)s)")
    parser.add_argument("--model", default="packaged:all-MiniLM-L6-v2",
                        help="start point: packaged:NAME, a local model directory or a hub name")
    parser.add_argument("--part", choices=("all", "inference", "training"), default="all",
                        help="which comparison to run: inference, training or all (default: "
                        "%(default)s)")
    args = parser.parse_args(argv)

    import pytorch_lightning as pl
    import torch
    from _harness import load, machine
    from transformers import pipeline

    from models.reader.api import Reader, load_qa_model
    from models.reader.config import ReaderConfig, WindowConfig
    from models.reader.data import WindowCollator
    from models.reader.features import featurize
    from models.reader.module import ReaderDataModule, ReaderModule, lr_factor
    from models.threads import machine_cpu_threads
    from tasks.retrieval.encoder_spec import resolve_model_path

    args.threads = args.threads or machine_cpu_threads()  # one count for every side
    torch.set_num_threads(args.threads)
    print(f"machine: {machine()}; load {load()}; device {args.device}")
    base = resolve_model_path(args.model)
    torch.manual_seed(0)
    model, tokenizer = load_qa_model(base)
    model.eval()
    examples = make_examples(args.questions, 0, args.sentences)
    window = WindowConfig(max_length=args.max_length, doc_stride=args.doc_stride)
    reader = Reader(model, tokenizer, window, args.device)
    n_windows = len(reader.featurize(examples).windows)
    qa = pipeline("question-answering", model=model, tokenizer=tokenizer,
                  device=torch.device(args.device))
    inputs = [{"question": e.question, "context": e.context} for e in examples]

    def run_ours() -> list[str]:
        return [p.text for p in reader.predict(examples, batch_size=args.batch_size,
                                               cpu_threads=args.threads)]

    def run_pipeline() -> list[str]:
        out = qa(inputs, batch_size=args.batch_size, max_seq_len=args.max_length,
                 doc_stride=args.doc_stride, max_answer_len=window.max_answer_length)
        return [o["answer"] for o in out]

    if args.part != "training":
        bench_inference(args, run_ours, run_pipeline, n_windows, window.max_answer_length)
    if args.part == "inference":
        return 0
    config = ReaderConfig(max_length=args.train_length, doc_stride=32, max_query_length=32,
                          batch_size=args.batch_size, max_steps=args.steps, max_epochs=None,
                          lr=5e-5, accelerator="cpu" if args.device == "cpu" else "auto",
                          precision="32-true", deterministic=False, seed=0)
    feats = featurize(tokenizer, examples * 4, config.window()).windows
    state = {k: v.clone() for k, v in model.state_dict().items()}

    def run_lightning() -> float:
        model.load_state_dict(state)
        module = ReaderModule(model, config)
        data = ReaderDataModule(feats, None, tokenizer.pad_token_id, config.batch_size, 0)
        trainer = pl.Trainer(accelerator=config.accelerator, devices=1, max_steps=args.steps,
                             gradient_clip_val=config.grad_clip, logger=False,
                             enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False, num_sanity_val_steps=0,
                             limit_val_batches=0)
        t0 = time.perf_counter()
        trainer.fit(module, datamodule=data)
        return time.perf_counter() - t0

    def run_bare() -> float:
        model.load_state_dict(state)
        model.to(args.device).train()
        decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "LayerNorm" not in n]
        rest = [p for n, p in model.named_parameters() if not (p.ndim >= 2
                                                               and "LayerNorm" not in n)]
        # torch's fused AdamW, as the reader module's (models/optim.py): the same work
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                                 {"params": rest, "weight_decay": 0.0}], lr=config.lr,
                                fused=torch.device(args.device).type in ("cpu", "cuda"))
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lr_factor(config.lr_schedule, int(config.warmup_ratio * args.steps), args.steps,
                           config.min_lr_ratio))
        loader = torch.utils.data.DataLoader(
            feats, batch_size=config.batch_size, shuffle=True,
            generator=torch.Generator().manual_seed(0),
            collate_fn=WindowCollator(tokenizer.pad_token_id))
        t0 = time.perf_counter()
        step = 0
        while step < args.steps:
            for batch in loader:
                loss = model(**{k: v.to(args.device) for k, v in batch.items()}).loss
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
                opt.step()
                sched.step()
                step += 1
                if step == args.steps:
                    break
        return time.perf_counter() - t0

    run_bare()  # warm-up (allocator, kernels)
    train_times: dict[str, list[float]] = {"lightning": [], "bare loop": []}
    for _ in range(args.repeats):
        train_times["lightning"].append(run_lightning())
        train_times["bare loop"].append(run_bare())
    wps = {k: args.steps * config.batch_size / statistics.median(v)
           for k, v in train_times.items()}
    print(f"training: {args.steps} steps x {config.batch_size} windows of <= "
          f"{args.train_length} tokens")
    for name, value in wps.items():
        print(f"  {name:>9}: {value:7.2f} windows/s (runs "
              f"{', '.join(f'{t:.2f}s' for t in train_times[name])})")
    print(f"  ratio lightning / bare loop: {wps['lightning'] / wps['bare loop']:.3f}x "
          "(target >= 0.95)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
