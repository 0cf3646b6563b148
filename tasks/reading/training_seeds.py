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

The t-interval covers the training draws only. Each difference is also a ``seeds x questions``
matrix of per-question differences (same questions under every seed), so a two-level bootstrap
that resamples seeds and questions independently
(:func:`tasks.evaluation.over_seeds.summarise_over_seeds`) gives an interval that covers
both (``two_level_low`` / ``two_level_high`` in every gain, drop and pattern summary).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tasks.evaluation.over_seeds import SeedInterval, seed_summary, summarise_over_seeds
from tasks.io.errors import DataFormatError
from tasks.io.squad import SquadDataset
from tasks.io.squad_predictions import read_predictions
from tasks.reading.edit_groups import edit_groups_over_seeds
from tasks.reading.scoring import question_scores, read_squad_v11, score_predictions

__all__ = ["compare_over_seeds", "seed_summary"]

METRICS = ("exact_match", "f1")
#: One seed's prediction files: ``{"before": {file: path}, "after": {kind: {file: path}}}``.
SeedRun = Mapping[str, Mapping]


@dataclass(frozen=True)
class _Scored:
    """One prediction file scored on one test file: official totals and per-question points."""

    totals: dict[str, float]
    per_question: dict[str, np.ndarray]


def _score(questions: SquadDataset, predictions_path: Path) -> _Scored:
    predictions = read_predictions(predictions_path)
    report = score_predictions(questions, predictions)
    em, f1 = np.asarray(question_scores(questions, predictions), dtype=np.float64).T * 100.0
    return _Scored({"exact_match": report.exact_match, "f1": report.f1},
                   {"exact_match": em, "f1": f1})


def compare_over_seeds(runs: Mapping[int, SeedRun], data_files: Mapping[str, Path],
                       confidence: float = 0.95, n_bootstrap: int = 1000,
                       bootstrap_seed: int = 0) -> dict:
    """``runs[seed]`` = that seed's before and after prediction files of every test file
    ``data_files[name]`` -> per kind and file: per-seed EM/F1 before and after, the gains and
    their summary over seeds (t-interval and two-level bootstrap with ``n_bootstrap``
    resamples); per paraphrased set: the drop ``orig - para`` before and after (also per edit
    group, :func:`~tasks.reading.edit_groups.edit_groups_over_seeds`) and ``para gain - orig
    gain`` likewise. The readers before augmentation are scored once."""
    if not runs:
        raise ValueError("no seed runs to compare")
    seeds = list(runs)
    kinds = list(next(iter(runs.values()))["after"])
    interval = SeedInterval(confidence, n_bootstrap, bootstrap_seed)
    data = {name: read_squad_v11(path) for name, path in data_files.items()}
    before = {seed: {name: _score(questions, run["before"][name])
                     for name, questions in data.items() if questions}
              for seed, run in runs.items()}
    before_by_edit: dict[str, dict] = {}  # the readers before augmentation: one per seed

    def by_edit(stem: str, side: str, kind: str) -> dict:
        files = {seed: _side_files(run, side, kind, stem) for seed, run in runs.items()}
        return edit_groups_over_seeds(data_files[f"{stem}_orig"], data_files[f"{stem}_para"],
                                      files, interval)

    out: dict = {}
    for kind in kinds:
        sets, scored = {}, {}
        for name, questions in data.items():
            if not questions:
                sets[name] = {"questions": 0}
                continue
            scored[name] = {seed: {"before": before[seed][name],
                                   "after": _score(questions, run["after"][kind][name])}
                            for seed, run in runs.items()}
            sets[name] = _gains(scored[name], len(questions), interval)
        pairs = _pairs(scored, data_files)
        for stem in pairs:
            if stem not in before_by_edit:
                before_by_edit[stem] = by_edit(stem, "before", kind)
        out[kind] = {"sets": sets, "paraphrase_minus_original": _pattern(pairs, interval),
                     "paraphrase_drop": _drops(pairs, interval),
                     "paraphrase_drop_by_edit": {
                         stem: {"before": before_by_edit[stem],
                                "after": by_edit(stem, "after", kind)} for stem in pairs}}
    return {"statistic": "EM/F1 in percent (official SQuAD v1.1) of the reader before and "
                         "after augmentation, each trained once per seed; gain = after - "
                         "before in points; mean, sample sd and Student-t interval over seeds; "
                         "two-level interval: bootstrap over seeds and questions (crossed)",
            "seeds": seeds, "confidence": confidence, "n_bootstrap": n_bootstrap,
            "bootstrap_seed": bootstrap_seed, "kinds": out}


