"""BM25 search in batches of questions (one task per batch) equals one search of them all.

On the tiny world (24 test questions, 24 passages): batches of 5 (the last one short), searched
as a Prefect subflow on threads and (``-m slow``) on two Dask worker *processes* (each a
daemonic process that holds its own JVM), merge into the same TREC run, byte for byte, as one
search.
"""

from __future__ import annotations

import pytest
from dense_testkit import write_tiny_world

from tasks.config import BM25Config, OrchestrationConfig
from tasks.io.trec import read_trec_run, write_trec_run
from tasks.retrieval.bm25 import bm25_run_tag
from tasks.retrieval.bm25_batches import merge_batch_runs, plan_query_batches, search_bm25_batch
from tasks.retrieval.query_sets import eq_split, write_query_set


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """``(index, query-set file, reference run)``: the index, the test split as a query set and
    one search of every question."""
    from tasks.retrieval.bm25 import bm25_search, build_bm25_index, export_collection

    root = tmp_path_factory.mktemp("bm25_batches")
    passages, dataset = write_tiny_world(root)
    index = build_bm25_index(export_collection(passages, root / "collection"), root / "index")
    queries = write_query_set(eq_split(dataset), root / "queries" / "test.json")
    qids, texts = eq_split(dataset).qids, eq_split(dataset).texts
    reference = write_trec_run(root / "reference.trec",
                               bm25_search(index, texts, qids, k=5), bm25_run_tag(0.9, 0.4))
    return index, queries, reference


def test_plan_covers_the_query_set_in_order(world):
    _, queries, _ = world
    assert plan_query_batches(queries, 5) == [(0, 5), (5, 10), (10, 15), (15, 20), (20, 24)]
    assert plan_query_batches(queries, 100) == [(0, 24)]
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        plan_query_batches(queries, 0)


def test_batches_merge_into_the_run_of_one_search(world, tmp_path):
    index, queries, reference = world
    paths = [search_bm25_batch(index, queries, start, end, tmp_path / f"{start}.trec", k=5)
             for start, end in plan_query_batches(queries, 7)]
    assert len(read_trec_run(paths[-1])) == 3  # 24 = 7 + 7 + 7 + 3
    merged = merge_batch_runs(paths, tmp_path / "test.trec", bm25_run_tag(0.9, 0.4))
    assert merged.read_bytes() == reference.read_bytes()


def test_a_batch_outside_the_set_and_overlapping_batches_are_errors(world, tmp_path):
    index, queries, _ = world
    with pytest.raises(ValueError, match=r"questions 20:30 are outside the set's 24 questions"):
        search_bm25_batch(index, queries, 20, 30, tmp_path / "x.trec", k=5)
    first = search_bm25_batch(index, queries, 0, 3, tmp_path / "a.trec", k=5)
    again = search_bm25_batch(index, queries, 2, 4, tmp_path / "b.trec", k=5)
    with pytest.raises(ValueError, match=r"b\.trec: query 'P19:000002' is also in an earlier"):
        merge_batch_runs([first, again], tmp_path / "merged.trec", "t")


# dask (~15-40 s: a LocalCluster of 2 processes) is slow: the thread variant covers this
# subflow, tests/flows/test_distribution.py the same subflow pattern on Dask worker processes
# with the shared API, and tests/retrieval/test_jvm_worker.py the JVM in a daemonic worker
@pytest.mark.parametrize("runner", ["thread", pytest.param("dask", marks=pytest.mark.slow)])
def test_batch_subflow_on_the_task_runner_matches_one_search(world, tmp_path, monkeypatch,
                                                             prefect_api, runner):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.bm25_search import search_bm25_on
    from tasks.distribution import shared_api
    from tasks.orchestration import run_settings

    index, queries, reference = world
    cfg = OrchestrationConfig(task_runner=runner, dask={
        "n_workers": 2, "threads_per_worker": 1, "processes": True, "dashboard_address": None})
    bm25 = BM25Config(top_k=5, batch_size=5, threads=1)
    run_path = tmp_path / "runs" / "test.trec"
    with run_settings(tmp_path / "state"):
        if runner == "dask":  # worker processes report to one API started for the run
            monkeypatch.delenv("PREFECT_API_URL", raising=False)
            with temporary_settings(updates={PREFECT_API_URL: None}), shared_api(cfg):
                search_bm25_on(cfg, index, queries, run_path, bm25)
        else:
            search_bm25_on(cfg, index, queries, run_path, bm25)
    assert run_path.read_bytes() == reference.read_bytes()
    assert sorted(p.name for p in (run_path.parent / "test.batches").iterdir()) == [
        f"batch_{n:05d}.trec" for n in range(5)]
