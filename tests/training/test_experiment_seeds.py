"""Tables 2-3 over fine-tuning seeds: each row's difference per seed (the main seed's models
keep their names, the others are ``<job>-seed<S>``), its mean, sd, t-interval and two-level
bootstrap, the report rows, and the config refusing a repeated seed."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.config import Params
from tasks.evaluation.crossed_bootstrap import crossed_bootstrap
from tasks.evaluation.over_seeds import SeedInterval
from tasks.reporting.seed_tables import experiment_seed_rows
from tasks.retriever_experiments_config import RetrieverExperimentsConfig
from tasks.training.experiment_plan import Job
from tasks.training.experiment_seeds import compare_over_seeds, seed_model
from tasks.training.experiment_tables import NQ_DEV, markdown_report

MAIN, OTHER = 12345, 7
JOBS = [Job("ft-p19-test-onlyq", "pattern", "P19", "test", "onlyQ", {}, {}),
        Job("ft-p19-test-onlyp", "pattern", "P19", "test", "onlyP", {}, {}),
        Job("ft-p159-test-onlyq", "pattern", "P159", "test", "onlyQ", {}, {}),
        Job("ft-p159-test-onlyp", "pattern", "P159", "test", "onlyP", {}, {}),
        Job("mt-p19-single", "multitask", "P19", "single", "full", {}, {}),
        Job("mt-p19-multi", "multitask", "P19", "multi", "full", {}, {})]
RAN = {j.name: not j.name.startswith("ft-p159") for j in JOBS}


def _hits() -> dict:
    """P19 no-overlap test (4 questions): baseline 1 hit; onlyQ 2 (main) / 3 (seed 7); onlyP
    3 / 2. Multitask: NQ dev (4 q) baseline 3, single 1 / 2, multi 3 / 3; P20 beside P19."""
    pattern = {"dpr-nq": {"P19": [1, 0, 0, 0]},
               "ft-p19-test-onlyq": {"P19": [1, 1, 0, 0]},
               "ft-p19-test-onlyq-seed7": {"P19": [1, 1, 1, 0]},
               "ft-p19-test-onlyp": {"P19": [1, 1, 1, 0]},
               "ft-p19-test-onlyp-seed7": {"P19": [0, 1, 1, 0]}}

    def mt(p19, p20, nq):
        return {"P19": p19, "P20": p20, NQ_DEV: nq}
    multitask = {"dpr-nq": mt([0, 0], [1, 0], [1, 1, 1, 0]),
                 "mt-p19-single": mt([1, 1], [0, 0], [1, 0, 0, 0]),
                 "mt-p19-single-seed7": mt([1, 0], [1, 0], [1, 1, 0, 0]),
                 "mt-p19-multi": mt([1, 1], [1, 0], [1, 1, 1, 0]),
                 "mt-p19-multi-seed7": mt([1, 1], [1, 1], [0, 1, 1, 1])}
    return {"pattern": pattern, "multitask": multitask}


@pytest.fixture()
def seeds():
    return compare_over_seeds(JOBS, RAN, _hits(), "dpr-nq", [MAIN, OTHER], MAIN,
                              SeedInterval(0.95, 500, 0))


def test_seed_models_are_named_apart_from_the_main_seed():
    assert seed_model("mt-p19-single", MAIN, MAIN) == "mt-p19-single"
    assert seed_model("mt-p19-single", OTHER, MAIN) == "mt-p19-single-seed7"


def test_table2_differences_per_seed_and_over_seeds(seeds):
    rows = {r["model"]: r for r in seeds["pattern"]["rows"]}
    assert set(rows) == {"ft-p19-test-onlyq", "ft-p19-test-onlyp"}  # P159 did not run
    onlyq = rows["ft-p19-test-onlyq"]["vs_baseline"]
    assert onlyq["per_seed"] == {"12345": 25.0, "7": 50.0} and onlyq["mean"] == 37.5
    assert onlyq["questions"] == 4 and onlyq["above_zero"] == 2
    (p_vs_q,) = seeds["pattern"]["onlyP_vs_onlyQ"]
    assert (p_vs_q["relation"], p_vs_q["template"]) == ("P19", "test")
    d = p_vs_q["difference"]
    assert d["per_seed"] == {"12345": 25.0, "7": -25.0} and d["mean"] == 0.0
    matrix = 100.0 * np.array([[0, 0, 1, 0], [-1, 0, 0, 0]])
    _, low, high = crossed_bootstrap(matrix, n=500, seed=0)
    assert (d["two_level_low"], d["two_level_high"]) == (round(low, 2), round(high, 2))


def test_table3_differences_per_seed(seeds):
    diffs = {(d["a"], d["b"], d["on"]): d["difference"]
             for d in seeds["multitask"]["differences"]}
    assert set(diffs) == {("single", "baseline", "P19"), ("single", "baseline", NQ_DEV),
                          ("multi", "baseline", "P19"), ("multi", "baseline", NQ_DEV),
                          ("multi", "single", NQ_DEV), ("multi", "single", "eq-all")}
    assert diffs["multi", "single", NQ_DEV]["per_seed"] == {"12345": 50.0, "7": 25.0}
    assert diffs["single", "baseline", NQ_DEV]["below_zero"] == 2
    pooled = diffs["multi", "single", "eq-all"]  # P19 and P20 pooled: 4 questions
    assert pooled["questions"] == 4 and pooled["per_seed"] == {"12345": 25.0, "7": 50.0}


def test_report_rows_and_markdown_section(seeds):
    header, rows = experiment_seed_rows(seeds)
    assert header[4] == "per seed (12345, 7)"
    by_what = {(r[1], r[2]): r for r in rows}
    assert by_what["test onlyP - onlyQ", "P19"][4:7] == ["+25.00, -25.00", "+0.00 (35.36)",
                                                          by_what["test onlyP - onlyQ",
                                                                  "P19"][6]]
    assert by_what["P19 multi - single", NQ_DEV][8] == "2 of 2"
    assert by_what["P19 multi - single", NQ_DEV][7].startswith("[")
    report = markdown_report({"k": 20, "baseline": "dpr-nq", "confidence": 0.95,
                              "n_bootstrap": 500, "seeds": seeds})
    assert "## Over fine-tuning seeds" in report and "the tables above are seed 12345" in report
    assert "| Table 3 | P19 multi - single | nq-dev | 4 | +50.00, +25.00 |" in report


def test_a_seed_model_without_hits_is_a_clear_error():
    hits = _hits()
    del hits["pattern"]["ft-p19-test-onlyp-seed7"]
    with pytest.raises(ValueError, match="P19: ft-p19-test-onlyp-seed7 has hits for 0 "
                                         "questions, dpr-nq for 4"):
        compare_over_seeds(JOBS, RAN, hits, "dpr-nq", [MAIN, OTHER], MAIN, SeedInterval())


def test_a_repeated_fine_tuning_seed_is_refused():
    with pytest.raises(ValueError, match=r"extra_seeds \[3, 3\] repeats seed\(s\) \[3\]"):
        RetrieverExperimentsConfig(extra_seeds=[3, 3])
    with pytest.raises(ValueError, match="repeats retriever_training.dpr.seed 12345"):
        Params.model_validate({"retriever_experiments": {"extra_seeds": [1, 12345]}})
    assert Params.model_validate(
        {"retriever_experiments": {"extra_seeds": [1, 2]}}).retriever_experiments.extra_seeds \
        == (1, 2)
