"""The HTML report: numbers from the artifacts, figures embedded, params and fingerprints,
byte-identical on rebuild, missing flows listed as not run, text escaped."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from pathlib import Path

import pytest

from tasks.config import Params, PathsConfig
from tasks.layout import Layout
from tasks.reporting.html_page import render_markdown
from tasks.reporting.html_report import (
    build_report,
    figure_files,
    publish_report_artifacts,
    raw_input_files,
    report_artifacts,
    write_report,
)
from tasks.reporting.html_sections import display_path

PNG = b"\x89PNG\r\n\x1a\nfake figure bytes"


def _params(root: Path) -> Params:
    paths = {name: root / name for name in ("data", "results", "metrics", "plots", "reports")}
    return Params(profile="smoke", paths=PathsConfig(**paths, state=root / "state"))


def _topk(name: str, p19: float, p36: float, macro: float) -> dict:
    return {"retriever": name, "has_answer_mode": "string", "questions": 40,
            "macro": {"top1": macro - 10, "top5": macro - 5, "top20": macro, "top100": 99.0},
            "per_relation": {
                "P19": {"top1": 1.0, "top5": 2.0, "top20": p19, "top100": 99.0},
                "P36": {"top1": 3.0, "top5": 4.0, "top20": p36, "top100": 99.0}}}


def _write(path: Path, content: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content, indent=2), encoding="utf-8")


ALL_FLOWS = ("entity-questions", "train-retriever", "retrieval", "retriever-experiments",
             "specialised-encoders", "paraphrase", "paraphrased-retrieval", "readers",
             "retrieve-then-read", "reader-augmentation")


_GAIN = {"difference": 4.5, "ci_low": 0.75, "ci_high": 8.25, "significant": True}
READERS = {"n_bootstrap": 200, "seed": 0, "confidence": 0.95, "sets": {"dev": ["o", "p"]},
           "readers": {"minilm": {"dev": {
               "questions": 7, "orig": {"exact_match": 57.14, "f1": 61.9},
               "para": {"exact_match": 42.86, "f1": 47.62},
               "exact_match_drop": {"difference": 14.29, "ci_low": -14.29, "ci_high": 42.86,
                                    "significant": False},
               "f1_drop": {"difference": 14.28, "ci_low": 1.25, "ci_high": 30.5,
                           "significant": True}}}},
           "squad_dev": {"minilm": {"exact_match": 66.5, "f1": 71.25, "questions": 20}},
           "squad_dev_buckets": {"questions": 20, "linked": 18, "unlinked": 2,
                                 "weight": "questions",
                                 "bucket0": "rarest subjects", "buckets": {
               "bucket0": {"questions": 18, "hyperlinks": [3, 77],
                           "readers": {"minilm": {"exact_match": 61.11, "f1": 64.72}}},
               "bucket1": {"questions": 0, "hyperlinks": None, "readers": {"minilm": None}}}},
           "paraphrased_buckets": {"dev": {
               "pairs": 7, "linked": 6, "unlinked": 1, "n_buckets": 2, "order": "ascending",
               "weight": "questions", "bucket0": "rarest subjects", "buckets": {
                   "bucket0": {"pairs": 6, "hyperlinks": [4, 70], "readers": {"minilm": {
                       "exact_match": {"orig": 66.67, "para": 33.33, "drop": 33.33,
                                       "ci_low": 0.0, "ci_high": 66.67},
                       "f1": {"orig": 70.0, "para": 40.0, "drop": 30.0, "ci_low": 0.0,
                              "ci_high": 60.0}}}},
                   "bucket1": {"pairs": 0, "hyperlinks": None, "readers": {"minilm": None}}}}},
           "paraphrased_edit_groups": {"dev": {"pairs": 7, "groups": {
               "removes_answer_sentence_word": {"pairs": 2, "readers": {"minilm": {
                   "exact_match": {"orig": 50.0, "para": 0.0, "drop": 50.0, "ci_low": 0.0,
                                   "ci_high": 100.0},
                   "f1": {"orig": 55.0, "para": 5.0, "drop": 50.0, "ci_low": 0.0,
                          "ci_high": 100.0}}}},
               "other_content_change": {"pairs": 0, "readers": {"minilm": None}},
               "no_content_change": {"pairs": 5, "readers": {"minilm": {
                   "exact_match": {"orig": 60.0, "para": 60.0, "drop": 0.0, "ci_low": -40.0,
                                   "ci_high": 40.0},
                   "f1": {"orig": 62.0, "para": 62.0, "drop": 0.0, "ci_low": -40.0,
                          "ci_high": 40.0}}}}}}}}
AUGMENTATION = {"n_bootstrap": 200, "seed": 0, "confidence": 0.95, "files": {}, "kinds": {
    "non_adversarial": {
        "augmentation": {"threshold": 0.9, "training_questions": 40, "candidates": 31,
                         "skipped_below_bar": 19, "above_bar": 12, "added": 10,
                         "requested": 20, "shortfall": 10},
        "sets": {"dev_para": {"questions": 7, "before": {"exact_match": 42.86, "f1": 47.62},
                              "after": {"exact_match": 47.36, "f1": 52.12},
                              "exact_match_gain": _GAIN, "f1_gain": _GAIN},
                 "adv_para": {"questions": 0}}}}}

_RTR_BLOCK = {"top1": {"exact_match": 12.5, "answer_recall": 37.5, "questions": 8,
                       "per_relation": {"P19": {"exact_match": 25.0}}},
              "top5": {"exact_match": 31.25, "answer_recall": 62.5, "questions": 8,
                       "per_relation": {"P19": {"exact_match": 33.33}}}}
RETRIEVE_THEN_READ = {
    "ks": [1, 5], "baseline": "bm25", "questions": 8, "questions_per_relation": {"P19": 8},
    "n_bootstrap": 200, "seed": 0, "confidence": 0.95, "reader": "minilm",
    "retrievers": {"bm25": _RTR_BLOCK, "dense": {
        "top1": {**_RTR_BLOCK["top1"], "exact_match": 6.25},
        "top5": {**_RTR_BLOCK["top5"], "per_relation": {"P19": {"exact_match": 11.11}}}}},
    "comparisons": {"bm25 - dense": {
        "top1": {"difference": 6.25, "ci_low": -3.5, "ci_high": 18.75, "significant": False},
        "top5": {"difference": 0.0, "ci_low": -9.0, "ci_high": 9.0, "significant": False}}}}


def _experiments() -> dict:
    """A small metrics/retriever_experiments.json: one Table 2 row that ran, one not run."""
    diff = {"difference": 12.5, "ci_low": 2.5, "ci_high": 25.0, "significant": True,
            "questions": 40}
    row = {"relation": "P19", "template": "test", "mode": "onlyP", "model": "ft-p19-test-onlyp",
           "status": "ran", "train_questions": 95, "test_questions": 40, "top_k": 63.75,
           "bm25": 91.25, "baseline": 51.25, "vs_baseline": diff}
    empty = {**row, "relation": "P159", "model": "ft-p159-test-onlyp", "top_k": None,
             "status": "0 training questions: not run", "train_questions": 0,
             "vs_baseline": None}
    t3 = {"relation": "P19", "variant": "multi", "model": "mt-p19-multi", "status": "ran",
          "train_questions": 84, "sources": {"P19": 24, "nq": 60}, "relation_top_k": 44.44,
          "relation_questions": 20, "eq_macro_top_k": 33.33, "eq_relations": 24,
          "eq_questions": 480, "nq_dev_top_k": 27.27, "nq_dev_questions": 20}
    return {"k": 20, "baseline": "dpr-nq", "has_answer_mode": "eq-string",
            "nq_has_answer_mode": "dpr-string", "n_bootstrap": 1000, "seed": 0,
            "confidence": 0.95, "jobs": {"ft-p19-test-onlyp": {}, "ft-p159-test-onlyp": {},
                                         "mt-p19-multi": {}},
            "not_run": ["ft-p159-test-onlyp"], "train_seconds": {"ft-p19-test-onlyp": 3.5},
            "pattern": {"rows": [row, empty], "onlyP_vs_onlyQ": []},
            "multitask": {"rows": [t3], "differences": [
                {"relation": "P19", "a": "multi", "b": "single", "on": "nq-dev",
                 "difference": {**diff, "difference": -7.5, "ci_low": -15.0, "ci_high": -1.25}}],
                "eq_relations": ["P19"]},
            "figure2": {"status": "ran", "passages": {"NQ-style": 20, "P19": 20},
                        "silhouette_cosine": {"before": 0.0412, "after": 0.3125}}}


def _world(root: Path, flows: tuple[str, ...] = ALL_FLOWS) -> Layout:
    """Fake artifacts of the named flows (and two raw inputs) under ``root``."""
    layout = Layout(_params(root))
    raw = layout.raw
    _write(raw / "wikipedia" / "psgs_w100.tsv", "id\ttext\ttitle\n1\tsome text\tA\n")
    _write(raw / "trex" / "a.json", "[]")
    if "entity-questions" in flows:
        _write(layout.eq_summary, "# EntityQuestions construction\n\nRelations selected: "
               "2 of 24 <script>alert(1)</script>\n\n| relation | test |\n|---|---:|\n"
               "| P19 | 20 |\n")
    if "retrieval" in flows:
        for name, numbers in {"bm25": (71.25, 63.5, 67.38), "dense": (55.0, 44.44, 49.72),
                              "hybrid": (80.0, 70.0, 75.0)}.items():
            _write(layout.retrieval_metrics(name), _topk(name, *numbers))
        _write(layout.retrieval_comparison, {
            "k": 20, "questions": 40, "n_bootstrap": 1000, "seed": 0, "confidence": 0.95,
            "accuracy": {"bm25": 67.5, "dense": 50.0, "hybrid": 75.0},
            "pairs": {"bm25_vs_dense": {"a": "bm25", "b": "dense", "difference": 17.5,
                                        "ci_low": 3.21, "ci_high": 31.87, "significant": True}}})
        _write(layout.retrieval_buckets_metrics, {
            "retrievers": ["bm25", "dense"], "ks": [1, 5, 20, 100], "has_answer_mode": "string",
            "bucket_order": "ascending", "bucket0": "rarest subjects",
            "sets": {"rand-ent": {"P19": {
                "bucket0": {"questions": 5, "hyperlinks": [0, 3],
                            "bm25": {"top20": 42.42}, "dense": {"top20": 24.24}},
                "bucket1": {"questions": 0, "hyperlinks": [4, 9], "bm25": None,
                            "dense": None}}}}})
        _write(layout.retrieval_accuracy_plot, PNG + b"k")
        _write(layout.retrieval_buckets_plot, PNG + b"buckets")
    if "train-retriever" in flows:
        _write(layout.retriever_training_metrics, {"dpr-nq": {
            "global_step": 300, "epochs": 6, "final_train_loss": 0.4321, "train_seconds": 61.5,
            "loss_curve": [[10 * i, 3.0 - i / 10] for i in range(1, 31)]}})
    if "retriever-experiments" in flows:
        _write(layout.experiment_metrics, _experiments())
        _write(layout.experiment_tsne_plot, PNG + b"tsne")
    if "specialised-encoders" in flows:
        rows = {"P19": {"shared": {"top20": 31.5}, "specialised": {"top20": 44.25},
                        "difference": 12.75}}
        _write(layout.specialised_metrics, {
            "enabled": True, "k": 20, "ks": [20], "has_answer_mode": "eq-string",
            "relations": {"P19": {"status": "ran", "train_questions": 9, "test_questions": 4},
                          "P36": {"status": "no training questions: not run",
                                  "train_questions": 0, "test_questions": 4}},
            "counts": {"relations": 2, "ran": 1,
                       "not_run": {"no training questions: not run": 1}},
            "paq": {"questions": 80, "sampled": 100},
            "passage_encoders": {"dpr-nq": {
                "per_relation": rows, "shared_all": {"P19": {"top20": 31.5},
                                                     "P36": {"top20": 12.0}},
                "macro": {"shared": {"top20": 31.5}, "specialised": {"top20": 44.25}},
                "index": {"rows": 12, "opened": 1},
                "memory": {"one_index_bytes": 4141, "relations": 1,
                           "one_index_per_relation_bytes": 4141, "saved_bytes": 0}}}})
    if "paraphrase" in flows:
        _write(layout.paraphrase_metrics, {"test_set": {"questions": 20, "test_pairs": 7}})
        _write(layout.paraphrase_report, "# Paraphrased questions\n\n## Example paraphrases\n\n"
               "| original | paraphrase |\n|---|---|\n| Where was A born? | A's birthplace? |\n")
    if "paraphrased-retrieval" in flows:
        _write(layout.retrieval_paraphrased_metrics, {
            "k": 20, "ks": [1, 20], "has_answer_mode": "string", "n_bootstrap": 1000,
            "seed": 0, "confidence": 0.95, "collection_passages": 12,
            "sets": {"dev": {"questions": 7, "most_hurt": "dense", "retrievers": {"dense": {
                "orig": {"top1": 50.0, "top20": 85.71}, "para": {"top1": 40.0, "top20": 71.43},
                "difference": 14.29, "ci_low": -1.5, "ci_high": 28.57, "significant": False,
                "lost": 1, "gained": 0}}}}})
    if "readers" in flows:
        _write(layout.readers_metrics, READERS)
    if "reader-augmentation" in flows:
        _write(layout.augmentation_metrics, AUGMENTATION)
    if "retrieve-then-read" in flows:
        _write(layout.retrieve_then_read_metrics, RETRIEVE_THEN_READ)
    return layout


def _build(layout: Layout):
    return build_report(layout.params, report_artifacts(layout), raw_input_files(layout),
                        figure_files(layout))


def test_report_holds_every_flows_numbers_figures_params_and_fingerprints(tmp_path):
    layout = _world(tmp_path)
    report = _build(layout)
    html = report.html
    assert report.not_run == [] and "Not run" not in html
    for number in ("71.25", "63.50", "67.38", "49.72", "75.00",  # top-k tables and macro
                   "+17.50", "[+3.21, +31.87]",  # comparison with its CI
                   "42.42", "24.24", "0–3",  # buckets (Figure 1 data)
                   "85.71", "71.43", "+14.29", "[-1.50, +28.57]",  # paraphrased retrieval
                   "A's birthplace?",  # paraphrase report (Markdown)
                   "0.43", "2.90", "30 logged points",  # DPR-NQ training
                   "63.75", "91.25", "51.25", "+12.50 [+2.50, +25.00] * (n=40)",  # Table 2
                   "0 training questions: not run", "P19 24 + nq 60", "27.27",  # Table 3
                   "-7.50 [-15.00, -1.25]", "+0.312",  # Table 3 CI, Figure 2 silhouette
                   "44.25", "+12.75", "no training questions: not run", "4,141 bytes",  # Table 4
                   "57.14", "47.62", "+14.28", "[+1.25, +30.50] *", "71.25",  # Tables 1-2
                   "18 of 20 questions", "3-77", "61.11", "64.72",  # dev per bucket
                   "6 of 7 pairs", "4-70", "66.67", "+33.33 [+0.00, +66.67]",  # dev set per bucket
                   "drops a word of the answer&#39;s sentence", "+50.00 [+0.00, +100.00]",
                   "+0.00 [-40.00, +40.00]",  # dev set per edit group
                   "0.9", "19", "52.12", "+4.50", "[+0.75, +8.25] *",  # Tables 3-6
                   "12.50", "37.50", "62.50", "+6.25", "[-3.50, +18.75]", "11.11"):  # RTR
        assert number in html, number
    assert "61.50" not in html  # training times stay in the metrics (reproducible page)
    for png in (layout.retrieval_accuracy_plot, layout.retrieval_buckets_plot,
                layout.experiment_tsne_plot):
        assert f"data:image/png;base64,{base64.b64encode(png.read_bytes()).decode()}" in html
    assert "k1: 0.9" in html and "profile: smoke" in html  # the resolved params as YAML
    assert "data: data" in html  # paths relative to the run's root, not absolute
    raw = layout.raw / "wikipedia" / "psgs_w100.tsv"
    for path in (raw, layout.raw / "trex" / "a.json", layout.retrieval_metrics("bm25"),
                 layout.eq_summary, layout.retrieval_buckets_plot):
        assert hashlib.sha256(path.read_bytes()).hexdigest() in html, path
    assert str(tmp_path) not in html
    assert "bm25: macro top-20 accuracy 67.38%" in report.headline
    assert "paraphrased test set: 7 of 20" in report.headline
    assert "reader minilm on dev: F1 orig - para +14.28 points" in report.headline
    assert "non_adversarial augmentation on dev_para: F1 after - before +4.50" in \
        report.headline
    assert "retrieve-then-read EM@5 (macro): bm25 31.25, dense 31.25" in report.headline
    for anchor in ("overview", "entityquestions", "topk", "comparison", "buckets", "paraphrase",
                   "paraphrased-retrieval", "retriever-training", "retriever-experiments",
                   "specialised", "readers", "retrieve-then-read", "reader-augmentation",
                   "params", "fingerprints"):
        assert f'href="#{anchor}"' in html and f'id="{anchor}"' in html


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


def test_rebuild_is_byte_identical_here_and_in_another_directory(tmp_path):
    layout = _world(tmp_path / "one")
    out = layout.report_html
    first = write_report(layout.params, report_artifacts(layout), raw_input_files(layout),
                         figure_files(layout), Path(__file__), out)
    assert first["path"] == str(out)
    before = out.read_bytes()
    write_report(layout.params, report_artifacts(layout), raw_input_files(layout),
                 figure_files(layout), Path(__file__), out)
    assert out.read_bytes() == before
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []  # atomic
    elsewhere = _world(tmp_path / "two")
    assert _build(elsewhere).html.encode() == before


def test_missing_flows_are_listed_as_not_run(tmp_path):
    layout = _world(tmp_path, flows=("entity-questions",))
    report = _build(layout)
    assert report.not_run == ["train-retriever", "retrieval", "retriever-experiments",
                              "specialised-encoders", "paraphrase", "paraphrased-retrieval",
                              "readers", "retrieve-then-read", "reader-augmentation"]
    html = report.html
    # top-k, comparison, buckets, retriever training and experiments, specialised encoders,
    # paraphrase x2, readers x3
    assert html.count('class="not-run-note"') == 11
    assert "metrics/retrieval_bm25.json" in html  # what is missing, relative to the run root
    assert "metrics/specialised_encoders.json" in html
    assert "metrics/reader_augmentation.json" in html
    assert ("not run: train-retriever, retrieval, retriever-experiments, specialised-encoders, "
            "paraphrase, paraphrased-retrieval, readers, retrieve-then-read, "
            "reader-augmentation") in report.headline
    assert "Relations selected" in html  # what did run is there


def test_partial_retrieval_keeps_what_exists(tmp_path):
    layout = _world(tmp_path, flows=("retrieval",))
    layout.retrieval_metrics("dense").unlink()
    html = _build(layout).html
    assert "67.38" in html and "49.72" not in html
    assert "Not written: metrics/retrieval_dense.json" in html


def test_text_from_artifacts_is_escaped(tmp_path):
    layout = _world(tmp_path)
    metrics = json.loads(layout.retrieval_metrics("bm25").read_text())
    metrics["per_relation"]["<b>P&19</b>"] = metrics["per_relation"].pop("P19")
    _write(layout.retrieval_metrics("bm25"), metrics)
    html = _build(layout).html
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>P&19</b>" not in html and "&lt;b&gt;P&amp;19&lt;/b&gt;" in html


def test_markdown_headings_nest_under_the_section():
    assert render_markdown("# A\n\n## B\n").startswith("<h3>A</h3>\n<h4>B</h4>")


def test_display_path(tmp_path):
    assert display_path(tmp_path / "metrics" / "m.json", tmp_path) == "metrics/m.json"
    assert display_path(Path("/elsewhere/x.tsv"), tmp_path) == "/elsewhere/x.tsv"


def test_publishing_outside_a_prefect_run_is_a_no_op(tmp_path, caplog):
    with caplog.at_level(logging.DEBUG, logger="tasks.reporting.tables"):
        publish_report_artifacts(tmp_path / "report.html", "# headline\n")
    assert [r.getMessage() for r in caplog.records] == [
        f"not in a Prefect run: artifact {key} not published"
        for key in ("qastress-report", "qastress-report-summary")]


@pytest.mark.parametrize("retrievers", [("bm25",)])
def test_one_retriever_has_nothing_to_compare(tmp_path, retrievers):
    layout = _world(tmp_path, flows=("retrieval",))
    layout.retrieval_comparison.unlink()
    params = layout.params.model_copy(update={
        "retrieval": layout.params.retrieval.model_copy(update={"retrievers": retrievers})})
    html = build_report(params, report_artifacts(Layout(params)), {}, []).html
    assert "One retriever configured: nothing to compare." in html
    assert "49.72" not in html  # dense is not configured, so not read
