"""Beyond the paper: a paraphrased set's orig vs para scores by what each paraphrase changes.

Gan & Ng (2019) explain the readers' drop by lexical overlap: a reader leans on the words a
question shares with the sentence that holds the answer. Each pair of a set is sorted into one
of :data:`~tasks.paraphrase.edits.EDIT_GROUPS` (:func:`~tasks.paraphrase.edits.edit_group`):
the paraphrase drops a content word of the original found in the answer's sentence; it adds a
content word that only another sentence of the context holds (the adversarial cue); it changes
other content words; it changes none. Per group and reader: EM/F1 on orig and para and the drop
with its paired bootstrap CI over the group's pairs. Works on any set whose orig and para files
align by position (the flow's own sets and Gan & Ng's released ones).

One reader training is one draw: :func:`edit_groups_over_seeds` scores the same set with the
predictions of readers trained with several seeds and summarises each group's EM drop over the
seeds (mean, sd, Student-t interval over the draws, and the two-level bootstrap over seeds and
pairs of :mod:`tasks.evaluation.over_seeds`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from tasks.evaluation.over_seeds import SeedInterval, summarise_over_seeds
from tasks.io.squad import SquadDataset
from tasks.io.squad_predictions import read_predictions
from tasks.paraphrase.edits import EDIT_GROUPS, dataset_edits, edit_group
from tasks.reading.robustness import subset_drops
from tasks.reading.scoring import question_scores, read_squad_v11


def edit_group_scores(orig: SquadDataset, para: SquadDataset, groups: Sequence[str],
                      predictions: Mapping[str, tuple[Mapping[str, str], Mapping[str, str]]],
                      *, n_bootstrap: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> dict:
    """Per group of :data:`EDIT_GROUPS`: its pairs and each reader's orig/para EM/F1 and drop
    (``None`` for a reader when the group is empty). ``groups[i]`` is pair ``i``'s group;
    ``predictions[reader] = (orig predictions, para predictions)``."""
    if not len(orig) == len(para) == len(groups):
        raise ValueError(f"{len(orig)} original, {len(para)} paraphrased questions and "
                         f"{len(groups)} groups: they must align by position")
    unknown = sorted(set(groups) - set(EDIT_GROUPS))
    if unknown:
        raise ValueError(f"unknown edit groups {unknown} (known: {list(EDIT_GROUPS)})")
    per_reader = {r: (question_scores(orig, o), question_scores(para, p))
                  for r, (o, p) in predictions.items()}
    out: dict[str, dict] = {}
    for group in EDIT_GROUPS:
        rows = [i for i, g in enumerate(groups) if g == group]
        out[group] = {"pairs": len(rows), "readers": {
            reader: subset_drops(o, p, rows, n_bootstrap, seed, confidence) if rows else None
            for reader, (o, p) in per_reader.items()}}
    return {"pairs": len(groups), "groups": out}


def score_edit_groups(predictions: Mapping[str, tuple[Path, Path]], orig_file: Path,
                      para_file: Path, *, n_bootstrap: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> dict:
    """:func:`edit_group_scores` from files: ``{reader: (orig, para) predictions}`` of the set
    ``orig_file`` / ``para_file`` (aligned by position; a misaligned pair is a
    :class:`~tasks.io.errors.DataFormatError` naming it)."""
    orig, para = read_squad_v11(orig_file), read_squad_v11(para_file)
    groups = [edit_group(e) for e in dataset_edits(orig, para)]
    return edit_group_scores(
        orig, para, groups,
        {r: (read_predictions(o), read_predictions(p)) for r, (o, p) in predictions.items()},
        n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)


def edit_groups_over_seeds(orig_file: Path, para_file: Path,
                           predictions: Mapping[int, tuple[Path, Path]],
                           interval: SeedInterval = SeedInterval()) -> dict:
    """The EM drop ``orig - para`` (points) of the whole set and of each edit group, per
    reader training seed (``predictions[seed] = (orig, para)`` prediction files) and summarised
    over the seeds (:func:`~tasks.evaluation.over_seeds.summarise_over_seeds`; the two-level
    interval resamples seeds and the group's pairs). An empty group has no summary."""
    if not predictions:
        raise ValueError("no seeds' predictions to summarise")
    orig, para = read_squad_v11(orig_file), read_squad_v11(para_file)
    groups = np.array([edit_group(e) for e in dataset_edits(orig, para)])
    drops = np.array([
        [100.0 * (o[0] - p[0]) for o, p in zip(
            question_scores(orig, read_predictions(o_path)),
            question_scores(para, read_predictions(p_path)), strict=True)]
        for o_path, p_path in predictions.values()])  # seeds x pairs
    out: dict = {"seeds": list(predictions), "pairs": len(groups), "groups": {}}
    for name, mask in [("all", np.ones(len(groups), dtype=bool)),
                       *((g, groups == g) for g in EDIT_GROUPS)]:
        matrix = drops[:, mask]
        per_seed = [float(v) for v in matrix.mean(axis=1)] if mask.any() else []
        out["groups"][name] = {
            "pairs": int(mask.sum()), "per_seed": [round(v, 2) for v in per_seed],
            "summary": summarise_over_seeds(per_seed, matrix, interval) if per_seed else None}
    return out
