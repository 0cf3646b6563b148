"""Reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009) of retrieval runs.

``score(d) = sum over runs r of weight_r / (k + rank_r(d))`` with 1-based ranks and ``k = 60``;
a document missing from a run gets nothing from it. Scores are summed with :func:`math.fsum`
(exactly rounded, so independent of the order of the runs), and ties are broken
deterministically: higher score, then the better (smaller) best rank in any run, then the run
where that best rank occurs (earlier first), then the document id. :func:`fuse_runs` fuses
TREC run files (the hybrid retrievers).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from tasks.io.trec import read_trec_run, write_trec_run
from tasks.orchestration import artifact_task

Run = Mapping[str, Sequence[tuple[str, float]]]


def reciprocal_rank_fusion(runs: Sequence[Run] | Mapping[str, Run], k: float = 60,
                           depth: int | None = None, weights: Sequence[float] | None = None,
                           ) -> dict[str, list[tuple[str, float]]]:
    """Fuse ``runs`` (``{qid: [(docid, score), ...]}`` in rank order) into one run.

    ``runs`` may be a sequence or a ``{name: run}`` mapping (fused in mapping order). Queries
    come in order of first appearance across the runs; each fused ranking holds every document
    of the inputs, cut to ``depth`` when given. A document listed twice in one ranking counts
    at its first (best) rank. The fused score is the RRF score.
    """
    run_list = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    if not run_list:
        raise ValueError("nothing to fuse: no runs given")
    if k < 0:
        raise ValueError(f"k must be >= 0, not {k}")
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be >= 1, not {depth}")
    weights = [1.0] * len(run_list) if weights is None else [float(w) for w in weights]
    if len(weights) != len(run_list):
        raise ValueError(f"{len(weights)} weights for {len(run_list)} runs")
    qids = list(dict.fromkeys(qid for run in run_list for qid in run))
    fused: dict[str, list[tuple[str, float]]] = {}
    for qid in qids:
        contributions: dict[str, list[float]] = {}
        best: dict[str, tuple[int, int]] = {}
        for position, (run, weight) in enumerate(zip(run_list, weights, strict=True)):
            seen: set[str] = set()
            for rank, (docid, _score) in enumerate(run.get(qid, ()), start=1):
                if docid in seen:
                    continue
                seen.add(docid)
                contributions.setdefault(docid, []).append(weight / (k + rank))
                if docid not in best or (rank, position) < best[docid]:
                    best[docid] = (rank, position)
        scored = [(math.fsum(parts), docid) for docid, parts in contributions.items()]
        scored.sort(key=lambda item: (-item[0], best[item[1]], item[1]))
        if depth is not None:
            scored = scored[:depth]
        fused[qid] = [(docid, score) for score, docid in scored]
    return fused


def fuse_runs(run_paths: list[Path], run_path: Path, k: float = 60,
              depth: int | None = None) -> Path:
    """Reciprocal rank fusion of TREC runs into one TREC run (a hybrid retriever)."""
    fused = reciprocal_rank_fusion([read_trec_run(p) for p in run_paths], k=k, depth=depth)
    write_trec_run(run_path, fused, tag=f"rrf_k={k}")
    return run_path


fuse_runs_task = artifact_task(fuse_runs, outputs=("run_path",), name="fuse runs")
