"""Fused passage selection (span score + retriever score): the choice at the grid's ends, the
scales, the fitted weight and the leave-one-relation-out fit that never sees its own answers."""

from __future__ import annotations

import math

import pytest

from tasks.reading.open_domain import PassageSpan, best_span
from tasks.reading.score_fusion import (
    Candidate,
    FitQuestion,
    Scales,
    cross_fitted_weights,
    fit_weight,
    fused_choice,
    score_scales,
    weight_grid,
)


def _fooled(answer: str = "Bern", wrong: str = "Oslo") -> FitQuestion:
    """The reader is surer of a span in the second passage (about someone else), the retriever
    ranks the right passage far above it."""
    return FitQuestion((Candidate(answer, 4.0, 20.0), Candidate(wrong, 9.0, 5.0)), (answer,))


def _reader_right(answer: str = "Rome", wrong: str = "Milan") -> FitQuestion:
    """The retriever's top passage misleads the reader a little; the second holds the answer."""
    return FitQuestion((Candidate(wrong, 2.0, 12.0), Candidate(answer, 9.0, 11.0)), (answer,))


def test_grid_runs_from_reader_alone_to_retriever_alone():
    assert weight_grid(5) == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert weight_grid(2) == (0.0, 1.0)
    with pytest.raises(ValueError, match="at least 2"):
        weight_grid(1)


def test_weight_zero_is_the_best_span_and_weight_one_the_retrievers_order():
    candidates = (Candidate("a", 1.0, 9.0), Candidate("b", 7.0, 3.0), Candidate("c", 7.0, 1.0))
    spans = [PassageSpan(c.text, c.span_score) for c in candidates]
    at_zero = fused_choice(candidates, 0.0, Scales())
    assert (at_zero.text, at_zero.rank) == (best_span(spans).text, best_span(spans).rank) \
        == ("b", 1)  # tie 7.0 = 7.0: the higher rank
    assert fused_choice(candidates, 1.0, Scales()).text == "a"
    # a passage without a valid span is never chosen, whatever its retriever score
    no_span = (Candidate("", -math.inf, 100.0), Candidate("x", math.nan, 50.0),
               Candidate("y", 0.5, 1.0))
    assert fused_choice(no_span, 1.0, Scales()).text == "y"
    empty = fused_choice((), 0.5, Scales())
    assert (empty.text, empty.rank) == ("", None)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fused_choice(candidates, 1.5, Scales())


def test_scales_put_both_scores_on_one_footing():
    questions = [(Candidate("a", 1.0, 100.0), Candidate("b", 3.0, 300.0)),
                 (Candidate("c", -math.inf, 1e9),)]  # no span: left out of the scales
    scales = score_scales(questions)
    assert scales.span == pytest.approx(1.0) and scales.retriever == pytest.approx(100.0)
    assert score_scales([(Candidate("a", 2.0, 5.0),)]) == Scales(1.0, 1.0)  # undefined: 1
    # after scaling, w = 0.5 weighs a 1-sd span gap and a 1-sd retriever gap equally: the
    # retriever's larger gap (2 sd) wins
    pair = (Candidate("span-pick", 3.0, 100.0), Candidate("ret-pick", 2.0, 300.0))
    assert fused_choice(pair, 0.5, scales).text == "ret-pick"
    assert fused_choice(pair, 0.5, Scales()).text == "ret-pick"
    assert fused_choice(pair, 0.5, Scales(1.0, 1e6)).text == "span-pick"


def test_fit_prefers_the_retriever_when_the_reader_is_fooled():
    grid = weight_grid(11)
    scales = Scales()
    assert fit_weight([_fooled(), _fooled("Bonn", "Kiel")], grid, scales) > 0.0
    # the reader alone is right: every weight that keeps it is as good, the smallest wins
    assert fit_weight([_reader_right()], grid, scales) == 0.0
    # both kinds: a weight that answers both must exist and be found
    mixed = [_fooled(), _reader_right()]
    weight = fit_weight(mixed, grid, scales)
    assert all(fused_choice(q.candidates, weight, scales).text == q.answers[0] for q in mixed)
    assert fit_weight([], grid, scales) == 0.0
    with pytest.raises(ValueError, match="empty"):
        fit_weight(mixed, (), scales)


def test_each_relation_is_fitted_on_the_others_only():
    grid = weight_grid(11)
    by_relation = {"P19": [_fooled(), _fooled("Bonn", "Kiel")],  # wants w > 0
                   "P36": [_reader_right()]}                      # indifferent: 0 is enough
    weights = cross_fitted_weights(by_relation, grid, Scales())
    assert weights["P19"] == 0.0  # fitted on P36's question alone
    assert weights["P36"] > 0.0   # fitted on P19's questions
    assert cross_fitted_weights({"P19": [_fooled()]}, grid, Scales()) == {"P19": 0.0}
