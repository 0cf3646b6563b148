"""Top-k accuracy, macro average and paired bootstrap."""

import pytest

from tasks.evaluation.topk import (
    bootstrap_difference,
    first_hit_ranks,
    hits_at_k,
    macro_average,
    topk_accuracy,
)


def test_first_hit_ranks():
    rows = [[False, True, True], [False, False], [], [True]]
    assert first_hit_ranks(rows) == [1, None, None, 0]
    assert first_hit_ranks([]) == []


def test_topk_accuracy_hand_computed():
    hits = [0, 1, 4, None]
    acc = topk_accuracy(hits, [1, 5, 2, 20])
    assert list(acc) == [1, 5, 2, 20]
    assert acc == {1: 0.25, 2: 0.5, 5: 0.75, 20: 0.75}


def test_k_beyond_list_length_counts_all_retrieved():
    # Three passages retrieved per question: k=100 behaves like k=3 (the script's found_k < k).
    rows = [[False, False, True], [False, False, False]]
    acc = topk_accuracy(first_hit_ranks(rows), [3, 100])
    assert acc == {3: 0.5, 100: 0.5}


def test_empty_passage_lists_and_k_zero():
    acc = topk_accuracy(first_hit_ranks([[], []]), [0, 1, 20])
    assert acc == {0: 0.0, 1: 0.0, 20: 0.0}
    assert topk_accuracy([0, 0, 1], [0, 1, 2]) == {0: 0.0, 1: 2 / 3, 2: 1.0}  # rank < k


def test_no_hit_gives_zero_not_missing_key():
    assert topk_accuracy([None, None], [1, 5]) == {1: 0.0, 5: 0.0}


def test_invalid_inputs():
    with pytest.raises(ValueError, match="empty"):
        topk_accuracy([], [1])
    with pytest.raises(ValueError, match="non-negative"):
        topk_accuracy([0], [-1])
    with pytest.raises(ValueError):
        topk_accuracy([0], [1.5])


def test_hits_at_k():
    assert hits_at_k([0, 3, None, 19, 20], 20) == [1, 1, 0, 1, 0]


def test_macro_average_is_mean_over_relation_files():
    per_relation = {
        "P19.test.json": {1: 0.5, 20: 1.0},
        "P20.test.json": {1: 0.25, 20: 0.5},
        "P36.test.json": {1: 0.0, 20: 0.75},
    }
    avg = macro_average(per_relation)
    assert avg == {1: (0.5 + 0.25 + 0.0) / 3, 20: (1.0 + 0.5 + 0.75) / 3}
    with pytest.raises(ValueError, match="k values"):
        macro_average({"a": {1: 0.5}, "b": {5: 0.5}})
    with pytest.raises(ValueError):
        macro_average({})


def test_bootstrap_difference():
    a = [1, 1, 1, 0, 1, 0, 1, 1, 0, 1] * 20
    b = [1, 0, 1, 0, 0, 0, 1, 0, 0, 1] * 20
    mean, low, high = bootstrap_difference(a, b, n=500, seed=3)
    assert mean == pytest.approx(0.3)
    assert low < mean < high
    assert low > 0.15 and high < 0.45
    assert bootstrap_difference(a, b, n=500, seed=3) == (mean, low, high)  # deterministic
    # Identical retrievers: zero-width interval at zero.
    assert bootstrap_difference(a, a, n=100) == (0.0, 0.0, 0.0)
    # Booleans are accepted.
    assert bootstrap_difference([True, False], [False, False], n=50)[0] == 0.5


def test_bootstrap_invalid_inputs():
    with pytest.raises(ValueError, match="equal length"):
        bootstrap_difference([1, 0], [1])
    with pytest.raises(ValueError, match="0/1"):
        bootstrap_difference([2, 0], [1, 0])
    with pytest.raises(ValueError, match="zero"):
        bootstrap_difference([], [])
