"""The two-level (seeds x questions) bootstrap: the resampled mean is the mean of the repeated
sub-matrix, its variance is the sum of the two factors' sampling variances, and bad input is
refused."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.evaluation.crossed_bootstrap import crossed_bootstrap


def test_each_resample_is_the_mean_of_the_repeated_sub_matrix():
    v = np.random.default_rng(3).normal(size=(4, 7))
    n, seed = 50, 11
    observed, low, high = crossed_bootstrap(v, n=n, seed=seed, confidence=0.8)
    # the same draws, done the slow way: rows and columns repeated by their counts
    rng = np.random.default_rng(seed)
    w_s = rng.multinomial(4, np.full(4, 0.25), size=n)
    w_q = rng.multinomial(7, np.full(7, 1 / 7), size=n)
    means = [v[np.ix_(np.repeat(np.arange(4), w_s[b]), np.repeat(np.arange(7), w_q[b]))].mean()
             for b in range(n)]
    assert observed == pytest.approx(v.mean())
    assert (low, high) == pytest.approx(tuple(np.percentile(means, [10.0, 90.0])))


def test_variance_adds_the_seed_and_the_question_sampling_variances():
    rng = np.random.default_rng(0)
    seeds, questions = rng.normal(0, 10, size=10), rng.normal(0, 30, size=400)
    v = seeds[:, None] + questions[None, :]
    expected_sd = np.sqrt(seeds.var() / 10 + questions.var() / 400)
    _, low, high = crossed_bootstrap(v, n=20000, seed=1, confidence=0.6827)
    assert (high - low) / 2 == pytest.approx(expected_sd, rel=0.05)
    # either factor alone gives the narrower interval of that factor only
    _, s_low, s_high = crossed_bootstrap(np.repeat(seeds[:, None], 400, axis=1), n=20000,
                                         seed=1, confidence=0.6827)
    _, q_low, q_high = crossed_bootstrap(np.repeat(questions[None, :], 10, axis=0), n=20000,
                                         seed=1, confidence=0.6827)
    assert (s_high - s_low) / 2 == pytest.approx(seeds.std() / np.sqrt(10), rel=0.05)
    assert (q_high - q_low) / 2 == pytest.approx(questions.std() / np.sqrt(400), rel=0.05)
    assert high - low > max(s_high - s_low, q_high - q_low)


def test_constant_values_one_seed_and_determinism():
    assert crossed_bootstrap(np.full((3, 5), 2.5), n=20) == (2.5, 2.5, 2.5)
    one = [[1.0, 0.0, 1.0, 1.0]]
    observed, low, high = crossed_bootstrap(one, n=200, seed=4)
    assert observed == 0.75 and 0.0 <= low < 0.75 < high <= 1.0
    v = np.random.default_rng(2).normal(size=(3, 20))
    assert crossed_bootstrap(v, n=200, seed=4) == crossed_bootstrap(v, n=200, seed=4)
    assert crossed_bootstrap(v, n=200, seed=4) != crossed_bootstrap(v, n=200, seed=5)


@pytest.mark.parametrize(("values", "kwargs", "message"), [
    ([1.0, 2.0], {}, "seeds x questions matrix"),
    (np.empty((2, 0)), {}, "seeds x questions matrix"),
    ([[1.0, float("nan")]], {}, "finite"),
    ([[1.0]], {"n": 0}, "n must be >= 1"),
    ([[1.0]], {"confidence": 1.0}, "confidence"),
])
def test_bad_input_is_refused(values, kwargs, message):
    with pytest.raises(ValueError, match=message):
        crossed_bootstrap(values, **kwargs)
