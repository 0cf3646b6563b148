"""Tables over training seeds: the cells of a summary (:mod:`tasks.evaluation.over_seeds`),
shared by the readers' and the retriever experiments' seed tables, and the retriever
experiments' rows (:func:`tasks.training.experiment_seeds.compare_over_seeds`), for the
Markdown and the HTML report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def mean_sd(summary: Mapping) -> str:
    """``+1.23 (4.56)``: the mean over seeds and the sample sd ("-" with one seed)."""
    sd = "-" if summary["sd"] is None else f"{summary['sd']:.2f}"
    return f"{summary['mean']:+.2f} ({sd})"


def t_interval(summary: Mapping) -> str:
    """The Student-t interval over seeds, `` *`` when it excludes 0 ("-" with one seed)."""
    if summary["ci_low"] is None:
        return "-"
    return (f"[{summary['ci_low']:+.2f}, {summary['ci_high']:+.2f}]"
            + (" *" if summary["significant"] else ""))


def two_level(summary: Mapping) -> str:
    """The seeds x questions bootstrap interval ("-" in metrics written before it existed)."""
    if summary.get("two_level_low") is None:
        return "-"
    return (f"[{summary['two_level_low']:+.2f}, {summary['two_level_high']:+.2f}]"
            + (" *" if summary["two_level_significant"] else ""))


def experiment_seed_rows(seeds: Mapping[str, Any]) -> tuple[list[str], list[list[object]]]:
    """One row per difference of
    :func:`tasks.training.experiment_seeds.compare_over_seeds` (Markdown and HTML): the table,
    the difference, its test group and questions, the value per seed and over seeds."""
    order = [str(s) for s in seeds["seeds"]]
    header = ["table", "difference", "on", "questions",
              f"per seed ({', '.join(order)})", "mean (sd)", "t-interval", "two-level CI",
              "seeds above 0"]
    entries = [("Table 2", f"{r['template']} {r['mode']} - baseline", r["relation"],
                r["vs_baseline"]) for r in seeds["pattern"]["rows"]]
    entries += [("Table 2", f"{d['template']} onlyP - onlyQ", d["relation"], d["difference"])
                for d in seeds["pattern"]["onlyP_vs_onlyQ"]]
    entries += [("Table 3", f"{d['relation']} {d['a']} - {d['b']}", d["on"], d["difference"])
                for d in seeds["multitask"]["differences"]]
    rows: list[list[object]] = []
    for table, what, on, d in entries:
        if d is None:
            rows.append([table, what, on, 0, *["-"] * (len(header) - 4)])
            continue
        rows.append([table, what, on, d["questions"],
                     ", ".join(f"{d['per_seed'][s]:+.2f}" for s in order), mean_sd(d),
                     t_interval(d), two_level(d), f"{d['above_zero']} of {d['seeds']}"])
    return header, rows


def experiment_seed_intro(seeds: Mapping[str, Any]) -> str:
    """What the fine-tuning-seed table shows (Markdown and HTML report)."""
    level = round(100 * seeds["confidence"])
    return (f"Every fine-tune trained once per seed ({', '.join(map(str, seeds['seeds']))}; "
            f"the tables above are seed {seeds['main_seed']}), from the same baseline and on "
            "the same data. Top-k differences in points; mean (sample sd) over seeds, a "
            f"Student-t {level}% interval over training draws and a two-level {level}% "
            "bootstrap CI that resamples seeds and questions together (* = excludes 0); with "
            "few seeds the bootstrap's share of the seeds runs narrower than the t-interval, "
            "so read the wider of the two.")
