"""Paraphrase generation in shards of questions (one task per shard) equals one generation.

On the mini world with the PPDB-substitution paraphraser (no training): the SQuAD dev
questions' suggestions in shards of 2 questions, generated one task per shard (directly, and as
the Prefect subflow on threads and, ``-m slow``, on two Dask worker processes), merge into the
candidates table, and the counts, of one unsharded run.
"""

from __future__ import annotations

import pytest

from tasks.config import OrchestrationConfig
from tasks.io.tables import read_table, write_table
from tasks.paraphrase.generation import (
    generate_candidates,
    load_generator,
    question_order,
    rows_of_questions,
)
from tasks.paraphrase.generation_shards import (
    generate_shard,
    merge_candidate_shards,
    plan_generation_shards,
    shard_path,
)
from tasks.paraphrase.ppdb_lookup import build_ppdb_table
from tasks.paraphrase.suggestions import suggest_for_squad


@pytest.fixture(scope="module")
def suggested(mini_params, tmp_path_factory):
    """``(suggestions, ppdb table, unsharded candidates, unsharded counts)``."""
    root = tmp_path_factory.mktemp("gen_shards")
    ppdb = root / "ppdb.sqlite"
    build_ppdb_table(mini_params.raw_path("ppdb"), ppdb)
    suggestions = root / "suggestions.parquet"
    suggest_for_squad(mini_params.raw_path("squad_dev"), ppdb, suggestions)
    generator = load_generator("ppdb_substitution", None, ppdb)
    try:
        counts = generate_candidates(suggestions, root / "candidates.parquet", generator)
    finally:
        generator.table.close()
    return suggestions, ppdb, root / "candidates.parquet", counts


def test_plan_covers_the_questions_in_order(suggested):
    suggestions = suggested[0]
    n = len(question_order(read_table(suggestions).to_pylist()))
    assert n >= 4  # enough for several shards of 2
    plan = plan_generation_shards(suggestions, 2)
    assert plan[0] == (0, 2) and plan[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(plan, plan[1:], strict=False))
    assert plan_generation_shards(suggestions, 10_000) == [(0, n)]
    with pytest.raises(ValueError, match="questions_per_shard must be >= 1"):
        plan_generation_shards(suggestions, 0)


def test_rows_of_questions_keeps_table_order():
    rows = [{"qid": q, "n": i} for i, q in enumerate("aabccd")]
    assert question_order(rows) == ["a", "b", "c", "d"]
    assert [r["n"] for r in rows_of_questions(rows, 1, 3)] == [2, 3, 4]


def test_shards_merge_into_the_table_and_counts_of_one_run(suggested, tmp_path):
    suggestions, ppdb, unsharded, counts = suggested
    shards = [generate_shard(suggestions, start, end, shard_path(tmp_path, n),
                             "ppdb_substitution", None, ppdb, None)
              for n, (start, end) in enumerate(plan_generation_shards(suggestions, 2))]
    assert len(shards) >= 2
    merged = merge_candidate_shards(shards, tmp_path / "candidates.parquet")
    assert merged == counts and list(merged) == list(counts)
    assert read_table(tmp_path / "candidates.parquet").equals(read_table(unsharded))


def test_a_changed_shard_table_is_an_error(suggested, tmp_path):
    suggestions, ppdb, _, _ = suggested
    shards = [generate_shard(suggestions, start, end, shard_path(tmp_path, n),
                             "ppdb_substitution", None, ppdb, None)
              for n, (start, end) in enumerate(plan_generation_shards(suggestions, 2))]
    first = next(s for s in shards if s["candidates"])
    table = read_table(first["path"])
    write_table(first["path"], table.slice(1).to_pylist(), schema=table.schema)
    with pytest.raises(ValueError, match="a shard table was changed after it was written"):
        merge_candidate_shards(shards, tmp_path / "candidates.parquet")


# dask (~15-40 s: a LocalCluster of 2 processes) is slow: the thread variant covers this
# subflow, tests/flows/test_distribution.py the same subflow pattern on Dask worker processes
# with the shared API, and tests/retrieval/test_jvm_worker.py the JVM in a daemonic worker
@pytest.mark.parametrize("runner", ["thread", pytest.param("dask", marks=pytest.mark.slow)])
def test_generation_subflow_on_the_task_runner_matches_one_run(suggested, mini_params, tmp_path,
                                                               monkeypatch, prefect_api, runner):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.generate_paraphrases import generate_paraphrases_on
    from tasks.distribution import shared_api
    from tasks.orchestration import run_settings

    suggestions, ppdb, unsharded, counts = suggested
    cfg = OrchestrationConfig(task_runner=runner, dask={
        "n_workers": 2, "threads_per_worker": 1, "processes": True, "dashboard_address": None})
    paraphrase = mini_params.paraphrase.model_copy(update={
        "generator": "ppdb_substitution", "generation_shard_questions": 2})
    out = tmp_path / "candidates.parquet"
    with run_settings(tmp_path / "state"):
        if runner == "dask":  # worker processes report to one API started for the run
            monkeypatch.delenv("PREFECT_API_URL", raising=False)
            with temporary_settings(updates={PREFECT_API_URL: None}), shared_api(cfg):
                got = generate_paraphrases_on(cfg, suggestions, out, None, ppdb, paraphrase,
                                              without_suggestion=True)
        else:
            got = generate_paraphrases_on(cfg, suggestions, out, None, ppdb, paraphrase,
                                          without_suggestion=True)
    assert got == counts
    assert read_table(out).equals(read_table(unsharded))
    assert len(list((tmp_path / "candidates.shards").iterdir())) == len(
        plan_generation_shards(suggestions, 2))
