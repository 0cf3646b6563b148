"""Before vs after augmentation over reader training seeds (not in Gan & Ng, 2019).

One re-training compares two single draws of the reader's training: the paired bootstrap of
:mod:`tasks.reading.augmentation_tables` resamples the questions, not the training. Here the
reader before augmentation and each re-trained one are trained once per seed (same data, same
settings), every pair is scored (official SQuAD v1.1 EM/F1), and each gain ``after - before``
is summarised over the seeds: mean, sample standard deviation and a Student-t interval for the
mean gain over training draws (``confidence``; none with one seed). For each paraphrased test
set (``<set>_orig`` / ``<set>_para``) the same is done for the paraphrase drop ``orig - para``
of the reader before and after augmentation (Gan & Ng's Tables 1-2 over training draws) and
for ``para gain - orig gain`` (their finding: augmentation lifts the paraphrased questions more
than their originals).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.io.squad import read_predictions
from tasks.reading.scoring import read_squad_v11, score_predictions

METRICS = ("exact_match", "f1")
#: One seed's prediction files: ``{"before": {file: path}, "after": {kind: {file: path}}}``.
SeedRun = Mapping[str, Mapping]


def seed_summary(values: Sequence[float], confidence: float = 0.95) -> dict:
    """Mean, sample sd and Student-t interval of per-seed ``values`` (points, 2 decimals),
    with how many are above and below 0. With one value sd and the interval are None."""
    from scipy import stats

    n = len(values)
    if n == 0:
        raise ValueError("no seed values to summarise")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"need 0 < confidence < 1, got {confidence}")
    mean = math.fsum(values) / n
    out: dict = {"seeds": n, "mean": round(mean, 2), "sd": None, "ci_low": None,
                 "ci_high": None, "significant": False,
                 "above_zero": sum(v > 0 for v in values),
                 "below_zero": sum(v < 0 for v in values)}
    if n > 1:
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
        half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
        low, high = mean - half, mean + half
        out.update(sd=round(sd, 2), ci_low=round(low, 2), ci_high=round(high, 2),
                   significant=bool(low > 0 or high < 0))
    return out


def _scores(data, predictions_path: Path) -> dict[str, float]:
    report = score_predictions(data, read_predictions(predictions_path))
    return {"exact_match": report.exact_match, "f1": report.f1}


def compare_over_seeds(runs: Mapping[int, SeedRun], data_files: Mapping[str, Path],
                       confidence: float = 0.95) -> dict:
    """``runs[seed]`` = that seed's before and after prediction files of every test file
    ``data_files[name]`` -> per kind and file: per-seed EM/F1 before and after, the gains and
    their summary over seeds; per paraphrased set: ``para gain - orig gain`` likewise."""
    if not runs:
        raise ValueError("no seed runs to compare")
    seeds = list(runs)
    kinds = list(next(iter(runs.values()))["after"])
    data = {name: read_squad_v11(path) for name, path in data_files.items()}
    out: dict = {}
    for kind in kinds:
        sets, gains = {}, {}
        for name, questions in data.items():
            if not questions:
                sets[name] = {"questions": 0}
                continue
            per_seed = {}
            for seed, run in runs.items():
                b = _scores(questions, run["before"][name])
                a = _scores(questions, run["after"][kind][name])
                per_seed[seed] = {"before": b, "after": a,
                                  **{f"{m}_gain": a[m] - b[m] for m in METRICS}}
            gains[name] = per_seed
            sets[name] = {"questions": len(questions), "per_seed": {
                str(seed): {side: {m: round(v[side][m], 2) for m in METRICS}
                            for side in ("before", "after")}
                | {f"{m}_gain": round(v[f"{m}_gain"], 2) for m in METRICS}
                for seed, v in per_seed.items()}}
            for m in METRICS:
                for side in ("before", "after"):
                    sets[name][f"{side}_{m}"] = seed_summary(
                        [v[side][m] for v in per_seed.values()], confidence)
                sets[name][f"{m}_gain"] = seed_summary(
                    [v[f"{m}_gain"] for v in per_seed.values()], confidence)
        out[kind] = {"sets": sets, "paraphrase_minus_original": _pattern(gains, confidence),
                     "paraphrase_drop": _drops(gains, confidence)}
    return {"statistic": "EM/F1 in percent (official SQuAD v1.1) of the reader before and "
                         "after augmentation, each trained once per seed; gain = after - "
                         "before in points; mean, sample sd and Student-t interval over seeds",
            "seeds": seeds, "confidence": confidence, "kinds": out}


def _pairs(gains: Mapping[str, Mapping[int, Mapping]]) -> dict[str, tuple[Mapping, Mapping]]:
    """``{set: (orig per-seed scores, para per-seed scores)}`` of every set with both files."""
    out = {}
    for name in gains:
        stem = name.removesuffix("_orig")
        if stem != name and f"{stem}_para" in gains:
            out[stem] = (gains[name], gains[f"{stem}_para"])
    return out


def _drops(gains: Mapping[str, Mapping[int, Mapping]], confidence: float) -> dict:
    """Gan & Ng's Tables 1-2 over seeds: ``orig - para`` of the reader before and after
    augmentation, per seed and summarised, for every paraphrased set."""
    out: dict = {}
    for stem, (orig, para) in _pairs(gains).items():
        out[stem] = {}
        for side in ("before", "after"):
            drops = {seed: {m: orig[seed][side][m] - para[seed][side][m] for m in METRICS}
                     for seed in orig}
            out[stem][side] = {"per_seed": {str(s): {m: round(d[m], 2) for m in METRICS}
                                            for s, d in drops.items()},
                               **{m: seed_summary([d[m] for d in drops.values()], confidence)
                                  for m in METRICS}}
    return out


def _pattern(gains: Mapping[str, Mapping[int, Mapping]], confidence: float) -> dict:
    """``<set>_para`` gain minus ``<set>_orig`` gain per seed, for every set with both."""
    out = {}
    for stem, (orig, para) in _pairs(gains).items():
        diffs = {seed: {m: para[seed][f"{m}_gain"] - orig[seed][f"{m}_gain"] for m in METRICS}
                 for seed in orig}
        out[stem] = {"per_seed": {str(s): {m: round(d[m], 2) for m in METRICS}
                                  for s, d in diffs.items()},
                     **{m: seed_summary([d[m] for d in diffs.values()], confidence)
                        for m in METRICS}}
    return out