#: ``{seed: {"before": _Scored, "after": _Scored}}`` of one test file and kind.
PerSeed = Mapping[int, Mapping[str, _Scored]]


def _gains(per_seed: PerSeed, n_questions: int, interval: SeedInterval) -> dict:
    """One test file: per-seed scores and gains, their summaries over seeds."""
    block: dict = {"questions": n_questions, "per_seed": {
        str(seed): {side: {m: round(v[side].totals[m], 2) for m in METRICS}
                    for side in ("before", "after")}
        | {f"{m}_gain": round(v["after"].totals[m] - v["before"].totals[m], 2) for m in METRICS}
        for seed, v in per_seed.items()}}
    for m in METRICS:
        for side in ("before", "after"):
            block[f"{side}_{m}"] = seed_summary([v[side].totals[m] for v in per_seed.values()],
                                                interval.confidence)
        block[f"{m}_gain"] = summarise_over_seeds(
            [v["after"].totals[m] - v["before"].totals[m] for v in per_seed.values()],
            _gain_matrix(per_seed, m), interval)
    return block


#: ``{set: (orig per-seed scores, para per-seed scores)}``, questions paired by position.
Pairs = Mapping[str, tuple[PerSeed, PerSeed]]


def _pairs(scored: Mapping[str, PerSeed], data_files: Mapping[str, Path]) -> Pairs:
    """Every set with both files; its orig and para files pair their questions by position,
    so they must hold as many (a :class:`DataFormatError` naming the para file otherwise)."""
    out = {}
    for name in scored:
        stem = name.removesuffix("_orig")
        if stem == name or f"{stem}_para" not in scored:
            continue
        orig, para = scored[name], scored[f"{stem}_para"]
        o, p = (len(next(iter(x.values()))["before"].per_question["exact_match"])
                for x in (orig, para))
        if o != p:
            raise DataFormatError(data_files[f"{stem}_para"], "questions", f"{o} questions, "
                                  f"one per question of {stem}_orig (paired by position)",
                                  f"{p} questions")
        out[stem] = (orig, para)
    return out


def _side_files(run: SeedRun, side: str, kind: str, stem: str) -> tuple[Path, Path]:
    """One seed's orig and para prediction files of set ``stem``, before or after ``kind``."""
    files = run["before"] if side == "before" else run["after"][kind]
    return files[f"{stem}_orig"], files[f"{stem}_para"]


def _drop_matrix(orig: PerSeed, para: PerSeed, side: str, metric: str) -> np.ndarray:
    """``seeds x questions``: orig - para per question pair of one reader side, in points."""
    return np.stack([orig[s][side].per_question[metric] - para[s][side].per_question[metric]
                     for s in orig])


def _drops(pairs: Pairs, interval: SeedInterval) -> dict:
    """Gan & Ng's Tables 1-2 over seeds: ``orig - para`` of the reader before and after
    augmentation, per seed and summarised, for every paraphrased set."""
    out: dict = {}
    for stem, (orig, para) in pairs.items():
        out[stem] = {}
        for side in ("before", "after"):
            drops = {seed: {m: orig[seed][side].totals[m] - para[seed][side].totals[m]
                            for m in METRICS} for seed in orig}
            out[stem][side] = {"per_seed": {str(s): {m: round(d[m], 2) for m in METRICS}
                                            for s, d in drops.items()},
                               **{m: summarise_over_seeds(
                                   [d[m] for d in drops.values()],
                                   _drop_matrix(orig, para, side, m), interval)
                                  for m in METRICS}}
    return out


def _gain_matrix(per_seed: PerSeed, metric: str) -> np.ndarray:
    """``seeds x questions``: after - before per question, in points."""
    return np.stack([v["after"].per_question[metric] - v["before"].per_question[metric]
                     for v in per_seed.values()])


def _pattern(pairs: Pairs, interval: SeedInterval) -> dict:
    """``<set>_para`` gain minus ``<set>_orig`` gain per seed, for every set with both."""
    out = {}
    for stem, (orig, para) in pairs.items():
        diffs = {seed: {m: (para[seed]["after"].totals[m] - para[seed]["before"].totals[m])
                        - (orig[seed]["after"].totals[m] - orig[seed]["before"].totals[m])
                        for m in METRICS} for seed in orig}
        out[stem] = {"per_seed": {str(s): {m: round(d[m], 2) for m in METRICS}
                                  for s, d in diffs.items()},
                     **{m: summarise_over_seeds([d[m] for d in diffs.values()],
                                    _gain_matrix(para, m) - _gain_matrix(orig, m), interval)
                        for m in METRICS}}
    return out
