"""The popularity contrasts of Figure 1: pooled buckets, a retriever's rise against BM25's and
train-ent against rand-ent, each with a bootstrap CI that covers the observed value and
excludes 0 only when the data say so."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.retrieval.bucket_contrasts import bucket_contrasts


def _hits(rate: float, n: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < rate).astype(np.int8)


def _groups(dense_rare: float, dense_popular: float, n: int = 300) -> dict:
    """rand-ent over two relations (bucket0 rare, bucket2 popular, bucket1 empty in both) and
    train-ent's bucket0 of one relation."""
    empty = {"bm25": np.array([], np.int8), "dense": np.array([], np.int8)}
    return {
        "rand-ent/P19/bucket0": {"bm25": _hits(0.9, n, 1), "dense": _hits(dense_rare, n, 2)},
        "rand-ent/P36/bucket0": {"bm25": _hits(0.9, n, 3), "dense": _hits(dense_rare, n, 4)},
        "rand-ent/P19/bucket1": empty, "rand-ent/P36/bucket1": empty,
        "rand-ent/P19/bucket2": {"bm25": _hits(0.92, n, 5), "dense": _hits(dense_popular, n, 6)},
        "rand-ent/P36/bucket2": {"bm25": _hits(0.92, n, 7), "dense": _hits(dense_popular, n, 8)},
        "train-ent/P19/bucket0": {"bm25": _hits(0.9, n, 9), "dense": _hits(0.8, n, 10)},
    }


def test_a_dense_retriever_that_gains_from_popularity_more_than_bm25():
    hits = _groups(dense_rare=0.2, dense_popular=0.7)
    out = bucket_contrasts(hits, k=20)
    rise = out["popularity_rise"]
    assert (rise["rare_bucket"], rise["popular_bucket"]) == ("bucket0", "bucket2")
    assert rise["rare_questions"] == rise["popular_questions"] == 600
    pooled = {name: 100 * (np.concatenate([hits[f"rand-ent/{r}/bucket2"][name] for r in
                                           ("P19", "P36")]).mean()
                           - np.concatenate([hits[f"rand-ent/{r}/bucket0"][name] for r in
                                             ("P19", "P36")]).mean())
              for name in ("bm25", "dense")}
    for name in ("bm25", "dense"):
        cell = rise["rise"][name]
        assert cell["difference"] == pytest.approx(pooled[name], abs=0.01)
        assert cell["ci_low"] <= cell["difference"] <= cell["ci_high"]
    versus = rise["rise_minus_bm25"]["dense"]
    assert versus["difference"] == pytest.approx(pooled["dense"] - pooled["bm25"], abs=0.02)
    assert versus["significant"] and versus["ci_low"] > 30
    assert set(rise["rise_minus_bm25"]) == {"dense"}
    seen = out["seen_minus_random"]
    assert (seen["train_ent_questions"], seen["rand_ent_questions"]) == (300, 1200)
    assert seen["difference"]["dense"]["ci_low"] > 0  # 0.8 against 0.45 pooled
    assert bucket_contrasts(hits, k=20) == out  # deterministic for a seed


def test_no_effect_gives_a_ci_around_zero_and_descending_order_swaps_the_ends():
    out = bucket_contrasts(_groups(dense_rare=0.5, dense_popular=0.5), k=20)
    versus = out["popularity_rise"]["rise_minus_bm25"]["dense"]
    assert versus["ci_low"] < 0 < versus["ci_high"] and not versus["significant"]
    swapped = bucket_contrasts(_groups(0.2, 0.7), k=20, bucket_order="descending")
    assert swapped["popularity_rise"]["rare_bucket"] == "bucket2"
    assert swapped["popularity_rise"]["rise"]["dense"]["difference"] < 0


def test_without_rand_ent_questions_there_is_no_contrast():
    assert set(bucket_contrasts({}, k=20)) == {"k", "n_bootstrap", "seed", "confidence"}
