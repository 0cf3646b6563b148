"""Per-question first hits written by the evaluation and read by the retriever comparison."""

from __future__ import annotations

import pytest
from dense_testkit import PEOPLE, write_tiny_world

from tasks.evaluation.topk import hits_at_k
from tasks.io.errors import DataFormatError
from tasks.io.tables import write_table
from tasks.io.trec import read_trec_run, write_trec_run
from tasks.retrieval.core import collect_passages, first_hits, load_passages
from tasks.retrieval.query_sets import eq_split, read_query_set, write_query_set
from tasks.retrieval.question_hits import (
    aligned_first_hits,
    read_question_hits,
    write_question_hits,
)
from tasks.retrieval.relation_results import evaluate_run


def _runs(tmp_path, split):
    """Three rankings of the tiny world: birth place first, occupation first, and a ranking
    whose answer comes only at rank 3 (deeper than a top-2 comparison looks)."""
    runs = {}
    n = len(PEOPLE)
    orders = {"a": lambda i: [2 * i + 1, 2 * i + 2], "b": lambda i: [2 * i + 2, 2 * i + 1],
              "deep": lambda i: [2 * ((i + 1) % n) + 1, 2 * ((i + 2) % n) + 1, 2 * i + 1,
                                 2 * i + 2]}
    for name, order in orders.items():
        run = {qid: [(str(pid), float(10 - rank)) for rank, pid in enumerate(order(i % n))]
               for i, qid in enumerate(split.qids)}
        runs[name] = write_trec_run(tmp_path / f"{name}.trec", run, tag=name)
    return runs


def test_evaluation_writes_the_first_hits_a_rejudged_run_gives(tmp_path):
    passages, dataset = write_tiny_world(tmp_path)
    queries = write_query_set(eq_split(dataset), tmp_path / "test.json")
    split = read_query_set(queries)
    runs = _runs(tmp_path, split)
    table = collect_passages(list(runs.values()), passages, tmp_path / "passages.parquet")
    texts = load_passages(table)
    for name, path in runs.items():
        hits_path = tmp_path / name / "test.hits.parquet"
        evaluate_run(path, queries, table, tmp_path / name, tmp_path / f"{name}.json", name,
                     [1, 2, 4], hits_path=hits_path)
        stored = read_question_hits(hits_path)
        assert stored.qids == split.qids
        assert stored.groups == [g for g, items in split.groups.items() for _ in items]
        for k in (1, 2, 4):  # what the comparison judged from the truncated run before
            judged = [hit for firsts in first_hits(read_trec_run(path), split, texts, k).values()
                      for hit in hits_at_k(firsts, k)]
            assert hits_at_k(stored.first_hits, k) == judged, (name, k)
    deep = read_question_hits(tmp_path / "deep" / "test.hits.parquet").first_hits
    assert set(deep) - {None} == {2, 3}  # P19 at rank 3, P106 at 4: the whole ranking judged
    assert hits_at_k(deep, 2) == [0] * len(deep)


def test_aligned_first_hits_need_the_same_questions_in_the_same_order(tmp_path):
    write_question_hits(tmp_path / "a.parquet", {"P19": [0, None], "P106": [3]})
    write_question_hits(tmp_path / "b.parquet", {"P19": [None, 1], "P106": [0]})
    write_question_hits(tmp_path / "c.parquet", {"P106": [0], "P19": [None, 1]})
    write_question_hits(tmp_path / "d.parquet", {"P19": [None, 1]})
    got = aligned_first_hits({"a": tmp_path / "a.parquet", "b": tmp_path / "b.parquet"})
    assert got == {"a": [0, None, 3], "b": [None, 1, 0]}
    with pytest.raises(ValueError, match=r"c.parquet and .*a.parquet judge different "
                                         r"questions \(3 and 3; in another order\)"):
        aligned_first_hits({"a": tmp_path / "a.parquet", "c": tmp_path / "c.parquet"})
    with pytest.raises(ValueError, match=r"\(2 and 3; e.g. P106:000000 in only one\)"):
        aligned_first_hits({"a": tmp_path / "a.parquet", "d": tmp_path / "d.parquet"})


def test_a_table_without_the_columns_is_named(tmp_path):
    write_table(tmp_path / "x.parquet", {"qid": ["P19:000000"], "rank": [1]})
    with pytest.raises(DataFormatError, match=r"x.parquet.*columns.*no group, first_hit"):
        read_question_hits(tmp_path / "x.parquet")
