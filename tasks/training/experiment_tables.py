"""Tables 2 and 3 of the retriever experiments from per-question hits, with paired bootstrap CIs.

Input: ``hits[query_set][model][group]``, 0/1 per question (answer in the top k), for the
query sets ``pattern`` (one group per relation: its no-overlap test set) and ``multitask``
(one group per EntityQuestions test relation, plus :data:`NQ_DEV`). Every accuracy is given
with its question count; every difference is paired over the same questions
(:func:`tasks.evaluation.topk.bootstrap_difference`). Jobs that did not run keep their row
with the reason (``0 training questions: not run``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tasks.evaluation.topk import bootstrap_difference
from tasks.reporting.seed_tables import experiment_seed_intro, experiment_seed_rows
from tasks.reporting.tables import markdown_table
from tasks.training.experiment_plan import Job

#: The NQ-style dev questions' group in the multitask query set.
NQ_DEV = "nq-dev"
Hits = Mapping[str, Mapping[str, Mapping[str, Sequence[int]]]]


def accuracy(hits: Sequence[int] | None) -> float | None:
    """Percent of questions hit (two decimals); None for no questions."""
    return round(100 * sum(hits) / len(hits), 2) if hits else None


def paired(a: Sequence[int], b: Sequence[int], boot: Mapping[str, Any]) -> dict[str, Any] | None:
    """``a - b`` in points with the paired bootstrap CI; None without questions."""
    if not a:
        return None
    diff, low, high = bootstrap_difference(a, b, n=boot["n"], seed=boot["seed"],
                                           confidence=boot["confidence"])
    return {"difference": round(100 * diff, 2), "ci_low": round(100 * low, 2),
            "ci_high": round(100 * high, 2), "significant": bool(low > 0 or high < 0),
            "questions": len(a)}


def _get(hits: Hits, query_set: str, model: str, group: str) -> list[int]:
    return list(hits.get(query_set, {}).get(model, {}).get(group, []))


def pattern_table(jobs: Sequence[Job], status: Mapping[str, dict], hits: Hits, baseline: str,
                  boot: Mapping[str, Any]) -> dict[str, Any]:
    """Table 2 rows (relation x template x mode, BM25 and the baseline beside) and the onlyP -
    onlyQ differences of every relation and template where both ran."""
    rows = []
    for job in (j for j in jobs if j.table == "pattern"):
        base = _get(hits, "pattern", baseline, job.relation)
        mine = _get(hits, "pattern", job.name, job.relation)
        ran = status[job.name]["status"] == "ran"
        rows.append({
            "relation": job.relation, "template": job.variant, "mode": job.mode,
            "model": job.name, "status": status[job.name]["status"],
            "train_questions": status[job.name]["train_questions"],
            "test_questions": len(base),
            "top_k": accuracy(mine) if ran else None,
            "bm25": accuracy(_get(hits, "pattern", "bm25", job.relation)),
            "baseline": accuracy(base),
            "vs_baseline": paired(mine, base, boot) if ran and base else None,
        })
    by_key = {(r["relation"], r["template"], r["mode"]): r for r in rows}
    only_p_vs_q = []
    for (relation, template, mode), row in by_key.items():
        other = by_key.get((relation, template, "onlyQ"))
        if mode != "onlyP" or other is None:
            continue
        both = row["status"] == other["status"] == "ran"
        only_p_vs_q.append({
            "relation": relation, "template": template,
            "difference": paired(_get(hits, "pattern", row["model"], relation),
                                 _get(hits, "pattern", other["model"], relation), boot)
            if both else None,
            "status": "ran" if both else "not run (onlyP or onlyQ did not run)"})
    return {"rows": rows, "onlyP_vs_onlyQ": only_p_vs_q}


def _macro(hits: Hits, model: str, groups: Sequence[str]) -> tuple[float | None, int, int]:
    """Macro top-k over the non-empty EntityQuestions groups, their count and questions."""
    per = [accuracy(_get(hits, "multitask", model, g)) for g in groups]
    per = [a for a in per if a is not None]
    questions = sum(len(_get(hits, "multitask", model, g)) for g in groups)
    return (round(sum(per) / len(per), 2) if per else None), len(per), questions


def _pooled(hits: Hits, model: str, groups: Sequence[str]) -> list[int]:
    return [h for g in groups for h in _get(hits, "multitask", model, g)]


def multitask_table(jobs: Sequence[Job], status: Mapping[str, dict], hits: Hits,
                    baseline: str, boot: Mapping[str, Any]) -> dict[str, Any]:
    """Table 3 rows (per relation: the baseline, single, multi) and the key differences: each
    fine-tune vs the baseline on the relation's test set and on NQ dev, multi - single on NQ
    dev and on every EntityQuestions test question (pooled)."""
    eq_groups = [g for g in hits.get("multitask", {}).get(baseline, {}) if g != NQ_DEV]
    rows, differences = [], []
    relations = list(dict.fromkeys(j.relation for j in jobs if j.table == "multitask"))
    for relation in relations:
        models = {"baseline": baseline}
        models.update({j.variant: j.name for j in jobs
                       if j.table == "multitask" and j.relation == relation})
        for variant, model in models.items():
            info = status.get(model, {"status": "ran", "train_questions": None, "sources": {}})
            ran = info["status"] == "ran"
            macro, relations_counted, eq_questions = _macro(hits, model, eq_groups)
            own = _get(hits, "multitask", model, relation)
            nq = _get(hits, "multitask", model, NQ_DEV)
            rows.append({
                "relation": relation, "variant": variant, "model": model,
                "status": info["status"], "train_questions": info.get("train_questions"),
                "sources": info.get("sources", {}),
                "relation_top_k": accuracy(own) if ran else None, "relation_questions": len(
                    _get(hits, "multitask", baseline, relation)),
                "eq_macro_top_k": macro if ran else None, "eq_relations": relations_counted,
                "eq_questions": eq_questions,
                "nq_dev_top_k": accuracy(nq) if ran else None,
                "nq_dev_questions": len(_get(hits, "multitask", baseline, NQ_DEV))})
        ran = {v: status.get(m, {}).get("status") == "ran" for v, m in models.items()
               if v != "baseline"}
        pairs = [(v, "baseline", g) for v in ("single", "multi") for g in (relation, NQ_DEV)]
        pairs += [("multi", "single", NQ_DEV), ("multi", "single", "eq-all")]
        for a, b, group in pairs:
            if not all(ran.get(x, x == "baseline") for x in (a, b)):
                continue
            if group == "eq-all":
                ha, hb = (_pooled(hits, models[x], eq_groups) for x in (a, b))
            else:
                ha, hb = (_get(hits, "multitask", models[x], group) for x in (a, b))
            differences.append({"relation": relation, "a": a, "b": b, "on": group,
                                "difference": paired(ha, hb, boot)})
    return {"rows": rows, "differences": differences, "eq_relations": eq_groups}


def _ci(diff: Mapping[str, Any] | None) -> str:
    if not diff:
        return "–"
    return (f"{diff['difference']:+.2f} [{diff['ci_low']:+.2f}, {diff['ci_high']:+.2f}]"
            f"{' *' if diff['significant'] else ''}")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def markdown_report(metrics: Mapping[str, Any]) -> str:
    """Markdown Tables 2 and 3 with question counts and CIs (``*``: CI excludes 0)."""
    k, base = metrics["k"], metrics["baseline"]
    conf = round(100 * metrics["confidence"])
    out = [f"# Retriever experiments (top-{k} accuracy, %)", "",
           f"Fine-tuned from `{base}`; differences in points with paired bootstrap {conf}% CIs "
           f"over questions ({metrics['n_bootstrap']} resamples); `*` = CI excludes 0.", ""]
    table2 = metrics.get("pattern")
    if table2 is not None:
        out += ["## Table 2: pattern vs entity (no-overlap train, test vs similar template)", ""]
        rows = [[r["relation"], r["template"], r["mode"], r["train_questions"],
                 r["test_questions"], _pct(r["bm25"]), _pct(r["baseline"]),
                 _pct(r["top_k"]) if r["status"] == "ran" else r["status"],
                 _ci(r["vs_baseline"])] for r in table2["rows"]]
        out += [markdown_table(["relation", "template", "mode", "train q", "test q", "BM25",
                                base, "fine-tuned", f"fine-tuned - {base}"], rows), ""]
        if table2["onlyP_vs_onlyQ"]:
            out += [markdown_table(["relation", "template", "onlyP - onlyQ"],
                                   [[d["relation"], d["template"],
                                     _ci(d["difference"]) if d["difference"] else d["status"]]
                                    for d in table2["onlyP_vs_onlyQ"]]), ""]
    table3 = metrics.get("multitask")
    if table3 is not None:
        out += ["## Table 3: single vs multi-task", ""]
        rows = [[r["relation"], r["variant"], r["train_questions"] or "–",
                 _pct(r["relation_top_k"]) if r["status"] == "ran" else r["status"],
                 r["relation_questions"], _pct(r["eq_macro_top_k"]),
                 f"{r['eq_relations']} / {r['eq_questions']}", _pct(r["nq_dev_top_k"]),
                 r["nq_dev_questions"]] for r in table3["rows"]]
        out += [markdown_table(["relation", "model", "train q", "relation top-k", "test q",
                                "EQ macro", "relations / q", "NQ dev", "NQ dev q"], rows), ""]
        if table3["differences"]:
            out += [markdown_table(["relation", "A - B", "on", "difference [CI]"],
                                   [[d["relation"], f"{d['a']} - {d['b']}", d["on"],
                                     _ci(d["difference"])] for d in table3["differences"]]), ""]
    seeds = metrics.get("seeds")
    if seeds is not None:
        out += ["## Over fine-tuning seeds (not in the paper)", "",
                experiment_seed_intro(seeds), "", markdown_table(*experiment_seed_rows(seeds)),
                ""]
    return "\n".join(out)
