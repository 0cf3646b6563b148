"""Fake artifacts of every flow for the HTML report tests (``test_html_report*.py``): the
metrics, summaries and figures each flow writes, under a temporary run root.

(Helpers for the tests; a module name of its own so it imports cleanly.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tasks.config import Params, PathsConfig
from tasks.layout import Layout
from tasks.reporting.html_report import (
    build_report,
    figure_files,
    raw_input_files,
    report_artifacts,
)

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
