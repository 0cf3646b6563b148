"""Beyond the paper: a paraphrased set's orig vs para scores by what each paraphrase changes.

Gan & Ng (2019) explain the readers' drop by lexical overlap: a reader leans on the words a
question shares with the sentence that holds the answer. Each pair of a set is sorted into one
of :data:`~tasks.paraphrase.edits.EDIT_GROUPS` (:func:`~tasks.paraphrase.edits.edit_group`):
the paraphrase drops a content word of the original found in the answer's sentence; it changes
other content words; it changes none. Per group and reader: EM/F1 on orig and para and the drop
with its paired bootstrap CI over the group's pairs. Works on any set whose orig and para files
align by position (the flow's own sets and Gan & Ng's released ones).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.io.squad import SquadDataset, read_predictions
from tasks.paraphrase.edits import EDIT_GROUPS, aligned_edits, edit_group
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
    groups = [edit_group(e) for e in aligned_edits(orig_file, para_file)]
    return edit_group_scores(
        read_squad_v11(orig_file), read_squad_v11(para_file), groups,
        {r: (read_predictions(o), read_predictions(p)) for r, (o, p) in predictions.items()},
        n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)
