"""The papers' findings, each with what this run measured and a verdict by a fixed rule.

Read from the metrics the flows wrote (never recomputed from predictions), for the report's
overview and the end of a run. A finding whose metrics are missing says which flow has not run.

The verdict rule, for a difference the paper claims is positive (with the sign turned where the
paper claims a fall):

- **reproduced**: positive, at least the paper's margin where it states one, and the paired
  bootstrap CI excludes 0;
- **not established**: positive, but the CI reaches 0 (or it falls short of the margin);
- **not reproduced**: zero or negative.

"The original dev set moves little" is the one claim of no change: reproduced when the CI of
the change includes 0, not reproduced when it excludes it.

Findings whose metrics carry no CI (the adversarial set's drop against the non-adversarial
one; the popularity buckets of metrics written before their contrasts) get **as the paper, no
CI** or **not as the paper**: a direction, not evidence.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.scores.metrics import Scalar, unflatten

REPRODUCED, NOT_ESTABLISHED, NOT_REPRODUCED = "reproduced", "not established", "not reproduced"
AS_PAPER, NOT_AS_PAPER, NOT_RUN = "as the paper, no CI", "not as the paper", "not run"
#: The verdict rule in one paragraph, under every findings table.
VERDICT_RULE = ("Verdicts: reproduced = in the paper's direction (by its margin where it states "
                "one) with the paired bootstrap 95% CI excluding 0; not established = in its "
                "direction, CI reaching 0; not reproduced = not in its direction; 'moves little' "
                "is reproduced when the change's CI includes 0. 'No CI': a direction only "
                "(tasks/reporting/findings.py).")
EQ_PAPER = "Sciavolino et al. 2021"
PARA_PAPER = "Gan & Ng 2019"


@dataclass(frozen=True)
class Finding:
    """One claim of a paper, this run's numbers for it, and the verdict."""

    paper: str
    claim: str
    measured: str
    verdict: str


def _load(path: Path | None) -> Any:
    return json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else None


def _pts(value: float) -> str:
    return f"{value:+.2f}"


def _diff(d: Mapping[str, Any]) -> str:
    """``+70.11 [+68.94, +71.15]``: a paired difference and its CI."""
    return f"{_pts(d['difference'])} [{_pts(d['ci_low'])}, {_pts(d['ci_high'])}]"


def verdict(d: Mapping[str, Any], sign: int = 1, margin: float = 0.0) -> str:
    """The rule of the module docstring for the difference ``d`` (``difference``, ``ci_low``,
    ``ci_high``), claimed positive (``sign`` -1: claimed negative)."""
    value = sign * d["difference"]
    low = min(sign * d["ci_low"], sign * d["ci_high"])
    if value <= 0:
        return NOT_REPRODUCED
    return REPRODUCED if low > 0 and value >= margin else NOT_ESTABLISHED


def study_findings(artifacts: Mapping[str, Path]) -> list[Finding]:
    """Every finding of both papers from the metrics files named in ``artifacts`` (the names of
    :func:`tasks.reporting.html_report.report_artifacts`)."""
    return findings_from_metrics({name: _load(artifacts.get(name)) for name in METRICS})


#: The metrics the findings read: report artifact name -> metrics file name.
METRICS = {"comparison": "retrieval_comparison.json", "buckets": "retrieval_buckets.json",
           "retriever_experiments": "retriever_experiments.json", "readers": "readers.json",
           "reader_augmentation": "reader_augmentation.json"}


def metrics_from_scores(scores: Mapping[str, Scalar]) -> dict[str, Any]:
    """The metrics the findings read, rebuilt from pinned scores (``file#pointer`` -> value,
    :mod:`tasks.scores.metrics`)."""
    return {name: unflatten(scores, file) for name, file in METRICS.items()}


def findings_from_metrics(metrics: Mapping[str, Any]) -> list[Finding]:
    """Every finding of both papers from loaded metrics (keys of :data:`METRICS`; a missing or
    ``None`` value: that flow has not run)."""
    experiments = metrics.get("retriever_experiments")
    baseline = (experiments or {}).get("baseline", "dpr-nq")
    return [*_bm25_vs_dense(metrics.get("comparison"), baseline),
            *_popularity(metrics.get("buckets"), baseline),
            *_fine_tuning(experiments, baseline),
            *_readers(metrics.get("readers")),
            *_augmentation(metrics.get("reader_augmentation"))]


def _not_run(paper: str, claim: str, flow: str) -> Finding:
    return Finding(paper, claim, f"no metrics (`qastress stage {flow}`)", NOT_RUN)


def _bm25_vs_dense(comparison: Any, baseline: str) -> Iterator[Finding]:
    claim = "BM25 above DPR-NQ by >= 10 points of top-20 accuracy (paper, macro: 72.0 vs 49.7)"
    pair = (comparison or {}).get("pairs", {}).get(f"bm25_vs_{baseline}")
    if pair is None:
        yield _not_run(EQ_PAPER, claim, "retrieval")
        return
    accuracy = comparison["accuracy"]
    yield Finding(EQ_PAPER, claim, f"over {comparison['questions']} questions: BM25 "
                  f"{accuracy['bm25']:.2f}, {baseline} {accuracy[baseline]:.2f}, "
                  f"{_diff(pair)}", verdict(pair, margin=10.0))


