"""CPU cost and quality of the demo reader for given reader settings (process CPU seconds).

Trains ``readers.model`` of a profile (with ``--set model.<key>=<value>`` overrides) on the demo
world's SQuAD training file, predicts the demo SQuAD dev file (and, with ``--released``, the
released paraphrased sets), and prints, as one JSON line per run: CPU seconds of training and
of each prediction (``resource.getrusage(RUSAGE_SELF)``: every thread of this process), the
context token lengths, and dev EM/F1 (official v1.1 script). Example::

    python bench/reader_demo_cost.py --raw data/raw --set model.max_length=192 \
        --set model.max_epochs=1 --released ../shared/data/paraphrasing-squad
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (all threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def token_lengths(path: Path, tokenizer) -> dict[str, float]:
    """Context and question+context token counts of a SQuAD file (mean, p95, max)."""
    import numpy as np

    from tasks.io.squad import read_squad

    questions = list(read_squad(path).questions())
    ctx = np.array([len(tokenizer(q.context)["input_ids"]) for q in questions])
    both = ctx + np.array([len(tokenizer(q.question)["input_ids"]) for q in questions])
    return {"questions": len(questions), "context_mean": round(float(ctx.mean()), 1),
            "context_p95": float(np.percentile(ctx, 95)), "context_max": int(ctx.max()),
            "with_question_max": int(both.max())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", type=Path, required=True, help="the demo world's data/raw")
    parser.add_argument("--profile", default="demo",
                        help="params.yaml profile whose readers.model is trained (default: "
                        "%(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="model.KEY=VALUE",
                        help="readers.model overrides (values parsed as YAML)")
    parser.add_argument("--released", type=Path, default=None,
                        help="directory of the released {dev,adv}_{orig,para}.json")
    parser.add_argument("--released-files", nargs="+",
                        default=["dev_orig", "dev_para", "adv_orig", "adv_para"],
                        help="which released files to predict")
    parser.add_argument("--lengths", action="store_true", help="also print token lengths")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads of training and prediction (it sets "
                        "readers.model.cpu_threads; default: %(default)s)")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)

    from bench._harness import parse_sets
    from tasks.params_loading import load_params
    from tasks.reading.scoring import score_prediction_file
    from tasks.reading.stages import predict_squad_files, train_reader_on_squad

    overrides = {f"readers.{k}": v for k, v in parse_sets(args.set).items()}
    overrides["readers.model.cpu_threads"] = args.threads
    params = load_params(Path(__file__).resolve().parents[1] / "params.yaml",
                         profile=args.profile, overrides=overrides)
    cfg = params.readers.model
    train, dev = args.raw / params.sources.squad_train, args.raw / params.sources.squad_dev
    out: dict = {"settings": cfg.model_dump(mode="json", include={
        "max_length", "doc_stride", "max_query_length", "batch_size", "max_epochs",
        "max_steps", "lr", "lr_schedule", "min_lr_ratio", "hidden_dropout", "cpu_threads",
        "predict_batch_size"}),
        "threads": args.threads}
    if args.lengths:
        from transformers import AutoTokenizer

        from tasks.reading.stages import resolve_reader_model

        tok = AutoTokenizer.from_pretrained(str(resolve_reader_model(cfg.model)))
        out["lengths"] = {"train": token_lengths(train, tok), "dev": token_lengths(dev, tok)}
    with tempfile.TemporaryDirectory(prefix="reader-cost-") as tmp:
        model_dir = Path(tmp) / "reader"
        c0, t0 = cpu_seconds(), time.perf_counter()
        train_reader_on_squad(train, model_dir, cfg)
        out["train_cpu_s"] = round(cpu_seconds() - c0, 1)
        out["train_wall_s"] = round(time.perf_counter() - t0, 1)
        state = json.loads((model_dir / "trainer_state.json").read_text())
        out["train_steps"] = state.get("global_step")
        print(json.dumps({"train_cpu_s": out["train_cpu_s"], "steps": out["train_steps"]}),
              flush=True)
        inputs = {"squad_dev": dev}
        if args.released:
            inputs.update({f"released-{n}": args.released / f"{n}.json"
                           for n in args.released_files})
        out["predict_cpu_s"] = {}
        for name, path in inputs.items():
            c0 = cpu_seconds()
            files = predict_squad_files(model_dir, {name: path}, Path(tmp) / "pred",
                                        batch_size=cfg.predict_batch_size, device="cpu",
                                        cpu_threads=cfg.cpu_threads)
            out["predict_cpu_s"][name] = round(cpu_seconds() - c0, 1)
            report = score_prediction_file(path, files[name])
            out.setdefault("scores", {})[name] = {"em": round(report.exact_match, 2),
                                                  "f1": round(report.f1, 2)}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
