"""The similarity filter: exact thresholds with a stub embedder, one real-MiniLM sanity check."""

from __future__ import annotations

import numpy as np
import pytest
from para_data_world import StubEmbedder

from tasks.io.tables import read_table, write_table
from tasks.paraphrase.similarity import (
    SentenceEmbedder,
    cosine_scores,
    keep_above,
    score_candidates,
)

THRESHOLDS = {"test_set": 0.95, "augmentation": 0.9, "adversarial_augmentation": 0.83}


def around(t: float) -> list[float]:
    """Just below, exactly at, just above ``t``."""
    return [float(np.nextafter(t, 0.0)), t, float(np.nextafter(t, 1.0)), t - 1e-6, t + 1e-6]


@pytest.mark.parametrize("name, threshold", list(THRESHOLDS.items()))
def test_keeps_strictly_above_each_threshold(tmp_path, name, threshold):
    values = around(threshold)
    similar = {(f"question {i}", f"paraphrase {i}"): s for i, s in enumerate(values)}
    stub = StubEmbedder(similar)
    scores = cosine_scores(list(similar), stub)
    assert scores.tolist() == values  # the stub gives exactly these cosines
    assert keep_above(scores, threshold).tolist() == [False, False, True, False, True]

    rows = [{"qid": str(i), "source": a, "paraphrase": b} for i, (a, b) in enumerate(similar)]
    write_table(tmp_path / "c.parquet", rows)
    counts = score_candidates(tmp_path / "c.parquet", tmp_path / "s.parquet", THRESHOLDS,
                              embedder=stub)
    table = read_table(tmp_path / "s.parquet").to_pydict()
    assert table[f"keep_{name}"] == [False, False, True, False, True]
    assert counts[f"kept_{name}"] == 2 and counts["candidates"] == 5
    assert counts[f"threshold_{name}"] == threshold
    # every threshold column is there, and a lower threshold keeps at least as much
    assert counts["kept_adversarial_augmentation"] >= counts["kept_augmentation"] >= \
        counts["kept_test_set"]


def test_pairs_between_thresholds(tmp_path):
    similar = {("q", "p96"): 0.96, ("r", "p92"): 0.92, ("s", "p85"): 0.85, ("t", "p50"): 0.5}
    rows = [{"qid": a, "source": a, "paraphrase": b} for a, b in similar]
    write_table(tmp_path / "c.parquet", rows)
    score_candidates(tmp_path / "c.parquet", tmp_path / "s.parquet", THRESHOLDS,
                     embedder=StubEmbedder(similar))
    table = read_table(tmp_path / "s.parquet").to_pydict()
    assert table["keep_test_set"] == [True, False, False, False]
    assert table["keep_augmentation"] == [True, True, False, False]
    assert table["keep_adversarial_augmentation"] == [True, True, True, False]
    assert table["similarity"] == pytest.approx([0.96, 0.92, 0.85, 0.5])


def test_no_candidates_needs_no_model(tmp_path):
    import pyarrow as pa

    schema = pa.schema([("qid", pa.string()), ("source", pa.string()),
                        ("paraphrase", pa.string())])
    write_table(tmp_path / "c.parquet", [], schema=schema)
    counts = score_candidates(tmp_path / "c.parquet", tmp_path / "s.parquet", THRESHOLDS,
                              model_path="/nonexistent/model")
    assert counts["candidates"] == 0 and counts["kept_test_set"] == 0


def test_real_minilm_sanity():
    embedder = SentenceEmbedder()  # the packaged all-MiniLM-L6-v2, offline
    scores = cosine_scores([
        ("who wrote the novel moby dick?", "who wrote the novel moby dick?"),
        ("who wrote the novel moby dick?", "who authored the novel moby dick?"),
        ("who wrote the novel moby dick?", "how do i cook rice in a microwave?"),
    ], embedder)
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    assert scores[1] > 0.9 > 0.3 > scores[2]