def _pooled(sets: Mapping[str, Any], set_name: str, bucket: str | None,
            retriever: str) -> tuple[float, int]:
    """Top-20 over the questions of ``bucket`` (``None``: all buckets) of every relation."""
    hits = questions = 0.0
    for buckets in sets.get(set_name, {}).values():
        for name, cell in buckets.items():
            if (bucket is None or name == bucket) and cell.get("questions"):
                questions += cell["questions"]
                hits += cell["questions"] * cell[retriever]["top20"] / 100
    return (100 * hits / questions if questions else float("nan")), int(questions)


def _popularity(buckets: Any, baseline: str) -> Iterator[Finding]:
    falls = ("DPR-NQ falls from the most to the least popular subjects by more than BM25 "
             "(Figure 1)")
    seen = "DPR-NQ better on subjects seen in NQ training (train-ent) than on rand-ent"
    if not buckets or baseline not in buckets.get("retrievers", []):
        yield _not_run(EQ_PAPER, falls, "retrieval")
        yield _not_run(EQ_PAPER, seen, "retrieval")
        return
    sets, contrasts = buckets["sets"], buckets.get("contrasts", {})
    names = sorted({b for rel in sets.get("rand-ent", {}).values() for b in rel},
                   key=lambda b: int(b.removeprefix("bucket")))
    if not names:
        yield _not_run(EQ_PAPER, falls, "retrieval")
    else:
        rare, popular = names[0], names[-1]
        if buckets.get("bucket_order") == "descending":
            rare, popular = popular, rare
        rise = contrasts.get("popularity_rise", {})
        rare, popular = rise.get("rare_bucket", rare), rise.get("popular_bucket", popular)
        rises, parts = {}, []
        for retriever in (baseline, "bm25"):
            low, n_low = _pooled(sets, "rand-ent", rare, retriever)
            high, n_high = _pooled(sets, "rand-ent", popular, retriever)
            rises[retriever] = high - low
            parts.append(f"{retriever} {low:.1f} -> {high:.1f}")
        measured = (f"rand-ent, rarest bucket ({n_low} q) -> most popular ({n_high} q): "
                    + "; ".join(parts))
        versus = contrasts.get("popularity_rise", {}).get("rise_minus_bm25", {}).get(baseline)
        if versus is None:  # metrics of a run before the contrasts: a direction only
            yield Finding(EQ_PAPER, falls, measured,
                          AS_PAPER if rises[baseline] > rises["bm25"] else NOT_AS_PAPER)
        else:
            yield Finding(EQ_PAPER, falls, f"{measured}; {baseline}'s rise - BM25's "
                          f"{_diff(versus)}", verdict(versus))
    train, n_train = _pooled(sets, "train-ent", None, baseline)
    rand, n_rand = _pooled(sets, "rand-ent", None, baseline)
    if not n_train or not n_rand:
        yield _not_run(EQ_PAPER, seen, "retrieval")
        return
    measured = (f"{baseline} top-20: train-ent {train:.1f} ({n_train} q), rand-ent {rand:.1f} "
                f"({n_rand} q)")
    difference = contrasts.get("seen_minus_random", {}).get("difference", {}).get(baseline)
    if difference is None:
        yield Finding(EQ_PAPER, seen, measured, AS_PAPER if train > rand else NOT_AS_PAPER)
    else:
        yield Finding(EQ_PAPER, seen, f"{measured}, {_diff(difference)}", verdict(difference))


