"""The retrieval core: query sets, the retriever registry, passages read once, one evaluate."""

from __future__ import annotations

import pytest
from dense_testkit import PEOPLE, write_tiny_world

from tasks.config import RetrievalConfig
from tasks.io.trec import write_trec_run
from tasks.params_loading import load_params
from tasks.retrieval import core
from tasks.retrieval.core import collect_passages, evaluate, load_passages
from tasks.retrieval.query_sets import eq_split, read_query_set, write_query_set
from tasks.retrieval.relation_results import evaluate_run
from tasks.retrieval.retrievers import (
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    RetrieverRegistry,
    describe_retrievers,
    registry_from_config,
)


def test_query_set_round_trips_with_ids_in_group_order(tmp_path):
    _, dataset = write_tiny_world(tmp_path)
    split = eq_split(dataset)
    assert sorted(split.groups) == ["P106", "P19"]
    first = next(iter(split.groups))
    assert split.qids[0] == f"{first}:000000" and len(split) == 2 * len(PEOPLE)
    path = write_query_set(split, tmp_path / "q.json")
    again = read_query_set(path)
    assert again.qids == split.qids and again.texts == split.texts
    assert dict(again.groups) == {g: list(q) for g, q in split.groups.items()}
    before = path.read_bytes()
    write_query_set(again, path)
    assert path.read_bytes() == before  # same set, same bytes: a stable cache key


def test_registry_from_params_registers_named_dense_and_hybrids():
    cfg = RetrievalConfig(
        retrievers=("bm25", "dpr-nq", "bm25-dpr"),
        dense_retrievers={"dpr-nq": {"model": "some/dpr-question_encoder", "ctx_model": "c",
                                     "title": "DPR (NQ)"}},
        hybrids={"hybrid": ("bm25", "dense"), "bm25-dpr": ("bm25", "dpr-nq")}, rrf_k=30)
    registry = registry_from_config(cfg)
    assert list(registry) == ["bm25", "dense", "dpr-nq", "hybrid", "bm25-dpr"]
    dpr = registry["dpr-nq"]
    assert isinstance(dpr, DenseRetriever) and dpr.title == "DPR (NQ)"
    assert (dpr.config.model, dpr.config.ctx_model) == ("some/dpr-question_encoder", "c")
    assert dpr.config.top_k == cfg.dense.top_k  # the rest from retrieval.dense
    assert dpr.model_name != registry["dense"].model_name  # its own index directory
    fused = registry["bm25-dpr"]
    assert isinstance(fused, HybridRetriever) and fused.k == 30 and fused.inputs == ("bm25",
                                                                                     "dpr-nq")
    # what "bm25-dpr" needs, inputs first; "dense" and "hybrid" are not run
    assert [r.name for r in registry.needed(["bm25-dpr"])] == ["bm25", "dpr-nq", "bm25-dpr"]


def test_describe_retrievers_names_what_runs_and_what_was_left_out():
    cfg = RetrievalConfig(
        retrievers=("bm25", "bm25-dpr", "dpr-nq"),
        dense_retrievers={"dpr-nq": {"model": "some/dpr", "ctx_model": "c", "title": "DPR (NQ)"}},
        hybrids={"hybrid": ("bm25", "dense"), "bm25-dpr": ("bm25", "dpr-nq")})
    registry = registry_from_config(cfg)
    text = describe_retrievers(registry, cfg.retrievers)
    run, left_out = text.splitlines()
    assert run == ("Retrievers: `bm25` (BM25); `bm25-dpr` (bm25-dpr: BM25 + DPR (NQ), RRF); "
                   "`dpr-nq` (DPR (NQ)).")
    assert left_out == ("Registered but not run (not in `retrieval.retrievers`): `dense` "
                        f"({cfg.dense.model}); `hybrid` (hybrid: BM25 + dense, RRF).")
    everything = describe_retrievers(registry, list(registry))
    assert "not run" not in everything and everything.count("`") == 2 * len(list(registry))


def test_a_prebuilt_index_belongs_to_the_retriever_that_names_it():
    cfg = RetrievalConfig(
        retrievers=("dense", "dpr-nq", "given"),
        dense={"model": "facebook/dpr-question_encoder-single-nq-base",
               "prebuilt_index": "wikipedia-dpr-100w.dpr-single-nq"},
        dense_retrievers={"dpr-nq": {"model": "some/dpr", "title": "DPR (NQ)"},
                          "given": {"model": "other/dpr", "prebuilt_index": "/indexes/other"}})
    registry = registry_from_config(cfg)
    assert registry["dense"].config.prebuilt_index == "wikipedia-dpr-100w.dpr-single-nq"
    assert registry["dpr-nq"].config.prebuilt_index is None  # not inherited from dense
    assert registry["given"].config.prebuilt_index == "/indexes/other"
    assert describe_retrievers(registry, cfg.retrievers).splitlines()[0] == (
        "Retrievers: `dense` (facebook/dpr-question_encoder-single-nq-base, passages from the "
        "prebuilt index `wikipedia-dpr-100w.dpr-single-nq`); `dpr-nq` (DPR (NQ)); `given` "
        "(passages from the prebuilt index `/indexes/other`).")


