"""The papers' findings: the verdict rule, each finding read from its metrics, missing metrics
named as the stage to run, and the table in the report's overview and headline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tasks.reporting.findings import (
    AS_PAPER,
    NOT_AS_PAPER,
    NOT_ESTABLISHED,
    NOT_REPRODUCED,
    NOT_RUN,
    REPRODUCED,
    findings_markdown,
    study_findings,
    verdict,
)
from tasks.reporting.findings import METRICS as FILES


def _d(difference: float, low: float, high: float) -> dict:
    return {"difference": difference, "ci_low": low, "ci_high": high}


@pytest.mark.parametrize(("diff", "sign", "margin", "expected"), [
    (_d(5.0, 1.0, 9.0), 1, 0.0, REPRODUCED),
    (_d(5.0, -1.0, 9.0), 1, 0.0, NOT_ESTABLISHED),
    (_d(0.0, -1.0, 1.0), 1, 0.0, NOT_REPRODUCED),
    (_d(-5.0, -9.0, -1.0), 1, 0.0, NOT_REPRODUCED),
    (_d(-5.0, -9.0, -1.0), -1, 0.0, REPRODUCED),  # the paper claims a fall
    (_d(-5.0, -9.0, 0.5), -1, 0.0, NOT_ESTABLISHED),
    (_d(8.0, 2.0, 14.0), 1, 10.0, NOT_ESTABLISHED),  # short of the paper's margin
    (_d(12.0, 2.0, 14.0), 1, 10.0, REPRODUCED),
])
def test_the_verdict_rule(diff, sign, margin, expected):
    assert verdict(diff, sign=sign, margin=margin) == expected


def _bucket(q: int, bm25: float, dpr: float) -> dict:
    return {"questions": q, "bm25": {"top20": bm25}, "dpr-nq": {"top20": dpr}}


METRICS = {
    "comparison": {"questions": 40, "accuracy": {"bm25": 70.0, "dpr-nq": 62.0},
                   "pairs": {"bm25_vs_dpr-nq": _d(8.0, 3.0, 13.0)}},
    "buckets": {"retrievers": ["bm25", "dpr-nq"], "bucket_order": "ascending", "sets": {
        "rand-ent": {"P19": {"bucket0": _bucket(10, 80.0, 20.0), "bucket1": _bucket(2, 90.0, 70.0)},
                     "P36": {"bucket0": _bucket(10, 90.0, 40.0), "bucket1": _bucket(0, 0, 0)}},
        "train-ent": {"P19": {"bucket0": _bucket(4, 85.0, 25.0)}}}},
    "retriever_experiments": {"baseline": "dpr-nq", "pattern": {
        "rows": [{"relation": "P19", "template": "test", "mode": "onlyQ", "status": "ran",
                  "top_k": 70.0, "bm25": 90.0, "baseline": 40.0,
                  "vs_baseline": _d(30.0, 20.0, 40.0)},
                 {"relation": "P19", "template": "similar", "mode": "onlyQ", "status": "ran",
                  "top_k": 45.0, "bm25": 90.0, "baseline": 40.0,
                  "vs_baseline": _d(5.0, -1.0, 11.0)}],
        "onlyP_vs_onlyQ": [{"relation": "P19", "template": "test", "status": "ran",
                            "difference": _d(-2.0, -6.0, 2.0)}]},
        "multitask": {"differences": [
            {"relation": "P19", "a": "single", "b": "baseline", "on": "nq-dev",
             "difference": _d(-6.0, -10.0, -2.0)},
            {"relation": "P19", "a": "multi", "b": "single", "on": "nq-dev",
             "difference": _d(4.0, -1.0, 9.0)},
            {"relation": "P19", "a": "multi", "b": "single", "on": "eq-all",
             "difference": _d(9.0, 8.0, 10.0)}]}},
    "readers": {"readers": {"minilm": {
        "adv": {"questions": 50, "orig": {"f1": 80.0}, "para": {"f1": 70.0},
                "f1_drop": _d(10.0, 2.0, 18.0)},
        "dev": {"questions": 150, "orig": {"f1": 75.0}, "para": {"f1": 74.0},
                "f1_drop": _d(1.0, -3.0, 5.0)}}}},
    "reader_augmentation": {"kinds": {"adversarial": {"sets": {
        "adv_para": {"before": {"f1": 70.0}, "after": {"f1": 76.0},
                     "f1_gain": _d(6.0, 1.0, 11.0)},
        "squad_dev": {"before": {"f1": 75.0}, "after": {"f1": 70.0},
                      "f1_gain": _d(-5.0, -8.0, -2.0)}}}}},
}


def _artifacts(tmp_path: Path, metrics: dict) -> dict[str, Path]:
    paths = {}
    for name, content in metrics.items():
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(content), encoding="utf-8")
    return paths


def test_each_finding_is_read_from_its_metrics_with_its_verdict(tmp_path):
    found = {f.claim: f for f in study_findings(_artifacts(tmp_path, METRICS))}
    bm25 = found["BM25 above DPR-NQ by >= 10 points of top-20 accuracy (paper, macro: 72.0 vs "
                 "49.7)"]
    assert bm25.measured == "over 40 questions: BM25 70.00, dpr-nq 62.00, +8.00 [+3.00, +13.00]"
    assert bm25.verdict == NOT_ESTABLISHED  # significant, but short of the 10 points
    falls = next(f for c, f in found.items() if c.startswith("DPR-NQ falls"))
    # pooled over relations: rarest 20 questions (dpr 30.0, bm25 85.0), most popular 2
    assert "rarest bucket (20 q) -> most popular (2 q): dpr-nq 30.0 -> 70.0; bm25 85.0 -> 90.0" \
        in falls.measured and falls.verdict == AS_PAPER
    seen = next(f for c, f in found.items() if c.startswith("DPR-NQ better on subjects seen"))
    assert "train-ent 25.0 (4 q), rand-ent 33.6 (22 q)" in seen.measured
    assert seen.verdict == NOT_AS_PAPER
    closes = next(f for c, f in found.items() if c.startswith("Fine-tuning on the question"))
    assert "60% of the gap to BM25 90.00" in closes.measured and closes.verdict == REPRODUCED
    assert not any("similar" in c and "closes" in c for c in found)  # the test template only
    beats = next(f for c, f in found.items() if c.startswith("onlyP"))
    assert beats.claim.endswith("P19, test template") and beats.verdict == NOT_REPRODUCED
    loses = next(f for c, f in found.items() if c.startswith("Fine-tuning on one relation"))
    assert loses.verdict == REPRODUCED and "-6.00 [-10.00, -2.00]" in loses.measured
    keeps = next(f for c, f in found.items() if c.startswith("Multi-task"))
    assert keeps.verdict == NOT_ESTABLISHED and "+4.00 [-1.00, +9.00]" in keeps.measured
    readers = {c.rsplit(", ", 1)[1]: f for c, f in found.items() if c.startswith("Readers lose")}
    assert readers["adv"].verdict == REPRODUCED and readers["dev"].verdict == NOT_ESTABLISHED
    more = next(f for c, f in found.items() if c.startswith("The adversarial set loses more"))
    assert more.measured == "F1 drop adv +10.00, dev +1.00" and more.verdict == AS_PAPER
    helps = next(f for c, f in found.items() if c.startswith("Re-training"))
    assert helps.claim.endswith(": adversarial") and helps.verdict == REPRODUCED
    assert "adv_para F1 70.00 -> 76.00" in helps.measured
    little = next(f for c, f in found.items() if c.startswith("The original dev set"))
    assert little.verdict == NOT_REPRODUCED  # the dev set's fall is established


def test_missing_metrics_name_the_stage_to_run(tmp_path):
    found = study_findings({})
    assert {f.verdict for f in found} == {NOT_RUN}
    assert {f.measured for f in found} >= {
        "no metrics (`qastress stage retrieval`)",
        "no metrics (`qastress stage retriever-experiments`)",
        "no metrics (`qastress stage readers`)",
        "no metrics (`qastress stage reader-augmentation`)"}
    partial = study_findings(_artifacts(tmp_path, {"readers": METRICS["readers"]}))
    assert sum(f.verdict != NOT_RUN for f in partial) == 3  # two sets and adv-vs-dev


def test_the_markdown_table_has_a_row_per_finding_and_the_rule():
    found = study_findings({})
    table = findings_markdown(found)
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    assert len(rows) == len(found) + 1 and rows[0] == "| paper | finding | this run | verdict |"
    assert "Verdicts: reproduced = in the paper's direction" in table


def test_the_report_shows_the_findings_in_its_overview_and_headline(tmp_path):
    from tasks.config import Params, PathsConfig
    from tasks.layout import Layout
    from tasks.reporting.html_report import build_report, report_artifacts

    paths = {name: tmp_path / name for name in ("data", "results", "metrics", "plots", "reports")}
    params = Params(profile="smoke", paths=PathsConfig(**paths, state=tmp_path / "state"))
    report = build_report(params, report_artifacts(Layout(params)))  # no flow has run
    assert "The papers&#39; findings</h3>" in report.html
    assert "Readers lose EM/F1 on paraphrased questions (Tables 1-2)</td>" in report.html
    assert "## The papers' findings" in report.headline and report.findings in report.headline
    assert "| no metrics (`qastress stage retrieval`) | not run |" in report.findings


def test_the_findings_command_reads_a_run_or_the_pins(tmp_path):
    from typer.testing import CliRunner

    from flows.cli import app

    runner = CliRunner()
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    for name, content in METRICS.items():
        (metrics / FILES[name]).write_text(json.dumps(content), encoding="utf-8")
    run = runner.invoke(app, ["findings", "--metrics", str(metrics)])
    assert run.exit_code == 0, run.output
    assert f"| paper | finding | this run ({metrics}) | verdict |" in run.output
    assert "| 50 pairs, F1 80.00 -> 70.00, drop +10.00 [+2.00, +18.00] | reproduced |" in \
        run.output
    intel = runner.invoke(app, ["findings", "--pinned", "-p", "demo", "--machine", "none"])
    amd = runner.invoke(app, ["findings", "--pinned", "-p", "demo", "--machine", "AMD EPYC 7B13"])
    assert intel.exit_code == amd.exit_code == 0
    assert "pinned (demo.yaml)" in intel.output and "| 47 pairs, F1 84.40" in intel.output
    assert "pinned (demo.yaml, CPU AMD EPYC 7B13)" in amd.output and "| 56 pairs" in amd.output
    missing = runner.invoke(app, ["findings", "--metrics", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "no metrics directory" in missing.output


def test_empty_paraphrased_sets_are_named_not_skipped(tmp_path):
    """The smoke profile's paraphrased sets can be empty: the reader rows say so, and the
    dev set's row of an augmentation still shows."""
    metrics = {"readers": {"readers": {"minilm": {}}},
               "reader_augmentation": {"kinds": {"non_adversarial": {"sets": {
                   "squad_dev": {"f1_gain": _d(1.0, -2.0, 4.0)}}}}}}
    found = {f.claim: f for f in study_findings(_artifacts(tmp_path, metrics))}
    for claim in ("Readers lose EM/F1 on paraphrased questions (Tables 1-2): minilm",
                  "Re-training with paraphrased questions improves the paraphrased sets "
                  "(Tables 3-6): non_adversarial"):
        assert found[claim].verdict == NOT_RUN and "paraphrased set is empty" in \
            found[claim].measured
    little = found["The original dev set moves little (no established change): non_adversarial"]
    assert little.verdict == REPRODUCED and little.measured == "SQuAD-style dev F1 +1.00 " \
        "[-2.00, +4.00]"


def test_the_popularity_findings_take_their_verdicts_from_the_contrasts(tmp_path):
    buckets = json.loads(json.dumps(METRICS["buckets"]))
    buckets["contrasts"] = {
        "popularity_rise": {"rare_bucket": "bucket0", "popular_bucket": "bucket1",
                            "rise_minus_bm25": {"dpr-nq": _d(35.0, 12.0, 58.0)}},
        "seen_minus_random": {"difference": {"dpr-nq": _d(-11.4, -30.0, 8.0)}}}
    found = {f.claim.split(" (")[0]: f for f in study_findings(_artifacts(tmp_path,
                                                                          {"buckets": buckets}))}
    falls = found["DPR-NQ falls from the most to the least popular subjects by more than BM25"]
    assert falls.verdict == REPRODUCED
    assert falls.measured.endswith("; dpr-nq's rise - BM25's +35.00 [+12.00, +58.00]")
    seen = found["DPR-NQ better on subjects seen in NQ training"]
    assert seen.verdict == NOT_REPRODUCED and seen.measured.endswith(", -11.40 [-30.00, +8.00]")
