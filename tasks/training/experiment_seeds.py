"""Tables 2-3 over fine-tuning seeds (not in Sciavolino et al., 2021).

One fine-tune per row compares single training draws: the paired bootstrap CIs of
:mod:`tasks.training.experiment_tables` resample the questions, not the training. With
``retriever_experiments.extra_seeds`` every fine-tune is trained again per seed (same data and
settings, from the same baseline pair; the main seed's models are the tables' own, the others
are named ``<job>-seed<S>``). Here each row's top-k and each key difference are given per seed
and summarised over the seeds (:func:`tasks.evaluation.over_seeds.summarise_over_seeds`: mean,
sample sd, Student-t interval over training draws and the two-level bootstrap over seeds and
questions): Table 2's fine-tuned - baseline and onlyP - onlyQ, Table 3's single / multi -
baseline and multi - single. The baseline and BM25 do not depend on the seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from tasks.evaluation.over_seeds import SeedInterval, summarise_over_seeds
from tasks.training.experiment_plan import Job
from tasks.training.experiment_tables import NQ_DEV, Hits


def seed_model(job: str, seed: int, main_seed: int) -> str:
    """The model name of ``job`` fine-tuned with ``seed``: the job's own for the main seed."""
    return job if seed == main_seed else f"{job}-seed{seed}"


#: hits of one model on one group (``eq-all``: every EntityQuestions test question, pooled).
HitsOf = Callable[[str, str], Sequence[int]]


def _difference(a: Callable[[int], str], b: Callable[[int], str], group: str,
                seeds: Sequence[int], hits_of: HitsOf, interval: SeedInterval
                ) -> dict[str, Any] | None:
    """``a(seed) - b(seed)`` on ``group`` per seed and summarised (points); None without
    questions."""
    rows = []
    for seed in seeds:
        x, y = (np.asarray(hits_of(m(seed), group), float) for m in (a, b))
        if x.shape != y.shape:
            raise ValueError(f"{group}: {a(seed)} has hits for {x.size} questions, "
                             f"{b(seed)} for {y.size} (a run missing or of another query set)")
        rows.append(x - y)
    if not rows[0].size:
        return None
    matrix = 100.0 * np.stack(rows)
    per_seed = [float(r.mean()) for r in matrix]
    return {"questions": int(matrix.shape[1]),
            "per_seed": {str(s): round(v, 2) for s, v in zip(seeds, per_seed, strict=True)},
            **summarise_over_seeds(per_seed, matrix, interval)}


def compare_over_seeds(jobs: Sequence[Job], ran: Mapping[str, bool], hits: Hits,
                       baseline: str, seeds: Sequence[int], main_seed: int,
                       interval: SeedInterval) -> dict[str, Any]:
    """``hits[query set][model][group]`` of every job under every seed (:func:`seed_model`
    names) and of the baseline; ``ran[job]``: the job ran (jobs that did not are left out).
    Returns per Table 2 row the fine-tuned - baseline difference and per relation and
    template onlyP - onlyQ, per Table 3 relation the single / multi - baseline and multi -
    single differences, each per seed and over seeds."""
    eq_groups = [g for g in hits.get("multitask", {}).get(baseline, {}) if g != NQ_DEV]

    def hits_of(query_set: str) -> HitsOf:
        def get(model: str, group: str) -> list[int]:
            by_group = hits.get(query_set, {}).get(model, {})
            if group == "eq-all":
                return [h for g in eq_groups for h in by_group.get(g, [])]
            return list(by_group.get(group, []))
        return get

    def tuned(job: str) -> Callable[[int], str]:
        return lambda seed: seed_model(job, seed, main_seed)

    def fixed(model: str) -> Callable[[int], str]:
        return lambda seed: model

    pattern = [j for j in jobs if j.table == "pattern" and ran.get(j.name)]
    rows = [{"relation": j.relation, "template": j.variant, "mode": j.mode, "model": j.name,
             "vs_baseline": _difference(tuned(j.name), fixed(baseline), j.relation, seeds,
                                        hits_of("pattern"), interval)} for j in pattern]
    by_key = {(j.relation, j.variant, j.mode): j for j in pattern}
    only_p_vs_q = [{"relation": r, "template": t, "difference": _difference(
        tuned(job.name), tuned(by_key[r, t, "onlyQ"].name), r, seeds, hits_of("pattern"),
        interval)} for (r, t, m), job in by_key.items() if m == "onlyP" and (r, t, "onlyQ")
        in by_key]
    differences = []
    multitask = [j for j in jobs if j.table == "multitask" and ran.get(j.name)]
    for relation in dict.fromkeys(j.relation for j in multitask):
        models = {"baseline": fixed(baseline)}
        models.update({j.variant: tuned(j.name) for j in multitask if j.relation == relation})
        pairs = [(v, "baseline", g) for v in ("single", "multi") for g in (relation, NQ_DEV)]
        pairs += [("multi", "single", NQ_DEV), ("multi", "single", "eq-all")]
        for a, b, group in pairs:
            if a in models and b in models:
                differences.append({"relation": relation, "a": a, "b": b, "on": group,
                                    "difference": _difference(models[a], models[b], group,
                                                              seeds, hits_of("multitask"),
                                                              interval)})
    return {"statistic": "top-k difference in points per fine-tuning seed; mean, sample sd and "
                         "Student-t interval over seeds; two-level interval: bootstrap over "
                         "seeds and questions (crossed)",
            "seeds": list(seeds), "main_seed": main_seed, "confidence": interval.confidence,
            "n_bootstrap": interval.n, "bootstrap_seed": interval.seed,
            "pattern": {"rows": rows, "onlyP_vs_onlyQ": only_p_vs_q},
            "multitask": {"differences": differences}}

