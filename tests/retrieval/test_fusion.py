"""Reciprocal rank fusion on hand-made runs."""

from __future__ import annotations

import pytest

from tasks.retrieval.fusion import reciprocal_rank_fusion

BM25 = {"q1": [("a", 12.0), ("b", 10.0), ("c", 9.0)], "q2": [("x", 3.0)]}
DENSE = {"q1": [("c", 0.9), ("a", 0.8), ("d", 0.7)], "q3": [("y", 0.5), ("z", 0.4)]}


def test_scores_and_order_follow_the_formula():
    fused = reciprocal_rank_fusion([BM25, DENSE])
    assert list(fused) == ["q1", "q2", "q3"]  # first appearance across the runs
    scores = dict(fused["q1"])
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert scores["d"] == pytest.approx(1 / 63)
    assert [d for d, _ in fused["q1"]] == ["a", "c", "b", "d"]
    assert fused["q2"] == [("x", pytest.approx(1 / 61))]
    assert [d for d, _ in fused["q3"]] == ["y", "z"]


def test_ties_are_broken_deterministically():
    one = {"q": [("m", 1.0), ("k", 0.5)]}
    two = {"q": [("b", 1.0), ("z", 0.5)]}
    fused = reciprocal_rank_fusion([one, two])["q"]
    # m and b tie (1/61): same best rank 1, m's run comes first; k and z likewise.
    assert [d for d, _ in fused] == ["m", "b", "k", "z"]
    swapped = reciprocal_rank_fusion([two, one])["q"]
    assert [d for d, _ in swapped] == ["b", "m", "z", "k"]
    assert sorted(s for _, s in fused) == sorted(s for _, s in swapped)  # order-free sums
    same_run = {"q": [("b", 1.0)]}
    other = {"q": [("a", 1.0)]}
    assert [d for d, _ in reciprocal_rank_fusion({"x": same_run, "y": other})["q"]] == ["b", "a"]
    three = [{"q": [("a", 1), ("b", 1)]}, {"q": [("b", 1), ("a", 1)]}]
    assert reciprocal_rank_fusion(three)["q"] == reciprocal_rank_fusion(three)["q"]
    assert [d for d, _ in reciprocal_rank_fusion(three)["q"]] == ["a", "b"]  # run order


def test_depth_weights_k_and_duplicates():
    fused = reciprocal_rank_fusion([BM25, DENSE], depth=2)
    assert [d for d, _ in fused["q1"]] == ["a", "c"]
    weighted = reciprocal_rank_fusion([BM25, DENSE], weights=[0.0, 1.0])
    assert [d for d, _ in weighted["q1"]][:3] == ["c", "a", "d"]
    small_k = dict(reciprocal_rank_fusion([BM25], k=0)["q1"])
    assert small_k == {"a": 1.0, "b": 0.5, "c": pytest.approx(1 / 3)}
    duplicated = {"q": [("a", 1.0), ("a", 0.5), ("b", 0.1)]}
    assert dict(reciprocal_rank_fusion([duplicated])["q"]) == {
        "a": pytest.approx(1 / 61), "b": pytest.approx(1 / 63)}


def test_invalid_arguments():
    with pytest.raises(ValueError, match="no runs"):
        reciprocal_rank_fusion([])
    with pytest.raises(ValueError, match="weights"):
        reciprocal_rank_fusion([BM25, DENSE], weights=[1.0])
    with pytest.raises(ValueError, match="depth"):
        reciprocal_rank_fusion([BM25], depth=0)
