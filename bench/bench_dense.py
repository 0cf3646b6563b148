"""Benchmark: our passage encoding vs sentence-transformers and vs a naive padded loop.

Encodes the same passages with the same model (default: the packaged all-MiniLM-L6-v2, mean
pooling, L2-normalised, max length 256) three ways, in the same process, interleaved:

(a) ``tasks.retrieval.encoders.encode_texts``: token-length-sorted batches, each padded to its
    own longest passage, under ``torch.inference_mode``;
(b) ``sentence_transformers.SentenceTransformer(model_dir).encode`` (its own length sorting);
(c) a naive loop: passages in file order, every batch padded to ``--max-length`` tokens.

Checks that the three give the same vectors and prints passages/s of each and the ratios
ours/sentence-transformers (target >= 1.0) and ours/naive (target >= 1.3), plus the machine.
Also (d) **compute only**: the same batches as (a), tokenised, padded and moved to the device
before the clock starts, so only the model runs: ours/compute-only shows how much tokenisation
still costs (target >= 0.65 on a GPU, where (a) tokenises in a producer thread meanwhile).
Passages: ``--passages psgs_w100.tsv`` (first ``--n``), else synthetic DPR-like passages
(mostly 100 words, some shorter article ends), seeded.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from pathlib import Path

_WORD_TEXT = (
    "the of and in to was is for on as by with he at from his an were are which this also be "
    "has or had first one their its after new who they two her she been other when there all "
    "during into school time may years more most only over city some world would where later "
    "up such used many can state about national out known university united then made team "
    "film season series river album played early government north south war church became "
    "music species village county district population census family company football public "
    "party received released member since record served several career american british "
    "french german village railway station island century history museum building league"
)
WORDS = _WORD_TEXT.split()


def synthetic_passages(n: int, seed: int = 0) -> list[str]:
    """DPR-like passages: 100 words, one in five a shorter article end (20-99 words)."""
    rng = random.Random(seed)
    passages = []
    for _ in range(n):
        length = 100 if rng.random() < 0.8 else rng.randint(20, 99)
        words = [rng.choice(WORDS) for _ in range(length)]
        words[0] = words[0].capitalize()
        passages.append(" ".join(words) + ".")
    return passages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="packaged:all-MiniLM-L6-v2",
                        help="model directory, hub name or packaged:<name>")
    parser.add_argument("--passages", type=Path, help="psgs_w100.tsv (default: synthetic)")
    parser.add_argument("--n", type=int, default=256, help="number of passages")
    parser.add_argument("--batch-size", type=int, default=32,
                        help="passages per batch, for every way of encoding (default: %(default)s)")
    parser.add_argument("--max-length", type=int, default=256,
                        help="tokens per passage: longer ones are truncated, and the naive loop "
                        "pads every batch to it (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=2, help="timed repetitions (best kept)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    args = parser.parse_args()

    import numpy as np
    import torch

    import tasks  # noqa: F401  (offline environment)
    from tasks.retrieval.encoders import (
        encode_texts,
        load_shared_model,
        resolve_device,
        resolve_model_path,
    )

    if args.passages:
        from itertools import islice

        from tasks.io.passages import iter_passages

        texts = [p.text for p in islice(iter_passages(args.passages), args.n)]
    else:
        texts = synthetic_passages(args.n)
    device = resolve_device(args.device)
    model_dir = resolve_model_path(args.model)
    model, tokenizer = load_shared_model(model_dir)
    model.to(device)
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_dir), device=str(device))
    st.max_seq_length = args.max_length

    def ours():
        return encode_texts(model, tokenizer, texts, batch_size=args.batch_size,
                            max_length=args.max_length, pooling="mean", device=device,
                            normalize=True)

    def sentence_transformers():
        return st.encode(texts, batch_size=args.batch_size, convert_to_numpy=True)

    def naive():
        out = []
        with torch.no_grad():
            for start in range(0, len(texts), args.batch_size):
                enc = tokenizer(texts[start:start + args.batch_size], padding="max_length",
                                truncation=True, max_length=args.max_length,
                                return_tensors="pt").to(device)
                hidden = model(input_ids=enc["input_ids"],
                               attention_mask=enc["attention_mask"]).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy())
        return np.concatenate(out)

    from tasks.retrieval.encoding import _batches, _pool

    ready = [(rows, ids.to(device), mask.to(device)) for rows, ids, mask in _batches(
        tokenizer, texts, None, args.batch_size, args.max_length, sort_by_length=True)]

    def compute_only():
        out = np.empty((len(texts), model.config.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for rows, ids, mask in ready:
                pooled = torch.nn.functional.normalize(_pool(model, ids, mask, "mean"), dim=-1)
                out[rows] = pooled.cpu().numpy()
        return out

    runners = {"ours": ours, "sentence-transformers": sentence_transformers, "naive": naive,
               "compute only": compute_only}
    warm = texts[:args.batch_size]  # warm-up (allocators, lazy initialisation)
    encode_texts(model, tokenizer, warm, batch_size=args.batch_size,
                 max_length=args.max_length, device=device, normalize=True)
    st.encode(warm, batch_size=args.batch_size)

    best: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.repeats):
        for name, fn in runners.items():
            start = time.perf_counter()
            vectors[name] = fn()
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
    same_st = np.allclose(vectors["ours"], vectors["sentence-transformers"], atol=1e-4)
    same_naive = np.allclose(vectors["ours"], vectors["naive"], atol=1e-4)
    lengths = [len(ids) for ids in tokenizer(texts, truncation=True,
                                             max_length=args.max_length)["input_ids"]]
    rate = {name: len(texts) / seconds for name, seconds in best.items()}
    print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, torch "
          f"{torch.__version__} with {torch.get_num_threads()} threads, device {device}")
    print(f"model: {args.model} ({sum(p.numel() for p in model.parameters()) / 1e6:.1f}M "
          f"params); {len(texts)} passages, tokens/passage mean {np.mean(lengths):.0f} "
          f"(min {min(lengths)}, max {max(lengths)}); batch {args.batch_size}, max length "
          f"{args.max_length}; best of {args.repeats}")
    for name in runners:
        print(f"{name:>22}: {rate[name]:7.1f} passages/s  ({best[name]:.2f} s)")
    print(f"ratio ours/sentence-transformers: {rate['ours'] / rate['sentence-transformers']:.3f}"
          f" (target >= 1.0); same vectors: {same_st}")
    print(f"ratio ours/naive padded loop:     {rate['ours'] / rate['naive']:.3f} "
          f"(target >= 1.3); same vectors: {same_naive}")
    same_compute = np.array_equal(vectors["ours"], vectors["compute only"])
    print(f"ratio ours/compute only:          {rate['ours'] / rate['compute only']:.3f} "
          f"(target >= 0.65 on a GPU); same vectors: {same_compute}")


if __name__ == "__main__":
    main()
