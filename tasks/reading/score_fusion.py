"""Choosing the answer over k passages by a fused score: the reader's span and the retriever.

The reader's raw span score (start + end logit) is not comparable across passages: a reader
trained on single SQuAD-style paragraphs finds a confident span of the asked type in a passage
about another entity, so reading more passages can lower EM (demo world: BM25 EM@1 68 -> EM@2
51 at the same answer recall). The retriever's score says which passage is about the question.
BERTserini (Yang et al., 2019) chooses the answer by a linear interpolation of the two scores,
its weight tuned on held-out questions. Here:

- both scores are divided by their standard deviation over the (question, passage) pairs of
  the retriever's top k (no gold answers involved), so one weight grid serves BM25 scores, dot
  products and hybrid scores: ``fused = (1 - w) * span / sd_span + w * retriever / sd_retriever``
  (:func:`fused_choice`). ``w = 0`` is the span score alone (:func:`~tasks.reading.open_domain.
  best_span`), ``w = 1`` the retriever's order alone (the answer of the top-ranked passage with a
  span);
- ``w`` is fitted per relation by leave-one-relation-out (:func:`cross_fitted_weights`): the grid
  value with the highest EM over the *other* relations' questions (ties: the smallest ``w``,
  the closest to the reader alone), so no question is answered with a weight fitted on its own
  gold answer. With a single relation there is nothing to fit on: ``w = 0``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tasks.evaluation.squad_metrics import exact_match_score, metric_max_over_ground_truths
from tasks.reading.open_domain import Choice


@dataclass(frozen=True, slots=True)
class Candidate:
    """One passage of a question: the reader's best span there and the retriever's score.

    ``span_score`` is ``-inf`` (or NaN) when the reader gave no valid span: no candidate.
    """

    text: str
    span_score: float
    retriever_score: float


@dataclass(frozen=True, slots=True)
class Scales:
    """Standard deviations that put span and retriever scores on one scale (1.0 if undefined)."""

    span: float = 1.0
    retriever: float = 1.0


def weight_grid(points: int) -> tuple[float, ...]:
    """``points`` evenly spaced weights from 0 (reader alone) to 1 (retriever alone)."""
    if points < 2:
        raise ValueError(f"a weight grid needs at least 2 points, got {points}")
    return tuple(round(i / (points - 1), 6) for i in range(points))


def _valid(candidate: Candidate) -> bool:
    return math.isfinite(candidate.span_score)


def _sd(values: Sequence[float]) -> float:
    sd = statistics.pstdev(values) if len(values) > 1 else 0.0
    return sd if sd > 0 and math.isfinite(sd) else 1.0


def score_scales(questions: Sequence[Sequence[Candidate]]) -> Scales:
    """Population standard deviations of the valid candidates' span and retriever scores."""
    valid = [c for candidates in questions for c in candidates if _valid(c)]
    return Scales(_sd([c.span_score for c in valid]), _sd([c.retriever_score for c in valid]))


def fused_choice(candidates: Sequence[Candidate], weight: float, scales: Scales) -> Choice:
    """The candidate (in rank order) with the highest fused score; ties go to the higher rank.

    No valid candidate: ``Choice("", -inf, None)``, as :func:`~tasks.reading.open_domain.
    best_span`.
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"fusion weight must lie in [0, 1], got {weight}")
    best = Choice("", -math.inf, None)
    for rank, c in enumerate(candidates):
        if not _valid(c):
            continue
        score = ((1.0 - weight) * c.span_score / scales.span
                 + weight * c.retriever_score / scales.retriever)
        if score > best.score:
            best = Choice(c.text, score, rank)
    return best


@dataclass(frozen=True, slots=True)
class FitQuestion:
    """A question's candidates and gold answers (what fitting a weight needs)."""

    candidates: tuple[Candidate, ...]
    answers: tuple[str, ...]


def _hits(question: FitQuestion) -> list[bool]:
    return [bool(metric_max_over_ground_truths(exact_match_score, c.text, list(question.answers)))
            for c in question.candidates]


def fit_weight(questions: Sequence[FitQuestion], grid: Sequence[float], scales: Scales,
               hits: Sequence[Sequence[bool]] | None = None) -> float:
    """The grid weight with the most exact matches over ``questions`` (ties: the smallest).

    ``hits[i][r]``: whether candidate ``r`` of question ``i`` matches a gold answer (computed
    when not given). No questions: 0.0.
    """
    if not grid:
        raise ValueError("empty weight grid")
    hits = [_hits(q) for q in questions] if hits is None else hits
    best_weight, best_correct = 0.0, -1
    for weight in sorted(grid):
        correct = 0
        for question, hit in zip(questions, hits, strict=True):
            rank = fused_choice(question.candidates, weight, scales).rank
            correct += rank is not None and hit[rank]
        if correct > best_correct:
            best_weight, best_correct = weight, correct
    return best_weight


def cross_fitted_weights(by_relation: Mapping[str, Sequence[FitQuestion]],
                         grid: Sequence[float], scales: Scales) -> dict[str, float]:
    """``{relation: weight}``, each fitted on the questions of every other relation."""
    hits = {r: [_hits(q) for q in questions] for r, questions in by_relation.items()}
    weights: dict[str, float] = {}
    for relation in by_relation:
        others = [(q, h) for r, questions in by_relation.items() if r != relation
                  for q, h in zip(questions, hits[r], strict=True)]
        weights[relation] = fit_weight([q for q, _ in others], grid, scales,
                                       [h for _, h in others])
    return weights
