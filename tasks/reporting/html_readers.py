"""The readers' sections of the HTML report: Tables 1-2 (EM/F1 on original vs paraphrased
questions, ``metrics/readers.json``), Tables 3-6 (before vs after re-training on paraphrased
training questions, ``metrics/reader_augmentation.json``) and retrieve-then-read on
EntityQuestions (``metrics/retrieve_then_read.json``), with their headline lines.

Every number is read from the metrics JSON the reading flows wrote (the row builders are the
Markdown reports' own, :mod:`tasks.reporting.reader_tables`); a missing file says which flow did
not run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tasks.reporting.html_page import Heading, Section, Table, Text
from tasks.reporting.html_sections import display_path, read_json
from tasks.reporting.reader_tables import (
    bucket_rows,
    comparison_rows,
    count_rows,
    edit_group_rows,
    fusion_rows,
    gain_rows,
    open_rows,
    paraphrase_bucket_rows,
    reader_rows,
    relation_rows,
    seed_drop_rows,
    seed_edit_group_rows,
    seed_gain_rows,
    seed_intro,
    seed_pattern_rows,
)


def _missing(section: Section, path: Path, root: Path) -> bool:
    if path.is_file():
        return False
    section.missing.append(display_path(path, root))
    return True


def _table(caption: str, header: list[str], rows: list[list[object]],
           first_text_columns: int) -> Table:
    """A table of ``rows`` as text; columns after the first ``first_text_columns`` right-aligned."""
    return Table(caption=caption, header=header,
                 rows=[[str(cell) for cell in row] for row in rows],
                 numeric=[i >= first_text_columns for i in range(len(header))])


def readers_section(artifacts: Mapping[str, Path], root: Path) -> Section:
    """Tables 1-2: EM/F1 on original vs paraphrased questions, the drops with CIs."""
    section = Section("readers", "Readers on original vs paraphrased questions (Tables 1-2)",
                      "readers")
    if _missing(section, artifacts["readers"], root):
        return section
    metrics = read_json(artifacts["readers"])
    level = round(100 * metrics["confidence"])
    section.blocks.append(Text(
        "EM/F1 in percent (official SQuAD v1.1 script); drop = orig - para in points with a "
        f"paired bootstrap {level}% CI over question positions ({metrics['n_bootstrap']} "
        "resamples; * = excludes 0); positive = paraphrasing hurts. dev = non-adversarial set "
        "(Table 1), adv = adversarial (Table 2), released- = the paper's release."))
    if metrics["readers"] and metrics["sets"]:
        header, rows = reader_rows(metrics)
        section.blocks.append(_table("Original vs paraphrased questions", header, rows, 2))
    else:
        section.blocks.append(Text("No paraphrased test set was found: nothing to compare."))
    dev = metrics.get("squad_dev")
    if dev:
        section.blocks.append(_table(
            "SQuAD dev (the readers' in-domain accuracy)", ["reader", "EM", "F1", "questions"],
            [[r, f"{s['exact_match']:.2f}", f"{s['f1']:.2f}", s["questions"]]
             for r, s in dev.items()], 1))
    buckets = metrics.get("squad_dev_buckets")
    if buckets:
        header, rows = bucket_rows(buckets)
        section.blocks.append(_table(
            f"SQuAD dev per subject-frequency bucket ({buckets['linked']} of "
            f"{buckets['questions']} questions with a known subject, buckets of equal "
            f"{buckets['weight']}; bucket0 = {buckets['bucket0']})", header, rows, 2))
    for name, para in (metrics.get("paraphrased_buckets") or {}).items():
        header, rows = paraphrase_bucket_rows(para)
        section.blocks.append(_table(
            f"{name} per subject-frequency bucket ({para['linked']} of {para['pairs']} pairs "
            f"with a known subject, in the SQuAD dev buckets; bucket0 = {para['bucket0']}; "
            "EM drop = orig - para with its CI)", header, rows, 2))
    for name, groups in (metrics.get("paraphrased_edit_groups") or {}).items():
        header, rows = edit_group_rows(groups)
        section.blocks.append(_table(
            f"{name} by what the paraphrase changes ({groups['pairs']} pairs: whether it drops "
            "a content word of the original found in the answer's sentence, changes other "
            "content words or none; EM drop = orig - para with its CI)", header, rows, 2))
    return section


def augmentation_section(artifacts: Mapping[str, Path], root: Path) -> Section:
    """Tables 3-6: before vs after re-training on paraphrased training questions."""
    section = Section("reader-augmentation",
                      "Re-training readers on paraphrased questions (Tables 3-6)",
                      "reader-augmentation")
    if _missing(section, artifacts["reader_augmentation"], root):
        return section
    metrics = read_json(artifacts["reader_augmentation"])
    if not metrics["kinds"]:
        section.blocks.append(Text("No augmentation kind configured."))
        return section
    level = round(100 * metrics["confidence"])
    section.blocks.append(Text(
        "EM/F1 in percent of the reader trained on the original questions (before) and "
        "re-trained on original + paraphrased ones (after); gain = after - before in points "
        f"with a paired bootstrap {level}% CI over each file's questions "
        f"({metrics['n_bootstrap']} resamples; * = excludes 0)."))
    header, rows = count_rows(metrics)
    section.blocks += [Heading("Augmented training data"),
                       _table("Paraphrased training questions added", header, rows, 1)]
    header, rows = gain_rows(metrics)
    section.blocks += [Heading("Before vs after augmentation"),
                       _table("EM/F1 before vs after", header, rows, 2)]
    if "seeds" in metrics:
        seeds = metrics["seeds"]
        header, rows = seed_gain_rows(seeds)
        section.blocks += [Heading("Over reader training seeds (not in the paper)"),
                           Text(seed_intro(seeds)),
                           _table("EM/F1 gain over reader training seeds", header, rows, 2)]
        header, rows = seed_drop_rows(seeds)
        if rows:
            section.blocks.append(_table("Paraphrase drop (orig - para) of the readers over "
                                         "seeds", header, rows, 2))
        header, rows = seed_edit_group_rows(seeds)
        if rows:
            section.blocks.append(_table(
                "Paraphrase drop (EM) over seeds by what the paraphrase changes (drops a word "
                "of the answer's sentence, other content words, none)", header, rows, 3))
        header, rows = seed_pattern_rows(seeds)
        if rows:
            section.blocks.append(_table("Paraphrased questions' gain minus their originals' "
                                         "gain, over seeds", header, rows, 2))
    return section


def retrieve_then_read_section(artifacts: Mapping[str, Path], root: Path) -> Section:
    """Retrieve-then-read EM on EntityQuestions: per retriever, k and relation; the baseline
    vs each other retriever with paired bootstrap CIs."""
    section = Section("retrieve-then-read", "Retrieve-then-read on EntityQuestions",
                      "retrieve-then-read")
    if _missing(section, artifacts["retrieve_then_read"], root):
        return section
    metrics = read_json(artifacts["retrieve_then_read"])
    if not metrics["retrievers"]:
        section.blocks.append(Text("No retriever results were found: nothing to read."))
        return section
    level = round(100 * metrics["confidence"])
    section.blocks.append(Text(
        f"The reader {metrics['reader']} (train-reader stage) reads the top-k passages of each "
        f"retriever for {metrics['questions']} sampled test questions; its answer is the span "
        "with the highest span score (start + end logit) over the k passages; \"fused\": the "
        "highest fused score, (1 - w) span + w retriever score (each divided by its standard "
        "deviation), w fitted per relation on the other relations' questions. EM in percent "
        "(SQuAD normalisation, max over the answers), macro average over relations; recall@k "
        "= questions with an answer in the passages read (the upper bound of EM@k)."))
    header, rows = open_rows(metrics)
    section.blocks.append(_table("EM and answer recall per retriever", header, rows, 1))
    if metrics["comparisons"]:
        header, rows = comparison_rows(metrics)
        section.blocks.append(_table(
            f"{metrics['baseline']} - other retriever: EM difference in points, paired "
            f"bootstrap {level}% CI ({metrics['n_bootstrap']} resamples; * = excludes 0)",
            header, rows, 2))
    header, rows = fusion_rows(metrics)
    if rows:
        section.blocks.append(_table(
            f"Fused score - best span score: EM difference in points, paired bootstrap {level}% "
            "CI; fitted weight over relations (0 = reader alone, 1 = retriever alone)",
            header, rows, 2))
    k = metrics["ks"][-1]
    header, rows = relation_rows(metrics, k)
    section.blocks.append(_table(f"EM@{k} per relation", header, rows, 1))
    return section


def reader_headline_lines(artifacts: Mapping[str, Path]) -> list[str]:
    """Headline Markdown lines: the F1 drop per reader and set, the F1 gain per kind and
    paraphrased file."""
    lines: list[str] = []
    if artifacts["readers"].is_file():
        metrics = read_json(artifacts["readers"])
        for reader, sets in metrics["readers"].items():
            for name, b in sets.items():
                if b["questions"]:
                    d = b["f1_drop"]
                    lines.append(f"- reader {reader} on {name}: F1 orig - para "
                                 f"{d['difference']:+.2f} points, CI "
                                 f"[{d['ci_low']:+.2f}, {d['ci_high']:+.2f}]")
    if artifacts["reader_augmentation"].is_file():
        metrics = read_json(artifacts["reader_augmentation"])
        for kind, block in metrics["kinds"].items():
            for name, b in block["sets"].items():
                if b["questions"] and (name.endswith("_para") or name == "squad_dev"):
                    g = b["f1_gain"]
                    lines.append(f"- {kind} augmentation on {name}: F1 after - before "
                                 f"{g['difference']:+.2f} points, CI "
                                 f"[{g['ci_low']:+.2f}, {g['ci_high']:+.2f}]")
    if artifacts["retrieve_then_read"].is_file():
        metrics = read_json(artifacts["retrieve_then_read"])
        k = metrics["ks"][-1]
        if metrics["retrievers"]:
            lines.append(f"- retrieve-then-read EM@{k} (macro): " + ", ".join(
                f"{name} {block[f'top{k}']['exact_match']:.2f}"
                for name, block in metrics["retrievers"].items()))
    return lines
