"""evaluate_run: accuracy over the whole run, DPR JSON capped at ``result_ctxs`` passages."""

from __future__ import annotations

import pytest

from tasks.io.dpr_results import read_retrieval_results
from tasks.io.entityquestions import EQQuestion, write_eq_file
from tasks.io.passages import Passage, write_passages
from tasks.io.trec import write_trec_run
from tasks.retrieval.query_sets import eq_split, write_query_set
from tasks.retrieval.relation_results import evaluate_run


def test_result_json_is_capped_but_accuracy_uses_the_whole_run(tmp_path):
    passages = tmp_path / "psgs_w100.tsv"
    write_passages(passages, [Passage("1", "Nothing here.", "A"),
                              Passage("2", "Born in Zürich, Switzerland.", "B"),
                              Passage("3", "Lyon is a city.", "C")])
    write_eq_file(tmp_path / "dataset" / "test" / "P19.test.json",
                  [EQQuestion("Where was Ann born?", ("Zürich",)),
                   EQQuestion("Where was Bob born?", ("Lyon",))])
    run = tmp_path / "run.trec"
    write_trec_run(run, {"P19:000000": [("1", 3.0), ("2", 2.0), ("3", 1.0)],
                         "P19:000001": [("3", 2.0), ("1", 1.0)]}, tag="t")
    queries = write_query_set(eq_split(tmp_path / "dataset"), tmp_path / "test.json")
    full = evaluate_run(run, queries, passages, tmp_path / "full", tmp_path / "f.json",
                        "bm25", [1, 2], mode="dpr-string", result_ctxs=None)
    capped = evaluate_run(run, queries, passages, tmp_path / "cap",
                          tmp_path / "c.json", "bm25", [1, 2], mode="dpr-string", result_ctxs=1)
    assert full["per_relation"] == capped["per_relation"] == {"P19": {"top1": 50.0,
                                                                       "top2": 100.0}}
    full_json = read_retrieval_results(tmp_path / "full" / "P19.bm25.json")
    capped_json = read_retrieval_results(tmp_path / "cap" / "P19.bm25.json")
    assert [len(r.ctxs) for r in full_json] == [3, 2]
    assert [len(r.ctxs) for r in capped_json] == [1, 1]
    assert [c.has_answer for c in full_json[0].ctxs] == [False, True, False]


def test_run_coverage_counts_questions_without_a_ranking_and_refuses_a_foreign_run(tmp_path):
    from tasks.io.errors import DataFormatError
    from tasks.retrieval.relation_results import run_coverage

    qids = ["P19:000000", "P19:000001", "P36:000000"]
    hits = [("7", 1.0)]
    assert run_coverage({q: hits for q in qids}, qids, tmp_path / "bm25.trec") is None
    note = run_coverage({"P19:000000": hits, "P36:000000": hits, "q9": hits}, qids,
                        tmp_path / "bm25.trec")
    assert note == ("1 of 3 questions have no ranking in bm25.trec (scored as misses: "
                    "P19:000001); 1 queries of the run are not questions of the set (left out: "
                    "q9)")
    with pytest.raises(DataFormatError, match=r"bm25\.trec, query ids: expected the query set's "
                                              r"ids \('P19:000000', \.\.\.\); got none of its 3 "
                                              r"questions; the run's ids: '1', '2'"):
        run_coverage({"1": hits, "2": hits}, qids, tmp_path / "bm25.trec")
    with pytest.raises(DataFormatError, match=r"none \(empty run\)"):
        run_coverage({}, qids, tmp_path / "bm25.trec")
