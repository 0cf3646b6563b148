"""Does the reader lose more where the paraphrase drops a word of the answer's sentence? One
paraphrased set, readers trained with several seeds, the EM drop per edit group over the seeds.

The readers flow scores one training draw (``readers.model.seed``). Train it once per seed and
keep each draw's predictions, then pass the set and the prediction directories (each holding
``<set>_orig.json`` and ``<set>_para.json``, as ``results/readers/<reader>/``). Example, from
the root of a demo run::

    for s in 42 1 2 3 4; do
      qastress stage readers --set readers.model.seed=$s
      cp -r results/readers/all-MiniLM-L6-v2 /tmp/seeds/s$s
    done
    python bench/reader_edit_groups_over_seeds.py data/paraphrasing-squad dev \\
        /tmp/seeds/s42 /tmp/seeds/s1 /tmp/seeds/s2 /tmp/seeds/s3 /tmp/seeds/s4

Prints, per group (:mod:`tasks.reading.edit_groups`), the drop of each seed, the mean with its
Student-t interval over the draws, and the two-level bootstrap interval over seeds and pairs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", type=Path, help="directory of the paraphrased sets")
    parser.add_argument("name", help="the set's name (dev, adv, ...)")
    parser.add_argument("predictions", type=Path, nargs="+",
                        help="one directory of predictions per reader training seed")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="confidence level of the t and the two-level bootstrap intervals "
                        "(default: %(default)s)")
    parser.add_argument("--n-bootstrap", type=int, default=1000,
                        help="resamples of the two-level bootstrap over seeds and pairs (default: "
                        "%(default)s)")
    args = parser.parse_args()

    from tasks.evaluation.over_seeds import SeedInterval
    from tasks.reading.edit_groups import edit_groups_over_seeds
    from tasks.reporting.reader_tables import EDIT_GROUP_LABELS

    runs = {i: (d / f"{args.name}_orig.json", d / f"{args.name}_para.json")
            for i, d in enumerate(args.predictions)}
    result = edit_groups_over_seeds(args.sets / f"{args.name}_orig.json",
                                    args.sets / f"{args.name}_para.json", runs,
                                    SeedInterval(args.confidence, args.n_bootstrap))
    level = round(100 * args.confidence)
    print(f"{args.name}: {result['pairs']} pairs, {len(runs)} reader training seeds "
          f"({', '.join(str(d) for d in args.predictions)}); EM drop = orig - para in points\n")
    print(f"| the paraphrase | pairs | EM drop per seed | mean (sd) | t {level} % | "
          f"two-level {level} % |")
    print("|---|---:|---|---|---|---|")
    for name, g in result["groups"].items():
        s = g["summary"]
        if s is None:
            print(f"| {EDIT_GROUP_LABELS.get(name, name)} | 0 | - | - | - | - |")
            continue
        t = f"[{s['ci_low']:+.2f}, {s['ci_high']:+.2f}]" if s["sd"] is not None else "-"
        sd = f" ({s['sd']:.2f})" if s["sd"] is not None else ""
        print(f"| {EDIT_GROUP_LABELS.get(name, name)} | {g['pairs']} | "
              f"{' '.join(f'{v:+.2f}' for v in g['per_seed'])} | {s['mean']:+.2f}{sd} | {t} | "
              f"[{s['two_level_low']:+.2f}, {s['two_level_high']:+.2f}] |")


if __name__ == "__main__":
    main()
