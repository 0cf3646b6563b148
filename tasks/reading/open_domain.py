"""Retrieve-then-read, the pure parts: which questions, which answer, which score.

- **Questions**: the retrieval stage writes one DPR result JSON per relation and retriever
  (``results/retrieval/<retriever>/<relation>.<retriever>.json``), every retriever's file with
  the same test questions in the same order. :func:`sample_positions` draws the same
  ``questions_per_relation`` positions of a relation for every retriever (deterministic: a
  NumPy generator seeded with ``(seed, crc32(relation))``), so the retrievers are compared on the
  same questions (paired). A question's id is ``<relation>:<position>`` (:func:`question_id`).
- **Answer**: the reader reads each of the top-k passages (the passage text, as the
  ``eq-string`` has-answer mode judges it) and decodes its best span there; the answer over the
  passages is the span with the highest span score (``start_logit + end_logit``, the score the
  reader already compares across the windows of one context), the standard open-domain
  choice (DrQA, BERTserini without score fusion). :func:`best_span` ties go to the higher-ranked
  passage; no passage (or no valid span in any) gives the empty answer ``""``.
- **Score**: exact match after SQuAD normalisation, max over the gold answers
  (:func:`exact_match_scores`); a question without a prediction scores 0 and is listed.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tasks.evaluation.squad_metrics import exact_match_score, metric_max_over_ground_truths


@dataclass(frozen=True, slots=True)
class PassageSpan:
    """The reader's best span in one passage (``score = -inf``: no valid span)."""

    text: str
    score: float


@dataclass(frozen=True, slots=True)
class Choice:
    """The answer over a question's passages and the rank (0-based) it came from."""

    text: str
    score: float
    rank: int | None


def question_id(relation: str, position: int) -> str:
    """The id of the question at ``position`` of a relation's result file."""
    return f"{relation}:{position}"


def sample_positions(relation: str, n_questions: int, per_relation: int, seed: int) -> list[int]:
    """``min(per_relation, n_questions)`` positions of a relation's questions, ascending.

    The same for every retriever and every run (seeded with ``seed`` and the relation's CRC-32);
    all positions when the relation has no more than ``per_relation`` questions.
    """
    if n_questions < 0 or per_relation < 1:
        raise ValueError(f"need n_questions >= 0 and per_relation >= 1, got {n_questions}, "
                         f"{per_relation}")
    if n_questions <= per_relation:
        return list(range(n_questions))
    rng = np.random.default_rng([seed, zlib.crc32(relation.encode("utf-8"))])
    return sorted(int(i) for i in rng.choice(n_questions, size=per_relation, replace=False))


def best_span(spans: Sequence[PassageSpan | None]) -> Choice:
    """The highest-scoring span over a question's passages (in rank order).

    ``None`` stands for a passage the reader gave no span (counted by the caller); spans with a
    score of ``-inf`` or NaN are no candidates. Ties go to the higher-ranked passage. No
    candidate at all: ``Choice("", -inf, None)``.
    """
    best = Choice("", -math.inf, None)
    for rank, span in enumerate(spans):
        if span is None or math.isnan(span.score) or span.score == -math.inf:
            continue
        if span.score > best.score:
            best = Choice(span.text, span.score, rank)
    return best


def exact_match_scores(predictions: Mapping[str, str], golds: Mapping[str, Sequence[str]]
                       ) -> tuple[dict[str, float], list[str]]:
    """``({id: 0.0 or 1.0}, missing ids)`` over every question of ``golds``, in its order.

    EM is the official SQuAD v1.1 one (normalised strings), max over the gold answers. A
    question without a prediction scores 0 and its id is returned in the missing list.
    """
    scores: dict[str, float] = {}
    missing: list[str] = []
    for qid, answers in golds.items():
        if isinstance(answers, str) or not answers:
            raise ValueError(f"question {qid!r}: gold answers must be a non-empty list of "
                             f"strings, got {answers!r}")
        if qid not in predictions:
            missing.append(qid)
            scores[qid] = 0.0
            continue
        hit = metric_max_over_ground_truths(exact_match_score, predictions[qid], answers)
        scores[qid] = float(bool(hit))
    return scores, missing


def percent(values: Sequence[float]) -> float:
    """Mean of 0/1 values in percent, 2 decimals (0.0 for no values)."""
    return round(100.0 * sum(values) / len(values), 2) if values else 0.0
