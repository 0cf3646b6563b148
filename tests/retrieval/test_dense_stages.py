"""The dense stage end to end on a tiny world with all-MiniLM-L6-v2: steps, then the flow.

Step functions: shards -> index -> retrieval (TREC) -> evaluation -> RRF -> comparison with
bootstrap CIs -> figure. Flow: ``flows.retrieval`` with bm25, dense and hybrid, twice (the
second run is served from Prefect's cache).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from dense_testkit import PEOPLE, tiny_bert, write_tiny_world
from prefect_runs import settled_task_states

from tasks.config import DenseConfig
from tasks.io.trec import read_trec_run, write_trec_run
from tasks.params_loading import load_params
from tasks.retrieval.comparison import compare_retrievers, plot_accuracy
from tasks.retrieval.dense_encoding import (
    build_dense_index,
    encode_passage_shard,
    index_options,
    plan_passage_shards,
    retrieve_dense,
    shard_files,
)
from tasks.retrieval.faiss_index import read_index_manifest
from tasks.retrieval.fusion import fuse_runs
from tasks.retrieval.query_sets import eq_split, write_query_set
from tasks.retrieval.relation_results import evaluate_run
from tasks.retrieval.retrievers import DenseRetriever

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CFG = DenseConfig(max_length=64, shard_size=10, batch_size=8, top_k=5)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return write_tiny_world(tmp_path_factory.mktemp("tiny-world"))


def test_dense_steps_retrieve_evaluate_fuse_and_compare(world, tmp_path):
    passages, dataset = world
    spec = DenseRetriever(CFG).encoder()
    queries = write_query_set(eq_split(dataset), tmp_path / "test.json")
    plan = plan_passage_shards(passages, CFG.shard_size)
    assert plan == [(0, 10), (10, 20), (20, 24)]
    shards = [encode_passage_shard(passages, start, end, shard_files(tmp_path / "shards", n),
                                   spec, batch_size=CFG.batch_size, device="cpu")
              for n, (start, end) in enumerate(plan)]
    index = build_dense_index(shards, tmp_path / "index", spec, **index_options(CFG))
    manifest = read_index_manifest(index)
    assert (manifest["model"], manifest["rows"], manifest["dim"]) == ("all-MiniLM-L6-v2", 24, 384)

    runs = {"dense": retrieve_dense(index, queries, tmp_path / "dense.trec", spec, k=5,
                                    device="cpu")}
    dense = read_trec_run(runs["dense"])
    assert len(dense) == 2 * len(PEOPLE) and all(len(h) == 5 for h in dense.values())
    # a lexical stand-in for BM25: the person's two passages, birth place first
    lexical = {f"{r}:{i:06d}": [(str(2 * i + 1), 2.0), (str(2 * i + 2), 1.0)]
               for r in ("P19", "P106") for i in range(len(PEOPLE))}
    runs["lexical"] = write_trec_run(tmp_path / "lexical.trec", lexical, tag="lexical")
    runs["hybrid"] = fuse_runs([runs["lexical"], runs["dense"]], tmp_path / "hybrid.trec")
    assert read_trec_run(runs["hybrid"])["P19:000000"][0][0] == "1"

    metrics_paths = {}
    for name, run in runs.items():
        metrics_paths[name] = tmp_path / f"retrieval_{name}.json"
        metrics = evaluate_run(run, queries, passages, tmp_path / "results" / name,
                               metrics_paths[name], name, [1, 5],
                               hits_path=tmp_path / "results" / name / "test.hits.parquet")
        assert metrics["retriever"] == name and set(metrics["per_relation"]) == {"P19", "P106"}
    dense_metrics = json.loads(metrics_paths["dense"].read_text())
    assert dense_metrics["per_relation"]["P19"]["top5"] >= 75  # MiniLM finds birth places

    hits_paths = {name: tmp_path / "results" / name / "test.hits.parquet" for name in runs}
    comparison = compare_retrievers(hits_paths, metrics_paths,
                                    tmp_path / "comparison.json", tmp_path / "comparison.md",
                                    [1, 5], k=5, notes="Retrievers: the three of this test.\n")
    assert set(comparison["pairs"]) == {"dense_vs_lexical", "dense_vs_hybrid",
                                        "lexical_vs_hybrid"}
    assert comparison["questions"] == 2 * len(PEOPLE)
    for pair in comparison["pairs"].values():
        assert pair["ci_low"] <= pair["difference"] <= pair["ci_high"]
        a, b = comparison["accuracy"][pair["a"]], comparison["accuracy"][pair["b"]]
        assert pair["difference"] == pytest.approx(a - b, abs=0.02)
    assert json.loads((tmp_path / "comparison.json").read_text()) == comparison
    report = (tmp_path / "comparison.md").read_text()
    assert "| dense |" in report and "95% CI" in report
    assert "\n\nRetrievers: the three of this test.\n\n## Top-k" in report  # under the title

    png, csv = plot_accuracy(metrics_paths, [1, 5], tmp_path / "acc.png", tmp_path / "acc.csv")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert csv.read_text().splitlines()[0] == "k,dense,lexical,hybrid"


@pytest.mark.slow  # ~35 s with the Prefect API start; tests/flows/test_study_flow.py covers it
def test_retrieval_flow_runs_every_retriever_and_is_cached(world, tmp_path, prefect_api):
    from flows.retrieval import retrieval
    from tasks.layout import Layout
    from tasks.orchestration import run_settings

    passages, dataset = world
    overrides = {f"paths.{name}": str(tmp_path / name)
                 for name in ("data", "results", "metrics", "plots", "reports", "state")}
    overrides.update({"sources.passages": str(passages), "retrieval.ks": [1, 5, 20],
                      "retrieval.dense.shard_size": 10, "retrieval.dense.max_length": 64,
                      "retrieval.bm25.top_k": 20, "retrieval.dense.top_k": 20,
                      "retrieval.bucket_relations": [],  # the tiny world has no bucket files
                      # one more dense retriever by name, and a hybrid over it
                      "retrieval.dense_retrievers": {"tiny": {"model": str(tiny_bert(
                          tmp_path / "tiny-bert"))}},
                      "retrieval.hybrids": {"hybrid": ["bm25", "dense"],
                                            "bm25-tiny": ["bm25", "tiny"]},
                      "retrieval.retrievers": ["bm25", "dense", "hybrid", "tiny",
                                               "bm25-tiny"]})
    params = load_params(PROJECT_ROOT / "params.yaml", profile="smoke", overrides=overrides)
    layout = Layout(params)
    shutil.copytree(dataset, layout.eq_dataset)
    with run_settings(params.paths.state):
        first = retrieval(params=params, return_state=True)
        second = retrieval(params=params, return_state=True)
    assert first.is_completed() and second.is_completed()
    metrics = first.result()
    assert list(metrics) == ["bm25", "dense", "hybrid", "tiny", "bm25-tiny"]
    for name in metrics:
        assert json.loads(layout.retrieval_metrics(name).read_text()) == metrics[name]
        assert layout.retrieval_report(name).exists()
    assert len(list(layout.dense_shards().glob("shard_*.ids.json"))) == 3
    assert read_index_manifest(layout.dense_index())["rows"] == 24
    comparison = json.loads(layout.retrieval_comparison.read_text())
    assert {"bm25_vs_dense", "bm25_vs_hybrid", "dense_vs_hybrid", "tiny_vs_bm25-tiny"} <= set(
        comparison["pairs"]) and len(comparison["pairs"]) == 10
    # its own index, under the retriever's name (DenseRetriever.model_name)
    assert read_index_manifest(layout.dense_index("tiny"))["rows"] == 24
    buckets_csv = layout.retrieval_accuracy_plot.with_suffix(".csv").read_text()
    assert buckets_csv.splitlines()[0] == "k,bm25,dense,hybrid,tiny,bm25-tiny"
    assert layout.retrieval_comparison_report.exists()
    assert layout.retrieval_accuracy_plot.exists()
    assert layout.retrieval_accuracy_plot.with_suffix(".csv").exists()

    # over the flow run and its subflows (shard encoding, BM25 batches)
    states = settled_task_states(second.state_details.flow_run_id,
                                 {"encode passage shard": 3, "search BM25 batch": None})
    assert set(states["encode passage shard"]) == {"Cached"}
    assert all(set(s) == {"Cached"} for name, s in states.items() if name != "report top-k"), \
        states
