"""Retrieve-then-read scores from the prediction files: EM per relation and retriever, the
answer recall of the passages read (the retrieval upper bound), paired bootstrap CIs of the
baseline retriever vs each other one, the metrics JSON and the Markdown table.

Everything is computed from the files the predict step wrote (``questions.json``,
``<retriever>/top<k>.json``, ``<retriever>/passages.json``), so an outside reader's predictions
in the same layout score the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.evaluation.topk import bootstrap_difference
from tasks.io.atomic import write_json, write_text
from tasks.io.errors import DataFormatError
from tasks.io.squad_predictions import read_predictions
from tasks.reading.open_domain import exact_match_scores, percent
from tasks.reading.retrieve_then_read import (
    FUSED,
    FUSION_FILE,
    PASSAGES_FILE,
    QUESTIONS_FILE,
    predictions_file,
)
from tasks.reporting.reader_tables import comparison_rows, fusion_rows, open_rows, relation_rows
from tasks.reporting.tables import markdown_table, publish_table_artifact


def read_open_questions(out_dir: Path) -> list[dict]:
    """``questions.json``: ``[{id, relation, question, answers}]``, validated."""
    path = Path(out_dir) / QUESTIONS_FILE
    records = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise DataFormatError(path, "top level", "a JSON list of questions", type(records).__name__)
    for i, record in enumerate(records):
        if not (isinstance(record, dict) and {"id", "relation", "answers"} <= set(record)
                and isinstance(record["answers"], list) and record["answers"]):
            raise DataFormatError(path, f"record {i}",
                                  "{id, relation, question, answers: [non-empty]}",
                                  repr(record)[:120])
    return records


def _recall(hits: Mapping[str, Mapping], qid: str, k: int, path: Path) -> float:
    if qid not in hits:
        raise DataFormatError(path, f"question id {qid!r}", "the passages read for every "
                              "question of questions.json", "no entry")
    return float(any(hits[qid]["has_answer"][:k]))


def selections(out_dir: Path, retriever: str, ks: Sequence[int]) -> list[tuple[str, int, Path]]:
    """``(key, k, predictions file)`` of one retriever: ``top<k>`` (best span) for every k,
    then ``top<k>_fused`` (fused score) for every k whose fused predictions exist."""
    found = [(f"top{k}", k, predictions_file(out_dir, retriever, k)) for k in ks]
    return found + [(f"top{k}{FUSED}", k, path) for k in ks
                    if (path := predictions_file(out_dir, retriever, k, fused=True)).is_file()]


def score_retriever(out_dir: Path, questions: Sequence[dict], retriever: str,
                    ks: Sequence[int]) -> tuple[dict, dict[str, list[float]]]:
    """Metrics of one retriever per k and selection (macro EM and recall over relations, per
    relation; fused ones with their fitted weights) and the per-question EM of each (in
    ``questions`` order) for the paired bootstrap."""
    golds = {q["id"]: q["answers"] for q in questions}
    relations = sorted({q["relation"] for q in questions})
    hits_path = Path(out_dir) / retriever / PASSAGES_FILE
    hits = json.loads(hits_path.read_text(encoding="utf-8"))
    fusion_path = Path(out_dir) / retriever / FUSION_FILE
    fits = json.loads(fusion_path.read_text(encoding="utf-8")) if fusion_path.is_file() else {}
    block: dict = {}
    per_question: dict[str, list[float]] = {}
    for key, k, path in selections(out_dir, retriever, ks):
        em, missing = exact_match_scores(read_predictions(path), golds)
        recall = {q["id"]: _recall(hits, q["id"], k, hits_path) for q in questions}
        per_relation = {}
        for relation in relations:
            ids = [q["id"] for q in questions if q["relation"] == relation]
            per_relation[relation] = {"exact_match": percent([em[i] for i in ids]),
                                      "answer_recall": percent([recall[i] for i in ids]),
                                      "questions": len(ids)}
        block[key] = {
            "exact_match": _macro(per_relation, "exact_match"),
            "answer_recall": _macro(per_relation, "answer_recall"),
            "micro_exact_match": percent(list(em.values())),
            "questions": len(questions), "missing": len(missing), "missing_ids": missing[:20],
            "per_relation": per_relation}
        if key.endswith(FUSED) and f"top{k}" in fits:
            block[key]["fusion"] = fits[f"top{k}"]
        per_question[key] = [em[q["id"]] for q in questions]
    return block, per_question


def _macro(per_relation: Mapping[str, Mapping], key: str) -> float:
    values = [r[key] for r in per_relation.values()]
    return round(sum(values) / len(values), 2) if values else 0.0


def evaluate_open_predictions(out_dir: Path, retrievers: Sequence[str], ks: Sequence[int],
                              baseline: str, counts: Mapping[str, Mapping] | None = None,
                              n_bootstrap: int = 1000, seed: int = 0,
                              confidence: float = 0.95) -> dict:
    """Metrics of every retriever and k, and ``baseline - other`` EM in points with its paired
    bootstrap CI over the sampled questions (pooled: the micro EM; equal to the macro EM
    when every relation gives the same number of questions)."""
    questions = read_open_questions(out_dir) if retrievers else []
    retrievers_block: dict = {}
    per_question: dict[str, dict[str, list[float]]] = {}
    for name in retrievers:
        retrievers_block[name], per_question[name] = score_retriever(out_dir, questions, name, ks)
        if counts and name in counts:
            for key, value in counts[name].items():
                retrievers_block[name][key]["counts"] = dict(value)
    comparisons: dict = {}
    if baseline in per_question and questions:
        for name in retrievers:
            if name == baseline:
                continue
            comparisons[f"{baseline} - {name}"] = {
                key: _ci(per_question[baseline][key], per_question[name][key], n_bootstrap,
                         seed, confidence)
                for key in per_question[baseline] if key in per_question[name]}
    fusion_gains = {
        name: {key: _ci(scores[key], scores[key[: -len(FUSED)]], n_bootstrap, seed, confidence)
               for key in scores if key.endswith(FUSED)}
        for name, scores in per_question.items() if any(k.endswith(FUSED) for k in scores)}
    by_relation: dict[str, int] = {}
    for q in questions:
        by_relation[q["relation"]] = by_relation.get(q["relation"], 0) + 1
    return {"statistic": "EM in percent (SQuAD v1.1 normalisation, max over the EntityQuestions "
                         "answers), macro average over relations; answer_recall = questions "
                         "with an answer in the k passages read (the retrieval upper bound); "
                         "comparisons: baseline - other EM in points, paired bootstrap over "
                         "the sampled questions; top<k>_fused: the answer by the fused span + "
                         "retriever score, fusion_gains: fused - best span EM in points",
            "ks": list(ks), "baseline": baseline, "questions": len(questions),
            "questions_per_relation": by_relation, "n_bootstrap": n_bootstrap, "seed": seed,
            "confidence": confidence, "retrievers": retrievers_block,
            "comparisons": comparisons, "fusion_gains": fusion_gains}


def _ci(a: Sequence[float], b: Sequence[float], n: int, seed: int, confidence: float) -> dict:
    diff, low, high = bootstrap_difference(a, b, n=n, seed=seed, confidence=confidence)
    return {"difference": round(100 * diff, 2), "ci_low": round(100 * low, 2),
            "ci_high": round(100 * high, 2), "significant": bool(low > 0 or high < 0)}


def write_open_tables(metrics: dict, metrics_path: Path, report_path: Path,
                      reader: str = "") -> dict:
    """Metrics JSON + Markdown report + Prefect table artifact."""
    metrics = {**metrics, "reader": reader}
    write_json(metrics_path, metrics, indent=2)
    level = round(100 * metrics["confidence"])
    text = ("# Retrieve-then-read on EntityQuestions\n\n"
            f"The reader `{reader}` (train-reader) reads the top-k passages of each retriever "
            "for a deterministic sample of the test questions of every relation; its answer is "
            "the span with the highest span score (start + end logit) over the k passages "
            "(\"fused\": the highest fused score, span and retriever scores each divided by "
            "their standard deviation, weighted (1 - w) and w, w fitted per relation on the "
            "other relations' questions, as BERTserini's interpolation). EM "
            "in percent (SQuAD v1.1 normalisation, max over the answers), macro average over "
            "relations; recall@k = questions with an answer in the k passages read (the "
            f"retrieval upper bound of EM@k). {metrics['questions']} questions.\n\n")
    if not metrics["retrievers"]:
        text += "No retriever results were found: nothing to read.\n"
    else:
        header, rows = open_rows(metrics)
        text += markdown_table(header, rows)
        publish_table_artifact("retrieve-then-read", header, rows,
                               "Retrieve-then-read EM and answer recall per retriever")
        if metrics["comparisons"]:
            header, rows = comparison_rows(metrics)
            text += (f"\n## {metrics['baseline']} vs the other retrievers\n\nEM difference in "
                     f"points with a paired bootstrap {level}% CI over the same questions "
                     f"({metrics['n_bootstrap']} resamples; * = excludes 0); positive: "
                     f"{metrics['baseline']} reads better.\n\n" + markdown_table(header, rows))
        header, rows = fusion_rows(metrics)
        if rows:
            text += ("\n## Fused score vs best span score\n\nEM of the answer chosen by the "
                     "fused score minus EM of the best raw span, in points, with a paired "
                     f"bootstrap {level}% CI; weight: the fitted w over relations.\n\n"
                     + markdown_table(header, rows))
        k = metrics["ks"][-1]
        header, rows = relation_rows(metrics, k)
        text += f"\n## EM@{k} per relation\n\n" + markdown_table(header, rows)
    write_text(report_path, text)
    return metrics
