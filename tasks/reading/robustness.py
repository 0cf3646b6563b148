"""Gan & Ng (2019), Tables 1-2: readers' EM/F1 on original vs paraphrased SQuAD questions.

A test set is a pair of SQuAD v1.1 files ``<set>_orig.json`` / ``<set>_para.json`` whose
questions align BY POSITION (the release gives the para question another id). For each reader
and set: EM and F1 (official v1.1 script) of orig and para, the drop ``orig - para`` in points
(positive = paraphrasing hurts) and its paired bootstrap CI over question positions.
EM uses :func:`tasks.evaluation.topk.bootstrap_difference` (0/1 per question); F1 is real-valued
in [0, 1], which that helper refuses, so :func:`bootstrap_scores` runs the same resampling
(same generator, same draws) on real values and delegates to it for 0/1 values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from tasks.evaluation.topk import bootstrap_difference
from tasks.io.atomic import write_json, write_text
from tasks.io.squad_predictions import read_predictions
from tasks.reading.scoring import question_scores, read_squad_v11, score_predictions
from tasks.reporting.reader_tables import (
    bucket_rows,
    edit_group_rows,
    paraphrase_bucket_rows,
    reader_rows,
)
from tasks.reporting.tables import markdown_table, publish_table_artifact

VARIANTS = ("orig", "para")
SetFiles = Mapping[str, tuple[Path, Path]]


def bootstrap_scores(a: Sequence[float], b: Sequence[float], n: int = 1000, seed: int = 0,
                     confidence: float = 0.95) -> tuple[float, float, float]:
    """Paired bootstrap of ``mean(a) - mean(b)``: ``(observed, low, high)``.

    0/1 values go to :func:`bootstrap_difference`; real values in [0, 1] are resampled with
    exactly its draws (``default_rng(seed).integers`` in the same chunks), so EM and F1 CIs of
    the same questions use the same resamples.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim == 1 and x.shape == y.shape and np.isin(x, (0.0, 1.0)).all() \
            and np.isin(y, (0.0, 1.0)).all():
        return bootstrap_difference(x, y, n=n, seed=seed, confidence=confidence)
    if x.ndim != 1 or x.shape != y.shape or x.size == 0:
        raise ValueError(f"scores must be two non-empty 1-d sequences of equal length, got "
                         f"{x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("scores must be finite")
    if n < 1 or not 0.0 < confidence < 1.0:
        raise ValueError(f"need n >= 1 and 0 < confidence < 1, got {n}, {confidence}")
    diff, size = x - y, x.size
    rng = np.random.default_rng(seed)
    means = np.empty(n, dtype=np.float64)
    chunk = max(1, min(n, 2_000_000 // size))
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        means[start:stop] = diff[rng.integers(0, size, size=(stop - start, size))].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(diff.mean()), float(low), float(high)


def evaluate_set(orig_path: Path, para_path: Path, orig_pred: Mapping[str, str],
                 para_pred: Mapping[str, str], n_bootstrap: int = 1000, seed: int = 0,
                 confidence: float = 0.95) -> dict:
    """EM/F1 of orig and para, the drops and their CIs (points) for one reader and set
    (``{"questions": 0}`` alone for an empty set)."""
    orig, para = read_squad_v11(orig_path), read_squad_v11(para_path)
    if len(orig) != len(para):
        raise ValueError(f"{orig_path} has {len(orig)} questions but {para_path} has "
                         f"{len(para)}; orig and para questions must align by position")
    if not orig:  # an empty set (e.g. no paraphrase passed the filter): nothing to score
        return {"questions": 0}
    return paired_scores({"orig": (orig, orig_pred), "para": (para, para_pred)}, "orig", "para",
                         "drop", n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)


def paired_scores(sides: Mapping[str, tuple[Sequence, Mapping[str, str]]], minuend: str,
                  subtrahend: str, name: str, *, n_bootstrap: int = 1000, seed: int = 0,
                  confidence: float = 0.95) -> dict:
    """EM/F1 (official v1.1) of each side's ``(questions, predictions)`` -- the sides' questions
    paired by position -- and ``<metric>_<name>`` = ``minuend - subtrahend`` in points with
    its paired bootstrap CI (the same draws for EM and F1)."""
    block: dict = {"questions": len(sides[minuend][0])}
    per_q = {}
    for side, (data, pred) in sides.items():
        report = score_predictions(data, pred)
        block[side] = {"exact_match": round(report.exact_match, 2),
                       "f1": round(report.f1, 2), "missing": len(report.missing_ids)}
        per_q[side] = question_scores(data, pred)
    for i, metric in enumerate(("exact_match", "f1")):
        diff, low, high = bootstrap_scores([s[i] for s in per_q[minuend]],
                                           [s[i] for s in per_q[subtrahend]], n=n_bootstrap,
                                           seed=seed, confidence=confidence)
        block[f"{metric}_{name}"] = {"difference": round(100 * diff, 2),
                                     "ci_low": round(100 * low, 2),
                                     "ci_high": round(100 * high, 2),
                                     "significant": bool(low > 0 or high < 0)}
    return block


def evaluate_readers(predictions: Mapping[str, Mapping[str, Path]], set_files: SetFiles,
                     n_bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """``predictions[reader]["<set>_<orig|para>"]`` files -> metrics of every reader and set."""
    readers: dict[str, dict] = {}
    for reader, files in predictions.items():
        readers[reader] = {
            name: evaluate_set(orig, para, read_predictions(files[f"{name}_orig"]),
                               read_predictions(files[f"{name}_para"]), n_bootstrap, seed,
                               confidence)
            for name, (orig, para) in set_files.items()}
    return {"statistic": "EM/F1 in percent (official SQuAD v1.1); drop = orig - para in points "
                         "(positive: paraphrasing hurts), paired bootstrap over question "
                         "positions",
            "n_bootstrap": n_bootstrap, "seed": seed, "confidence": confidence,
            "sets": {name: [str(o), str(p)] for name, (o, p) in set_files.items()},
            "readers": readers}


def subset_drops(orig: Sequence[tuple[float, float]], para: Sequence[tuple[float, float]],
                 rows: Sequence[int], n_bootstrap: int = 1000, seed: int = 0,
                 confidence: float = 0.95) -> dict[str, dict[str, float]]:
    """EM and F1 (percent) of the pairs at positions ``rows`` on orig and para, and the drop
    ``orig - para`` in points with its paired bootstrap CI over those pairs; ``orig[i]`` and
    ``para[i]`` are the ``(em, f1)`` of pair ``i`` (:func:`~tasks.reading.scoring.
    question_scores`)."""
    block: dict[str, dict[str, float]] = {}
    for m, metric in enumerate(("exact_match", "f1")):
        a, c = [orig[i][m] for i in rows], [para[i][m] for i in rows]
        diff, low, high = bootstrap_scores(a, c, n=n_bootstrap, seed=seed, confidence=confidence)
        block[metric] = {"orig": round(100 * sum(a) / len(a), 2),
                         "para": round(100 * sum(c) / len(c), 2),
                         "drop": round(100 * diff, 2), "ci_low": round(100 * low, 2),
                         "ci_high": round(100 * high, 2)}
    return block


def write_reader_tables(metrics: dict, metrics_path: Path, report_path: Path,
                        dev_scores: Mapping[str, Mapping] | None = None,
                        dev_buckets: Mapping | None = None,
                        paraphrase_buckets: Mapping[str, Mapping] | None = None,
                        edit_groups: Mapping[str, Mapping] | None = None) -> dict:
    """Metrics JSON + Markdown Tables 1-2 (+ SQuAD dev, overall and per subject-frequency
    bucket, and the paraphrased sets per bucket and per edit group when given) + Prefect table
    artifact."""
    if dev_scores:
        metrics = {**metrics, "squad_dev": dict(dev_scores)}
    if dev_buckets:
        metrics = {**metrics, "squad_dev_buckets": dict(dev_buckets)}
    if paraphrase_buckets:
        metrics = {**metrics, "paraphrased_buckets": dict(paraphrase_buckets)}
    if edit_groups:
        metrics = {**metrics, "paraphrased_edit_groups": dict(edit_groups)}
    write_json(metrics_path, metrics, indent=2)
    level = round(100 * metrics["confidence"])
    text = ("# Readers on original vs paraphrased questions (Gan & Ng, 2019, Tables 1-2)\n\n"
            "EM/F1 in percent (official SQuAD v1.1 script); drop = orig - para in points with "
            f"a paired bootstrap {level}% CI over question positions "
            f"({metrics['n_bootstrap']} resamples; * = excludes 0). Positive = paraphrasing "
            "hurts. `dev` = non-adversarial set (Table 1), `adv` = adversarial (Table 2); "
            "`released-` = the sets of the paper's release.\n\n")
    if metrics["readers"] and metrics["sets"]:
        header, rows = reader_rows(metrics)
        text += markdown_table(header, rows)
        publish_table_artifact("readers-paraphrased", header, rows,
                               "EM/F1 of readers, original vs paraphrased questions")
    else:
        text += "No paraphrased test set was found: nothing to compare.\n"
    if dev_scores:
        text += "\n## SQuAD dev (the readers' in-domain accuracy)\n\n" + markdown_table(
            ["reader", "EM", "F1", "questions"],
            [[r, round(s["exact_match"], 2), round(s["f1"], 2), s["questions"]]
             for r, s in dev_scores.items()])
    if dev_buckets:
        text += ("\n## SQuAD dev per subject-frequency bucket\n\n"
                 f"{dev_buckets['linked']} of {dev_buckets['questions']} dev questions with a "
                 "known subject, sorted by its hyperlink count and cut into buckets of equal "
                 f"{dev_buckets['weight']} (bucket0 = {dev_buckets['bucket0']}).\n\n"
                 + markdown_table(*bucket_rows(dev_buckets)))
    for name, buckets in (paraphrase_buckets or {}).items():
        text += (f"\n## `{name}` per subject-frequency bucket\n\n"
                 f"{buckets['linked']} of {buckets['pairs']} pairs whose original question has "
                 "a known subject, in the SQuAD dev buckets above (bucket0 = "
                 f"{buckets['bucket0']}); EM drop = orig - para in points, paired bootstrap "
                 f"{level}% CI over the bucket's pairs.\n\n"
                 + markdown_table(*paraphrase_bucket_rows(buckets)))
    for name, groups in (edit_groups or {}).items():
        text += (f"\n## `{name}` by what the paraphrase changes\n\n"
                 "Readers lean on the words a question shares with the answer's sentence "
                 "(Gan & Ng, 2019): each pair by whether its paraphrase drops a content word "
                 "of the original found in that sentence, changes other content words, or "
                 "changes none (`tasks/paraphrase/edits.py`); EM drop = orig - para in points, "
                 f"paired bootstrap {level}% CI over the group's pairs.\n\n"
                 + markdown_table(*edit_group_rows(groups)))
    write_text(report_path, text)
    return metrics