def _fine_tuning(experiments: Any, baseline: str) -> Iterator[Finding]:
    closes = "Fine-tuning on the question pattern closes most of the gap to BM25 (Table 2)"
    beats = "onlyP (passage encoder trained) beats onlyQ (Table 2)"
    loses = "Fine-tuning on one relation loses NQ-style accuracy (Table 3)"
    keeps = "Multi-task (the relation + NQ) keeps more of it than single-relation (Table 3)"
    rows = [r for r in (experiments or {}).get("pattern", {}).get("rows", [])
            if r.get("status") == "ran" and r.get("template") == "test"]
    if not rows:
        yield _not_run(EQ_PAPER, closes, "retriever-experiments")
    for row in rows:
        gap = row["bm25"] - row["baseline"]
        share = (row["top_k"] - row["baseline"]) / gap if gap > 0 else float("nan")
        yield Finding(EQ_PAPER, f"{closes}: {row['relation']}, {row['mode']}",
                      f"{baseline} {row['baseline']:.2f} -> {row['top_k']:.2f} "
                      f"({_diff(row['vs_baseline'])}), {share:.0%} of the gap to BM25 "
                      f"{row['bm25']:.2f}", verdict(row["vs_baseline"]) if share > 0.5
                      else NOT_ESTABLISHED if share > 0 else NOT_REPRODUCED)
    pairs = [p for p in (experiments or {}).get("pattern", {}).get("onlyP_vs_onlyQ", [])
             if p.get("status") == "ran"]
    if not pairs:
        yield _not_run(EQ_PAPER, beats, "retriever-experiments")
    for pair in pairs:
        yield Finding(EQ_PAPER, f"{beats}: {pair['relation']}, {pair['template']} template",
                      f"onlyP - onlyQ {_diff(pair['difference'])}", verdict(pair["difference"]))
    differences = (experiments or {}).get("multitask", {}).get("differences", [])
    by_pair = {(d["relation"], d["a"], d["b"]): d["difference"] for d in differences
               if d["on"] == "nq-dev"}
    relations = sorted({r for r, _, _ in by_pair})
    if not relations:
        yield _not_run(EQ_PAPER, loses, "retriever-experiments")
        yield _not_run(EQ_PAPER, keeps, "retriever-experiments")
    for relation in relations:
        lost = by_pair.get((relation, "single", "baseline"))
        if lost is not None:
            yield Finding(EQ_PAPER, f"{loses}: {relation}", f"NQ-style dev, single - "
                          f"{baseline} {_diff(lost)}", verdict(lost, sign=-1))
        kept = by_pair.get((relation, "multi", "single"))
        if kept is not None:
            yield Finding(EQ_PAPER, f"{keeps}: {relation}",
                          f"NQ-style dev, multi - single {_diff(kept)}", verdict(kept))


def _readers(readers: Any) -> Iterator[Finding]:
    lose = "Readers lose EM/F1 on paraphrased questions (Tables 1-2)"
    more = "The adversarial set loses more than the non-adversarial one"
    models = (readers or {}).get("readers", {})
    if not models:
        yield _not_run(PARA_PAPER, lose, "readers")
    drops = {}
    for reader, sets in models.items():
        if not sets:
            yield Finding(PARA_PAPER, f"{lose}: {reader}", _NO_PAIRS, NOT_RUN)
        for name, cell in sets.items():
            yield Finding(PARA_PAPER, f"{lose}: {reader}, {name}", f"{cell['questions']} pairs, "
                          f"F1 {cell['orig']['f1']:.2f} -> {cell['para']['f1']:.2f}, drop "
                          f"{_diff(cell['f1_drop'])}", verdict(cell["f1_drop"]))
            drops[(reader, name)] = cell["f1_drop"]["difference"]
    for reader in models:
        if (reader, "adv") in drops and (reader, "dev") in drops:
            adv, dev = drops[(reader, "adv")], drops[(reader, "dev")]
            yield Finding(PARA_PAPER, f"{more}: {reader}", f"F1 drop adv {_pts(adv)}, dev "
                          f"{_pts(dev)}", AS_PAPER if adv > dev else NOT_AS_PAPER)


_NO_PAIRS = "no paraphrased pairs to read (the paraphrased set is empty)"
#: Augmentation kind -> the paraphrased set the paper measures it on.
_AUGMENTED_ON = {"non_adversarial": "dev_para", "adversarial": "adv_para"}


def _augmentation(augmentation: Any) -> Iterator[Finding]:
    helps = "Re-training with paraphrased questions improves the paraphrased sets (Tables 3-6)"
    little = "The original dev set moves little (no established change)"
    kinds = {kind: cell.get("sets", {}) for kind, cell in
             (augmentation or {}).get("kinds", {}).items() if kind in _AUGMENTED_ON}
    if not kinds:
        yield _not_run(PARA_PAPER, helps, "reader-augmentation")
    for kind, sets in kinds.items():
        target = _AUGMENTED_ON[kind]
        if target not in sets:
            yield Finding(PARA_PAPER, f"{helps}: {kind}", _NO_PAIRS, NOT_RUN)
        else:
            gain = sets[target]["f1_gain"]
            yield Finding(PARA_PAPER, f"{helps}: {kind}", f"{target} F1 "
                          f"{sets[target]['before']['f1']:.2f} -> "
                          f"{sets[target]['after']['f1']:.2f} ({_diff(gain)})", verdict(gain))
        if "squad_dev" in sets:
            gain = sets["squad_dev"]["f1_gain"]
            yield Finding(PARA_PAPER, f"{little}: {kind}", f"SQuAD-style dev F1 {_diff(gain)}",
                          REPRODUCED if gain["ci_low"] <= 0 <= gain["ci_high"]
                          else NOT_REPRODUCED)


def findings_markdown(findings: list[Finding], measured_on: str = "this run") -> str:
    """The findings as a Markdown table (``measured_on`` heads the numbers' column), with the
    verdict rule under it."""
    lines = [f"| paper | finding | {measured_on} | verdict |", "|---|---|---|---|"]
    lines += [f"| {f.paper} | {f.claim} | {f.measured} | {f.verdict} |" for f in findings]
    lines += ["", VERDICT_RULE]
    return "\n".join(lines) + "\n"
