"""Where a training step goes, per trainer: forward + backward vs gradient clipping + AdamW
step, for torch's three AdamW implementations (for-loop, ``foreach``, ``fused``), on the same
model, the same initial weights and the same batch in one run. Every trainer now steps with the
fused one (``models/optim.py``).

Trainers, at the sizes of the chosen profile's ``params.yaml`` (random weights of that shape;
random token ids):

* ``reader``: the reader's start point (MiniLM) on ``--batch-size`` windows of ``--length``;
* ``dpr``: the DPR pair (two BERTs of the MLM shape), questions of 24 tokens, a positive and
  the hard negatives per question at the DPR length;
* ``mlm``: the small BERT's masked-LM loss (15 % of the tokens masked);
* ``paraphraser``: the pointer-generator transformer, sources of 32 and targets of 24 pieces.

Prints one JSON line per implementation (milliseconds per step, median over ``--steps`` after
``--warmup`` steps), then the fused / for-loop ratio of the clip + optimizer time and the share
of the whole step the fused optimizer saves. Examples::

    python bench/optimizer_step.py --trainer reader --batch-size 2 --length 160 --threads 2
    python bench/optimizer_step.py --trainer dpr --threads 2
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TRAINERS = ("reader", "dpr", "mlm", "paraphraser")


def build(trainer: str, params: Any, batch_size: int | None, length: int | None
          ) -> tuple[Any, Callable[[Any], Any], str]:
    """``(module, loss of the module, description)`` of one trainer at the profile's sizes."""
    import torch

    ids = lambda b, n, high: torch.randint(5, high, (b, n))  # noqa: E731
    if trainer == "reader":
        from models.reader.api import load_qa_model
        from models.reader.module import ReaderModule
        from tasks.reading.stages import resolve_reader_model

        config = params.readers.model
        b, n = batch_size or config.batch_size, length or 160
        module = ReaderModule(load_qa_model(resolve_reader_model(config.model))[0], config)
        x, s = ids(b, n, 20000), torch.randint(0, n // 2, (b,))
        return (module, lambda m: m.model(input_ids=x, start_positions=s, end_positions=s + 2).loss,
                f"{config.model}, {b} windows of {n} tokens")
    mlm, dpr = params.retriever_training.mlm, params.retriever_training.dpr
    if trainer == "dpr":
        from _harness import mlm_shaped_bert

        from models.retriever.data import BiEncoderBatch
        from models.retriever.module import RetrieverModule
        from models.retriever.network import BiEncoder

        b, n = batch_size or dpr.batch_size, length or dpr.max_length
        module = RetrieverModule(BiEncoder(mlm_shaped_bert(mlm), mlm_shaped_bert(mlm),
                                           pooling=dpr.pooling), dpr)
        per_q = 1 + dpr.hard_negatives
        batch = BiEncoderBatch(ids(b, 24, 20000), torch.ones(b, 24, dtype=torch.long),
                               ids(b * per_q, n, 20000), torch.ones(b * per_q, n, dtype=torch.long),
                               torch.arange(b) * per_q)
        return (module, lambda m: m._loss(batch)[0],
                f"BERT pair {mlm.layers}x{mlm.hidden}, {b} questions + {b * per_q} passages "
                f"of {n} tokens")
    if trainer == "mlm":
        from transformers import AutoTokenizer

        from models.mlm.pretrain import MlmModule, build_model, masked_lm_loss
        from tasks.retrieval.encoders import resolve_model_path

        b, n = batch_size or mlm.batch_size, length or mlm.max_length
        tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(mlm.tokenizer))
        module = MlmModule(build_model(mlm, tokenizer), mlm)
        x = ids(b, n, 20000)
        labels = torch.where(torch.rand(b, n) < mlm.mask_prob, x, torch.full_like(x, -100))
        batch = {"input_ids": x, "attention_mask": torch.ones_like(x), "labels": labels}
        return (module, lambda m: masked_lm_loss(m.model, batch),
                f"BertForMaskedLM {mlm.layers}x{mlm.hidden}, {b} x {n} tokens")
    from models.paraphraser.config import ModelConfig
    from models.paraphraser.data import TensorBatch
    from models.paraphraser.module import ParaphraserModule

    config = params.paraphrase.model
    b = batch_size or config.batch_size
    spm = params.paraphrase.vocab_size
    model = ModelConfig(spm_vocab_size=spm, vocab_size=spm + 6, d_model=config.d_model,
                        heads=config.heads, encoder_layers=config.layers,
                        decoder_layers=config.n_decoder_layers, ff=config.ff,
                        dropout=config.dropout, max_len=config.max_len,
                        lowercase=config.lowercase, pad_id=0, bos_id=1, eos_id=2, sep_id=spm,
                        none_id=spm + 1, unk_id=3)
    module = ParaphraserModule(model, config)
    src = ids(b, 32, spm)
    batch = TensorBatch(src, src, torch.ones(b, 32, dtype=torch.bool), ids(b, 24, spm),
                        ids(b, 24, spm), 0)
    return (module, lambda m: m._loss(batch)[0],
            f"paraphraser d_model {config.d_model}, {config.layers} layers, vocab {spm}, "
            f"batch {b}")


def time_steps(module: Any, loss: Callable[[Any], Any], options: dict[str, Any], steps: int,
               warmup: int, clip: float) -> dict[str, float]:
    """Median milliseconds of forward + backward and of clip + AdamW step."""
    import torch

    from models.optim import decay_groups

    optimizer = torch.optim.AdamW(decay_groups(module.named_parameters(), 0.01), lr=1e-5,
                                  **options)
    forward, update = [], []
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        loss(module).backward()
        t1 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(module.parameters(), clip)
        optimizer.step()
        optimizer.zero_grad()
        t2 = time.perf_counter()
        if step >= warmup:
            forward.append(t1 - t0)
            update.append(t2 - t1)
    return {"forward_backward_ms": round(1000 * statistics.median(forward), 1),
            "clip_and_adamw_ms": round(1000 * statistics.median(update), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trainer", choices=TRAINERS, default="reader",
                        help="which training step to time")
    parser.add_argument("--profile", default="demo", help="params.yaml profile for the sizes")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="examples per step (default: the profile's)")
    parser.add_argument("--length", type=int, default=None,
                        help="tokens per window / passage (default: reader 160, else the "
                             "profile's max length)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per implementation")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = parser.parse_args()

    import torch

    from tasks.params_loading import load_params

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    params = load_params(profile=args.profile)
    module, loss, what = build(args.trainer, params, args.batch_size, args.length)
    module.train()
    results = {}
    for name, options in (("for-loop", {"foreach": False}), ("foreach", {"foreach": True}),
                          ("fused", {"fused": True})):
        torch.manual_seed(1)  # the same weights and dropout masks for each implementation
        results[name] = time_steps(copy.deepcopy(module), loss, options, args.steps,
                                   args.warmup, clip=1.0)
        print(json.dumps({"trainer": args.trainer, "adamw": name, **results[name]}), flush=True)
    loop, fused = results["for-loop"], results["fused"]
    whole = loop["forward_backward_ms"] + loop["clip_and_adamw_ms"]
    print(json.dumps({
        "trainer": args.trainer, "what": what, "threads": args.threads,
        "fused_over_for_loop": round(fused["clip_and_adamw_ms"] / loop["clip_and_adamw_ms"], 3),
        "step_saved_share": round((loop["clip_and_adamw_ms"] - fused["clip_and_adamw_ms"])
                                  / whole, 3)}))


if __name__ == "__main__":
    main()
