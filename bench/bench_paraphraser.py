"""Benchmark of paraphraser generation: our ``Paraphraser.generate`` vs ``transformers``.

Builds, with random weights (no training; the speed of decoding does not depend on them):

* ours: the pointer-generator transformer of ``models/paraphraser`` (copy attention, p_gen,
  extended vocabulary, per-layer key/value cache, batched beam search);
* plain: a ``BartForConditionalGeneration`` of the same size (d_model, layers, heads, feed-forward
  width, vocabulary = SentencePiece pieces + our 5 specials) run with ``model.generate``.

Both decode the SAME encoded inputs (``<suggestion> <sep> <question>`` ids from our tokenizer, a
SentencePiece model trained here on synthetic questions), in the same batches, with the same beam
size, and are forced to generate exactly ``--max-len`` tokens (``min_len = max_len``; with random
weights ``</s>`` would otherwise end hypotheses at random points), so both do the same number of
decoder steps. Prints questions/s for both, the ratio and the machine.

Timed runs alternate between the two, so changes in machine load hit both. Example:
``python bench/bench_paraphraser.py --questions 128 --beam 4 --max-len 32 --threads 1``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def make_questions(n: int, seed: int) -> tuple[list[tuple[str | None, str]], list[str]]:
    """Synthetic (suggestion, question) inputs and a corpus to train SentencePiece on."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ren", "tas", "vo", "gel", "an", "ber", "du", "ix", "or",
                 "sel", "tru", "pa", "quin", "ho", "ze", "bra", "fin"]
    lexicon = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
                      for _ in range(30_000)})
    heads = ["what is", "who was", "where did", "when was", "which", "how many", "why did"]
    fillers = ["the", "of", "a", "in", "and", "to", "for", "on"]

    def question() -> str:
        words = [rng.choice(lexicon) if rng.random() < 0.6 else rng.choice(fillers)
                 for _ in range(rng.randint(6, 16))]
        return f"{rng.choice(heads)} {' '.join(words)}?"

    corpus = [question() for _ in range(40_000)]
    inputs = []
    for _ in range(n):
        q = question()
        suggestion = None if rng.random() < 0.2 else " ".join(
            rng.choice(lexicon) for _ in range(rng.randint(1, 3)))
        inputs.append((suggestion, q))
    return inputs, corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=128, help="questions to paraphrase")
    parser.add_argument("--beam", type=int, default=4, help="beam size (both)")
    parser.add_argument("--max-len", type=int, default=32,
                        help="generated tokens per question (forced, both)")
    parser.add_argument("--batch-size", type=int, default=32, help="questions per batch (both)")
    parser.add_argument("--d-model", type=int, default=256,
                        help="model width, d_model (both; default: %(default)s)")
    parser.add_argument("--layers", type=int, default=3, help="encoder and decoder layers")
    parser.add_argument("--heads", type=int, default=4,
                        help="attention heads per layer (both; default: %(default)s)")
    parser.add_argument("--ff", type=int, default=1024, help="feed-forward width")
    parser.add_argument("--vocab", type=int, default=8000, help="SentencePiece vocabulary size")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs; the median is shown")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads (default: torch's default)")
    parser.add_argument("--device", default="cpu", help="torch device (cpu, cuda)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the synthetic questions and the random weights (default: "
                        "%(default)s)")
    args = parser.parse_args(argv)
    if min(args.questions, args.beam, args.max_len, args.batch_size, args.repeats) < 1:
        parser.error("--questions, --beam, --max-len, --batch-size, --repeats must be >= 1")

    import sentencepiece as spm
    import torch
    import transformers
    from transformers import BartConfig, BartForConditionalGeneration

    from models.paraphraser.checkpoint import Paraphraser, _model_config
    from models.paraphraser.config import ParaphraserConfig
    from models.paraphraser.data import pad_sources
    from models.paraphraser.network import PointerGeneratorTransformer
    from models.paraphraser.tokenizer import ParaphraseTokenizer

    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",) * 3
    print(f"machine: {platform.platform()} | {platform.machine()} | "
          f"{platform.processor() or 'unknown cpu'} | cpus={os.cpu_count()} | "
          f"torch {torch.__version__} threads={torch.get_num_threads()} | "
          f"transformers {transformers.__version__} | device={device} | "
          f"load average {' '.join(f'{x:.2f}' if isinstance(x, float) else x for x in load)}")
    if device.type == "cuda":
        print(f"gpu: {torch.cuda.get_device_name(device)}")

    t0 = time.perf_counter()
    inputs, corpus = make_questions(args.questions, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(corpus), model_prefix=f"{tmp}/bench", vocab_size=args.vocab,
            character_coverage=1.0, hard_vocab_limit=False, minloglevel=2, num_threads=2)
        tok = ParaphraseTokenizer(f"{tmp}/bench.model", max_len=64)
    cfg = ParaphraserConfig(d_model=args.d_model, heads=args.heads, layers=args.layers,
                            ff=args.ff, dropout=0.0, max_len=64)
    ours = Paraphraser(PointerGeneratorTransformer(_model_config(cfg, tok)), tok, device)
    bart = BartForConditionalGeneration(BartConfig(
        vocab_size=tok.vocab_size, d_model=args.d_model, encoder_layers=args.layers,
        decoder_layers=args.layers, encoder_attention_heads=args.heads,
        decoder_attention_heads=args.heads, encoder_ffn_dim=args.ff, decoder_ffn_dim=args.ff,
        max_position_embeddings=max(128, args.max_len + 8), dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0, activation_function="gelu", pad_token_id=tok.pad_id,
        bos_token_id=tok.bos_id, eos_token_id=tok.eos_id, decoder_start_token_id=tok.bos_id,
        forced_bos_token_id=None, forced_eos_token_id=None, scale_embedding=True,
    )).to(device).eval()
    n_ours = sum(p.numel() for p in ours.model.parameters())
    n_bart = sum(p.numel() for p in bart.parameters())
    print(f"setup: {args.questions} questions, vocab {tok.vocab_size} (SentencePiece "
          f"{tok.spm_vocab_size} + 5 specials), d_model {args.d_model}, {args.layers}+"
          f"{args.layers} layers, {args.heads} heads, ff {args.ff}; parameters ours "
          f"{n_ours / 1e6:.2f}M, BART {n_bart / 1e6:.2f}M; beam {args.beam}, {args.max_len} "
          f"tokens, batch {args.batch_size} ({time.perf_counter() - t0:.1f}s)")

    # the same batches for both: our encoding, sorted by length as generate() does
    encoded = [tok.encode_source(s, q) for s, q in inputs]
    order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i].input_ids), i))
    batches = []
    for start in range(0, len(order), args.batch_size):
        src_ids, _, src_mask, _ = pad_sources([encoded[i] for i in order[start:start +
                                                                          args.batch_size]],
                                              tok.pad_id)
        batches.append((src_ids.to(device), src_mask.long().to(device)))

    def run_ours() -> int:
        out = ours.generate(inputs, beam_size=args.beam, max_len=args.max_len,
                            min_len=args.max_len, batch_size=args.batch_size)
        return sum(len(tok.sp.encode(text)) > 0 for text in out)

    @torch.inference_mode()
    def run_plain() -> int:
        n = 0
        for src_ids, mask in batches:
            out = bart.generate(input_ids=src_ids, attention_mask=mask, num_beams=args.beam,
                                max_new_tokens=args.max_len, min_new_tokens=args.max_len,
                                do_sample=False, length_penalty=1.0, early_stopping=False,
                                num_return_sequences=1)
            n += out.shape[0]
        return n

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    systems = {"ours": run_ours, "transformers": run_plain}
    times: dict[str, list[float]] = {name: [] for name in systems}
    for fn in systems.values():
        fn()  # warm-up
    for _ in range(args.repeats):  # interleaved, so a change in machine load hits both
        for name, fn in systems.items():
            sync()
            t0 = time.perf_counter()
            produced = fn()
            sync()
            times[name].append(time.perf_counter() - t0)
            assert produced == args.questions, (name, produced)
    results = {name: statistics.median(values) for name, values in times.items()}
    for name, value in results.items():
        print(f"{name:>13}: {value:7.2f}s (median of {args.repeats}; runs "
              f"{', '.join(f'{t:.2f}' for t in times[name])})  "
              f"{args.questions / value:8.1f} questions/s")
    ratio = results["transformers"] / results["ours"]
    print(f"ratio ours / transformers (questions/s): {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
