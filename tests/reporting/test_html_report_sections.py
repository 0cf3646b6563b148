"""The HTML report's sections in detail: the over-seeds blocks shown when run, one retriever
with nothing to compare, Markdown headings nested under their section, paths as displayed."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_world import AUGMENTATION, _build, _experiments, _world, _write

from tasks.layout import Layout
from tasks.reporting.html_page import render_markdown
from tasks.reporting.html_report import build_report, report_artifacts
from tasks.reporting.html_sections import display_path


def test_augmentation_over_training_seeds_is_shown_when_run(tmp_path):
    from tasks.reading.training_seeds import seed_summary

    layout = _world(tmp_path)
    assert "Over reader training seeds" not in _build(layout).html
    order, gains = ("42", "1", "2"), (4.0, -1.0, 6.5)
    block = {"questions": 20, "per_seed": {s: {"exact_match_gain": g}
                                           for s, g in zip(order, gains, strict=True)},
             "before_exact_match": seed_summary([50.0, 55.0, 60.0]),
             "after_exact_match": seed_summary([54.0, 54.0, 66.5]),
             "exact_match_gain": seed_summary(list(gains)) | {
                 "two_level_low": -2.1, "two_level_high": 8.3, "two_level_significant": False},
             "f1_gain": seed_summary([3.0, 0.5, 5.0])}
    pattern = {"per_seed": {s: {"exact_match": d} for s, d in zip(order, (2.0, 3.0, -1.0),
                                                                  strict=True)},
               "exact_match": seed_summary([2.0, 3.0, -1.0]),
               "f1": seed_summary([1.0, 2.0, 0.0])}
    drops = {"per_seed": {s: {"exact_match": d} for s, d in zip(order, (1.5, 2.5, 0.5),
                                                                strict=True)},
             "exact_match": seed_summary([1.5, 2.5, 0.5]), "f1": seed_summary([1.0, 2.0, 0.0])}
    seeds = {"seeds": [42, 1, 2], "confidence": 0.95, "kinds": {"non_adversarial": {
        "sets": {"dev_para": block}, "paraphrase_minus_original": {"dev": pattern},
        "paraphrase_drop": {"dev": {"before": drops, "after": pattern}}}}}
    _write(layout.augmentation_metrics, {**AUGMENTATION, "seeds": seeds})
    html = _build(layout).html
    for text in ("Over reader training seeds", "EM gain per seed (42, 1, 2)",
                 "+4.00, -1.00, +6.50", "+3.17 (3.82)", "2 of 3", "+2.00, +3.00, -1.00",
                 "+1.33 (2.08)", "Student-t 95% interval", "before augmentation",
                 "+1.50, +2.50, +0.50", "after: non_adversarial", "EM gain two-level CI",
                 "[-2.10, +8.30]"):
        assert text in html, text


def test_retriever_experiments_over_fine_tuning_seeds_are_shown_when_run(tmp_path):
    from tasks.evaluation.over_seeds import seed_summary

    layout = _world(tmp_path)
    assert "Over fine-tuning seeds" not in _build(layout).html
    diff = {"questions": 40, "per_seed": {"12345": -5.0, "1": -7.5},
            **seed_summary([-5.0, -7.5]), "two_level_low": -14.5, "two_level_high": 0.75,
            "two_level_significant": False}
    seeds = {"seeds": [12345, 1], "main_seed": 12345, "confidence": 0.95,
             "pattern": {"rows": [], "onlyP_vs_onlyQ": [
                 {"relation": "P19", "template": "test", "difference": diff}]},
             "multitask": {"differences": []}}
    _write(layout.experiment_metrics, {**_experiments(), "seeds": seeds})
    html = _build(layout).html
    for text in ("Over fine-tuning seeds", "per seed (12345, 1)", "test onlyP - onlyQ",
                 "-5.00, -7.50", "-6.25 (1.77)", "[-14.50, +0.75]", "0 of 2"):
        assert text in html, text


def test_markdown_headings_nest_under_the_section():
    assert render_markdown("# A\n\n## B\n").startswith("<h3>A</h3>\n<h4>B</h4>")


def test_display_path(tmp_path):
    assert display_path(tmp_path / "metrics" / "m.json", tmp_path) == "metrics/m.json"
    assert display_path(Path("/elsewhere/x.tsv"), tmp_path) == "/elsewhere/x.tsv"


@pytest.mark.parametrize("retrievers", [("bm25",)])
def test_one_retriever_has_nothing_to_compare(tmp_path, retrievers):
    layout = _world(tmp_path, flows=("retrieval",))
    layout.retrieval_comparison.unlink()
    params = layout.params.model_copy(update={
        "retrieval": layout.params.retrieval.model_copy(update={"retrievers": retrievers})})
    html = build_report(params, report_artifacts(Layout(params)), {}, []).html
    assert "One retriever configured: nothing to compare." in html
    assert "49.72" not in html  # dense is not configured, so not read