def test_default_hybrid_and_bad_registrations():
    registry = registry_from_config(RetrievalConfig(dense_retrievers={}, retrievers=("bm25",)))
    assert registry["hybrid"].title == "hybrid: BM25 + dense, RRF"
    assert registry["hybrid"].depth == 100
    with pytest.raises(ValueError, match="already registered"):
        registry.register(BM25Retriever(RetrievalConfig().bm25))
    with pytest.raises(ValueError, match="two distinct registered"):
        RetrieverRegistry().hybrid("h", ("bm25", "dense"))
    with pytest.raises(ValueError, match="not registered"):
        RetrievalConfig(retrievers=("bm25", "not-registered"))
    with pytest.raises(ValueError, match="dashes only"):
        RetrievalConfig(hybrids={"bm25+dense": ("bm25", "dense")})
    with pytest.raises(ValueError, match="fuses unknown"):
        RetrievalConfig(hybrids={"h": ("bm25", "nope")})


def test_params_yaml_registry_defaults_equal_code_defaults():
    from pathlib import Path

    params = load_params(Path(__file__).resolve().parents[2] / "params.yaml", profile="smoke")
    code = RetrievalConfig()
    assert params.retrieval.hybrids == code.hybrids and params.retrieval.rrf_k == code.rrf_k
    assert params.retrieval.dense_retrievers == code.dense_retrievers
    assert code.dense_retrievers["dpr-nq"].model == "trained:dpr-nq"


def test_trained_retriever_resolves_to_the_saved_pair_or_a_clear_error(tmp_path):
    cfg = RetrievalConfig()  # dpr-nq: trained:dpr-nq
    with pytest.raises(ValueError, match="needs the project layout"):
        registry_from_config(cfg)
    with pytest.raises(FileNotFoundError, match="run the train-retriever stage first"):
        registry_from_config(cfg, lambda run: tmp_path / run)
    for side in ("question_encoder", "ctx_encoder"):
        (tmp_path / "dpr-nq" / side).mkdir(parents=True)
    dpr = registry_from_config(cfg, lambda run: tmp_path / run)["dpr-nq"]
    assert dpr.config.model == str(tmp_path / "dpr-nq" / "question_encoder")
    assert dpr.config.ctx_model == str(tmp_path / "dpr-nq" / "ctx_encoder")
    assert dpr.config.normalize is False and dpr.model_name == "dpr-nq"
    (tmp_path / "shared" / "encoder").mkdir(parents=True)
    shared = registry_from_config(
        RetrievalConfig(dense_retrievers={"mine": {"model": "trained:shared"}},
                        retrievers=("mine",)), lambda run: tmp_path / run)["mine"]
    assert shared.config.model == str(tmp_path / "shared" / "encoder")


def test_passages_are_read_once_for_every_run_and_query_set(tmp_path, monkeypatch):
    passages, dataset = write_tiny_world(tmp_path)
    queries = write_query_set(eq_split(dataset), tmp_path / "test.json")
    split = read_query_set(queries)
    # two "retrievers" (birth-place passage first / occupation passage first)
    runs = {}
    for name, order in (("a", (1, 2)), ("b", (2, 1))):
        run = {qid: [(str(2 * (i % len(PEOPLE)) + order[0]), 2.0),
                     (str(2 * (i % len(PEOPLE)) + order[1]), 1.0)]
               for i, qid in enumerate(split.qids)}
        runs[name] = write_trec_run(tmp_path / f"{name}.trec", run, tag=name)
    reads = []
    real = core.passages_by_id
    monkeypatch.setattr(core, "passages_by_id",
                        lambda path, wanted: reads.append(path) or real(path, wanted))
    table = collect_passages(list(runs.values()), passages, tmp_path / "passages.parquet")
    assert reads == [passages] and len(load_passages(table)) == 24
    passages.unlink()  # evaluation never goes back to the collection
    metrics = {name: evaluate_run(path, queries, table, tmp_path / name, tmp_path / f"{name}.json",
                                  name, [1, 2]) for name, path in runs.items()}
    assert metrics["a"]["per_relation"]["P19"] == {"top1": 100.0, "top2": 100.0}
    assert metrics["b"]["per_relation"]["P19"] == {"top1": 0.0, "top2": 100.0}
    assert metrics["b"]["per_relation"]["P106"]["top1"] == 100.0
    assert reads == [passages]


def test_evaluate_scores_groups_and_leaves_empty_ones_out(tmp_path):
    from tasks.io.entityquestions import EQQuestion
    from tasks.retrieval.query_sets import QuerySet

    query_set = QuerySet("x", {"g1": [EQQuestion("q?", ("Lyon",))], "g2": []})
    passages = {"1": ("A", "nothing"), "2": ("B", "born in Lyon")}
    result = evaluate({"g1:000000": [("1", 2.0), ("2", 1.0)]}, query_set, passages, [1, 2])
    assert list(result) == ["g1"] and result["g1"].first_hits == [1]
    assert result["g1"].accuracy == {1: 0.0, 2: 1.0}


def test_an_id_that_the_collection_holds_twice_is_an_error(tmp_path):
    """Which text did the run retrieve? An id met twice is an error naming the file and the
    line (iter_passages), not the later text silently kept."""
    from tasks.io.errors import DataFormatError
    from tasks.io.passages import Passage, write_passages
    from tasks.retrieval.evaluate import passages_by_id

    tsv = tmp_path / "psgs.tsv"
    write_passages(tsv, [Passage("1", "first text", "A"), Passage("1", "other text", "A"),
                         Passage("2", "two", "B")])
    for wanted in (["1", "2"], ["2"]):
        with pytest.raises(DataFormatError, match=r"psgs.tsv, line 3: expected a passage id "
                           "not used before in the file; got '1' a second time"):
            passages_by_id(tsv, wanted)
