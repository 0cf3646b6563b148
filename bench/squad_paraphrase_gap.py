"""Does the demo reader lose EM/F1 on grammar-paraphrased questions? (Gan & Ng's mechanism)

Writes the demo world's SQuAD train/dev sets (only those: seconds), rephrases every dev question
by the world's question grammar (:func:`tasks.demo.question_grammar.phrasings`) — ``para_rand``:
another phrasing of the same key drawn at random, ``para_min``: the phrasing sharing the fewest
words with the original — trains the profile's reader (``readers.model``) on the train set and
prints EM/F1 of the three dev variants and the training CPU seconds as one JSON line. The real
pipeline's paraphrases come from the trained paraphraser and the raters; this is the quick,
direct check. Example::

    nice -n 10 python bench/squad_paraphrase_gap.py --out /tmp/gap --n-train 600
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (all threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def paraphrase_dev(dev: dict, seed: int) -> tuple[dict, dict, int]:
    """``(para_rand, para_min, unparsed)`` copies of ``dev`` with questions rephrased."""
    from tasks.demo.question_grammar import phrasings, question_tokens

    languages = phrasings()
    patterns = [(re.compile("^" + re.escape(p).replace(re.escape("{X}"), "(.+)") + "$"), key)
                for key, items in languages.items() for p in items]
    rng = random.Random(seed)
    para_rand, para_min = copy.deepcopy(dev), copy.deepcopy(dev)

    def qas(raw: dict) -> list[dict]:
        return [qa for a in raw["data"] for p in a["paragraphs"] for qa in p["qas"]]

    def words(text: str) -> set[str]:
        return {t for t in question_tokens(text) if t.isalpha()}

    unparsed = 0
    for qa, rand_qa, min_qa in zip(qas(dev), qas(para_rand), qas(para_min), strict=True):
        hit = next(((m, key) for rx, key in patterns if (m := rx.match(qa["question"]))), None)
        if hit is None:
            unparsed += 1
            continue
        match, key = hit
        own = tuple(question_tokens(qa["question"]))
        options = [p.replace("{X}", match.group(1)) for p in languages[key]]
        options = [p for p in options if tuple(question_tokens(p)) != own]
        if not options:
            unparsed += 1
            continue
        rand_qa["question"] = rng.choice(options)
        original = words(qa["question"])
        min_qa["question"] = min(options, key=lambda p: (
            len(words(p) & original) / max(1, len(words(p))), p))
    return para_rand, para_min, unparsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="work directory")
    parser.add_argument("--profile", default="demo",
                        help="params.yaml profile: the demo world and the reader (default: "
                        "%(default)s)")
    parser.add_argument("--n-train", type=int, default=None, help="default: the profile's")
    parser.add_argument("--seed", type=int, default=0, help="paraphrase draws")
    parser.add_argument("--set", "-S", action="append", default=[], metavar="KEY=VALUE",
                        help="override a parameter as `qastress run --set` does, e.g. "
                        "readers.model.batch_size=8 (repeatable)")
    args = parser.parse_args()

    from flows.cli import parse_overrides
    from tasks.demo.kb import build_world
    from tasks.demo.rng import stream
    from tasks.demo.squad import build_squad_sets
    from tasks.io.squad import write_squad
    from tasks.params_loading import load_params
    from tasks.reading.stages import (
        predict_squad_files,
        score_squad_files,
        train_reader_on_squad,
    )

    params = load_params(Path(__file__).resolve().parents[1] / "params.yaml",
                         profile=args.profile,
                         overrides=parse_overrides(args.set))
    world_config = params.demo_world
    n_train = args.n_train or world_config.n_squad_train
    args.out.mkdir(parents=True, exist_ok=True)
    world = build_world(world_config)
    train, dev = build_squad_sets(world, n_train, world_config.n_squad_dev,
                                  world_config.passage_words,
                                  stream(world_config.seed, "squad"), world_config.seed)
    para_rand, para_min, unparsed = paraphrase_dev(dev, args.seed)
    files = {name: write_squad(args.out / f"{name}.json", raw) for name, raw in
             (("train", train), ("dev", dev), ("dev_para_rand", para_rand),
              ("dev_para_min", para_min))}
    start, wall = cpu_seconds(), time.time()
    train_reader_on_squad(files["train"], args.out / "reader", params.readers.model)
    train_cpu, train_wall = cpu_seconds() - start, time.time() - wall
    evaluated = {k: v for k, v in files.items() if k != "train"}
    predictions = predict_squad_files(args.out / "reader", evaluated, args.out / "predictions",
                                      device="cpu")
    scores = {name: score_squad_files({"reader": predictions[name]}, path)["reader"]
              for name, path in evaluated.items()}
    print(json.dumps({
        "n_train": n_train, "overrides": args.set, "n_dev": world_config.n_squad_dev,
        "not_paraphrased": unparsed,
        "train_cpu_s": round(train_cpu, 1), "train_wall_s": round(train_wall, 1),
        **{f"{name}_{m}": round(scores[name][key], 2) for name in evaluated
           for m, key in (("em", "exact_match"), ("f1", "f1"))}}))


if __name__ == "__main__":
    main()
