"""Gan & Ng (2019), Tables 3-6: EM/F1 of the reader before vs after re-training on original +
paraphrased training questions, on the paraphrased sets (orig and para variants) and on the
original dev set.

For each augmentation kind and test file: EM and F1 (official v1.1 script) of the reader
trained on the original data (``before``) and of the re-trained one (``after``), the gain
``after - before`` in points and its paired bootstrap CI over the file's questions
(:func:`tasks.reading.robustness.bootstrap_scores`: the same draws for EM and F1).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tasks.io.atomic import write_json, write_text
from tasks.io.squad_predictions import read_predictions
from tasks.io.tables import read_table
from tasks.reading.robustness import paired_scores
from tasks.reading.scoring import read_squad_v11
from tasks.reporting.reader_tables import (
    count_rows,
    gain_rows,
    seed_drop_rows,
    seed_edit_group_rows,
    seed_gain_rows,
    seed_intro,
    seed_pattern_rows,
)
from tasks.reporting.tables import markdown_table, publish_table_artifact


def compare_file(data_path: Path, before: Mapping[str, str], after: Mapping[str, str],
                 n_bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """Before/after EM and F1 of one test file and the gains with CIs (points);
    ``{"questions": 0}`` alone for an empty file."""
    data = read_squad_v11(data_path)
    if not data:
        return {"questions": 0}
    return paired_scores({"before": (data, before), "after": (data, after)}, "after", "before",
                         "gain", n_bootstrap=n_bootstrap, seed=seed, confidence=confidence)


def compare_readers(before: Mapping[str, Path], after: Mapping[str, Mapping[str, Path]],
                    data_files: Mapping[str, Path], counts: Mapping[str, Mapping],
                    n_bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """``before[name]`` and ``after[kind][name]`` prediction files of every test file
    ``data_files[name]`` -> the metrics of every kind (with its augmentation ``counts``)."""
    kinds = {}
    for kind, files in after.items():
        kinds[kind] = {
            "augmentation": dict(counts.get(kind, {})),
            "sets": {name: compare_file(path, read_predictions(before[name]),
                                        read_predictions(files[name]), n_bootstrap, seed,
                                        confidence)
                     for name, path in data_files.items()}}
    return {"statistic": "EM/F1 in percent (official SQuAD v1.1); gain = after - before in "
                         "points (positive: augmentation helps), paired bootstrap over the "
                         "questions of each file",
            "n_bootstrap": n_bootstrap, "seed": seed, "confidence": confidence,
            "files": {name: str(path) for name, path in data_files.items()}, "kinds": kinds}


def example_rows(added_tables: Mapping[str, Path], n: int) -> list[list[object]]:
    """Up to ``n`` added pairs per kind (first in file order): original and paraphrase."""
    rows: list[list[object]] = []
    for kind, path in added_tables.items():
        if n > 0 and Path(path).is_file():
            for r in read_table(path).to_pylist()[:n]:
                rows.append([kind, r["original"], r["paraphrase"], r["suggestion"] or "-",
                             round(r["similarity"], 3) if r["similarity"] is not None else "-"])
    return rows


def seed_section(seeds: Mapping) -> str:
    """Markdown: gains over reader training seeds, the readers' paraphrase drops and the
    para gain - orig gain per set."""
    header, rows = seed_gain_rows(seeds)
    text = ("\n## Over reader training seeds (not in the paper)\n\n" + seed_intro(seeds)
            + "\n\n" + markdown_table(header, rows))
    header, rows = seed_drop_rows(seeds)
    if rows:
        text += ("\nParaphrase drop (orig - para, Tables 1-2) of the readers over the same "
                 "seeds:\n\n" + markdown_table(header, rows))
    header, rows = seed_edit_group_rows(seeds)
    if rows:
        text += ("\nThe same drop by what the paraphrase changes (EM; whether it drops a "
                 "content word of the original found in the answer's sentence, changes other "
                 "content words or none; two-level CI over seeds and the group's pairs):\n\n"
                 + markdown_table(header, rows))
    header, rows = seed_pattern_rows(seeds)
    if rows:
        text += ("\nParaphrased questions' gain minus their originals' gain (Gan & Ng: "
                 "augmentation lifts the paraphrased questions more):\n\n"
                 + markdown_table(header, rows))
    return text


def write_augmentation_tables(metrics: dict, metrics_path: Path, report_path: Path,
                              added_tables: Mapping[str, Path] | None = None,
                              n_examples: int = 5, notes: tuple[str, ...] = ()) -> dict:
    """Metrics JSON + Markdown Tables 3-6 + Prefect table artifact."""
    write_json(metrics_path, metrics, indent=2)
    level = round(100 * metrics["confidence"])
    text = ("# Re-training readers on paraphrased training questions (Gan & Ng, 2019, "
            "Tables 3-6)\n\n"
            "EM/F1 in percent (official SQuAD v1.1 script) of the reader trained on the "
            "original training questions (before) and of the reader re-trained on original + "
            "paraphrased questions (after); gain = after - before in points with a paired "
            f"bootstrap {level}% CI over the questions of each file ({metrics['n_bootstrap']} "
            "resamples; * = excludes 0). `dev_*` = non-adversarial paraphrased set, `adv_*` = "
            "adversarial, `released-` = the paper's release, `squad_dev` = the original dev "
            "set.\n\n" + "".join(f"{note}\n\n" for note in notes))
    if metrics["kinds"]:
        header, rows = count_rows(metrics)
        text += "## Augmented training data\n\n" + markdown_table(header, rows) + "\n"
        header, rows = gain_rows(metrics)
        text += "## Before vs after augmentation\n\n" + markdown_table(header, rows)
        publish_table_artifact("reader-augmentation", header, rows,
                               "EM/F1 of the reader before vs after augmentation")
        if "seeds" in metrics:
            text += seed_section(metrics["seeds"])
        examples = example_rows(added_tables or {}, n_examples)
        if examples:
            text += "\n## Example added questions\n\n" + markdown_table(
                ["augmentation", "original", "paraphrase", "suggestion", "similarity"],
                examples)
    else:
        text += "No augmentation kind configured (readers.augmentation.kinds is empty).\n"
    write_text(report_path, text)
    return metrics
