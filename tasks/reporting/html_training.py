"""HTML report sections of the retriever training: DPR-NQ training (loss curve, final numbers)
and the fine-tuning experiments (Tables 2-3, Figure 2), read from their metrics JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tasks.reporting.html_page import Section, Table, Text
from tasks.reporting.html_sections import _figure, _missing, _num, read_json
from tasks.reporting.seed_tables import experiment_seed_intro, experiment_seed_rows

#: Loss-curve points shown per model (evenly spaced, first and last included).
CURVE_POINTS = 8


def _sample(curve: Sequence[Sequence[float]], n: int = CURVE_POINTS) -> list[Sequence[float]]:
    if len(curve) <= n:
        return list(curve)
    step = (len(curve) - 1) / (n - 1)
    return [curve[round(i * step)] for i in range(n)]


def retriever_training_section(artifacts: Mapping[str, Path], root: Path) -> Section:
    """Steps, losses and the (sampled) loss curve of every trained model (MLM, DPR-NQ). Times
    stay in the metrics: the page is byte-identical for the same inputs."""
    section = Section("retriever-training", "Retriever training (MLM pre-training, DPR-NQ)",
                      "train-retriever")
    if _missing(section, artifacts, ["retriever_training"], root):
        return section
    metrics = read_json(artifacts["retriever_training"])
    keys = ("global_step", "epochs", "final_train_loss", "final_val_loss",
            "final_val_accuracy")
    section.blocks.append(Table(
        caption="Final numbers per trained model",
        header=["model", "steps", "epochs", "final train loss", "final val loss",
                "val accuracy"],
        rows=[[name, *[_num(m.get(k)) for k in keys]] for name, m in metrics.items()],
        numeric=[False, *[True] * len(keys)]))
    for name, m in metrics.items():
        curve = _sample(m.get("loss_curve") or [])
        if curve:
            section.blocks.append(Table(
                caption=f"{name}: training loss curve ({len(m['loss_curve'])} logged points, "
                        f"{len(curve)} shown)",
                header=["step", "loss"], rows=[[str(int(s)), _num(float(v))] for s, v in curve],
                numeric=[True, True]))
    return section


def _ci(diff: Mapping[str, Any] | None) -> str:
    if not diff:
        return "–"
    return (f"{diff['difference']:+.2f} [{diff['ci_low']:+.2f}, {diff['ci_high']:+.2f}]"
            f"{' *' if diff['significant'] else ''} (n={diff['questions']})")


def _pattern_blocks(metrics: Mapping[str, Any]) -> list:
    k, base, table = metrics["k"], metrics["baseline"], metrics["pattern"]
    rows = [[r["relation"], r["template"], r["mode"], _num(r["train_questions"]),
             _num(r["test_questions"]), _num(r["bm25"]), _num(r["baseline"]),
             _num(r["top_k"]) if r["status"] == "ran" else r["status"], _ci(r["vs_baseline"])]
            for r in table["rows"]]
    blocks: list = [Table(
        caption=f"Table 2: pattern vs entity, top-{k} on each relation's no-overlap test set",
        header=["relation", "train template", "mode", "train questions", "test questions",
                "BM25", base, "fine-tuned", f"fine-tuned - {base} [CI]"],
        rows=rows, numeric=[False, False, False, True, True, True, True, True, False])]
    if table["onlyP_vs_onlyQ"]:
        blocks.append(Table(
            caption="onlyP - onlyQ (paper: fine-tuning the passage encoder helps more)",
            header=["relation", "template", "onlyP - onlyQ [CI]"],
            rows=[[d["relation"], d["template"],
                   _ci(d["difference"]) if d["difference"] else d["status"]]
                  for d in table["onlyP_vs_onlyQ"]], numeric=[False, False, False]))
    return blocks


def _multitask_blocks(metrics: Mapping[str, Any]) -> list:
    k, table = metrics["k"], metrics["multitask"]
    rows = [[r["relation"], f"{r['variant']} ({r['model']})", _num(r["train_questions"]),
             " + ".join(f"{n} {c}" for n, c in r["sources"].items()) or "–",
             _num(r["relation_top_k"]) if r["status"] == "ran" else r["status"],
             _num(r["relation_questions"]), _num(r["eq_macro_top_k"]),
             f"{r['eq_relations']} / {r['eq_questions']}", _num(r["nq_dev_top_k"]),
             _num(r["nq_dev_questions"])] for r in table["rows"]]
    blocks: list = [Table(
        caption=f"Table 3: single vs multi-task, top-{k}",
        header=["relation", "model", "train questions", "from", "relation test",
                "relation questions", "EQ macro", "EQ relations / questions", "NQ dev",
                "NQ dev questions"],
        rows=rows, numeric=[False, False, True, False, True, True, True, False, True, True])]
    if table["differences"]:
        blocks.append(Table(
            caption="Table 3 differences (paired bootstrap; eq-all = every test question)",
            header=["relation", "A - B", "on", "difference [CI]"],
            rows=[[d["relation"], f"{d['a']} - {d['b']}", d["on"], _ci(d["difference"])]
                  for d in table["differences"]], numeric=[False, False, False, False]))
    return blocks


def retriever_experiments_section(artifacts: Mapping[str, Path], root: Path) -> Section:
    """Tables 2-3 with question counts and CIs, the not-run rows, and Figure 2."""
    section = Section("retriever-experiments",
                      "Fine-tuning experiments (Tables 2-3, Figure 2)", "retriever-experiments")
    if _missing(section, artifacts, ["retriever_experiments"], root):
        return section
    metrics = read_json(artifacts["retriever_experiments"])
    if metrics.get("enabled") is False:
        section.blocks.append(Text(f"Not run: {metrics.get('note', 'disabled')}."))
        return section
    section.blocks.append(Text(
        f"Every fine-tune starts from {metrics['baseline']}; top-{metrics['k']} accuracy in "
        f"percent (answer matching {metrics['has_answer_mode']}; NQ dev "
        f"{metrics['nq_has_answer_mode']}); differences in points with paired bootstrap "
        f"{round(100 * metrics['confidence'])}% CIs ({metrics['n_bootstrap']} resamples), n = "
        "questions; * = the CI excludes 0. Fine-tunes without training data: "
        f"{len(metrics['not_run'])} of {len(metrics['jobs'])}."))
    if "pattern" in metrics:
        section.blocks += _pattern_blocks(metrics)
    if "multitask" in metrics:
        section.blocks += _multitask_blocks(metrics)
    if "seeds" in metrics:
        header, rows = experiment_seed_rows(metrics["seeds"])
        section.blocks += [Text(experiment_seed_intro(metrics["seeds"])), Table(
            caption="Over fine-tuning seeds (not in the paper)", header=header, rows=rows,
            numeric=[False, False, False, True, False, False, False, False, False])]
    tsne = metrics.get("figure2")
    if tsne and tsne.get("status") == "ran":
        scores = ", ".join(f"{p}: {v:+.3f}" for p, v in tsne["silhouette_cosine"].items())
        section.blocks.append(Text(
            "Figure 2: " + ", ".join(f"{n} {s} positives" for s, n in tsne["passages"].items())
            + f"; silhouette of the two sets (cosine, original space) {scores}."))
        if not _missing(section, artifacts, ["tsne_plot"], root):
            section.blocks.append(_figure(artifacts["tsne_plot"], "Figure 2: t-SNE of positive "
                                          "passage embeddings before / after fine-tuning"))
    elif tsne:
        section.blocks.append(Text(f"Figure 2 not drawn: {tsne.get('status')}."))
    return section
