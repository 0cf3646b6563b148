"""The train-reader and readers flows on the smoke world with a tiny random BERT: checkpoint,
predictions for every set file, Tables 1-2 metrics + Markdown; absent released sets are
skipped; the readers flow without a trained reader is a clear error."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tasks.io.squad import read_squad, write_squad
from tasks.io.squad_predictions import read_predictions
from tasks.layout import Layout
from tasks.orchestration import run_settings


@pytest.fixture(scope="module")
def flow_run(prefect_api, smoke_world, tiny_bert, tmp_path_factory):
    from flows.readers import readers
    from flows.train_reader import train_reader

    root = tmp_path_factory.mktemp("readers")
    params = smoke_world.model_copy(update={
        "paths": smoke_world.paths.model_copy(update={
            name: root / name for name in ("results", "metrics", "reports", "state")}),
        "readers": smoke_world.readers.model_copy(update={
            "model": smoke_world.readers.model.model_copy(update={"model": str(tiny_bert)}),
            "released_sets": str(root / "no-release")})})
    layout = Layout(params)
    dev = read_squad(params.raw_path("squad_dev")).raw
    para = json.loads(json.dumps(dev))
    for article in para["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["id"] += "-p"
                qa["question"] = qa["question"].lower()
    sets_dir = root / "sets"
    write_squad(sets_dir / "dev_orig.json", dev)
    write_squad(sets_dir / "dev_para.json", para)
    ids = [qa["id"] for a in dev["data"] for p in a["paragraphs"] for qa in p["qas"]]
    pq.write_table(pa.table({"orig_id": ids, "squad_id": ids}), sets_dir / "dev_pairs.parquet")
    layout = Layout(params)
    patch = pytest.MonkeyPatch()
    patch.setattr(Layout, "paraphrase_test_sets", property(lambda self: sets_dir))
    try:
        with run_settings(params.paths.state):
            with pytest.raises(FileNotFoundError, match="no trained reader at .*run the "
                               "train-reader stage first"):
                readers.fn(params=params)
            train_reader(params=params)
            other = params.model_copy(update={"readers": params.readers.model_copy(update={
                "model": params.readers.model.model_copy(update={"max_epochs": 3})})})
            with pytest.raises(ValueError, match="trained with other readers.model settings "
                               r"\(max_epochs: trained with .*, asked for 3\)"):
                readers.fn(params=other)
            metrics = readers(params=params)
    finally:
        patch.undo()
    return params, layout, metrics, dev


def test_flow_writes_checkpoint_predictions_and_tables(flow_run):
    params, layout, metrics, dev = flow_run
    name = "tiny-bert"
    assert (layout.reader_dir(name) / "model.safetensors").is_file()
    n = sum(len(p["qas"]) for a in dev["data"] for p in a["paragraphs"])
    for variant in ("dev_orig", "dev_para", "squad_dev"):
        preds = read_predictions(layout.reader_predictions(name) / f"{variant}.json")
        assert len(preds) == n
    block = metrics["readers"][name]["dev"]
    assert block["questions"] == n and set(metrics["sets"]) == {"dev"}
    assert block["exact_match_drop"]["ci_low"] <= block["exact_match_drop"]["difference"]
    saved = json.loads(layout.readers_metrics.read_text())
    assert saved["squad_dev"][name]["questions"] == n
    assert f"| dev | {name} | {n} |" in layout.readers_report.read_text()
    # the demo world knows every dev question's subject: EM/F1 per subject-frequency bucket
    buckets = saved["squad_dev_buckets"]
    assert buckets["linked"] == n and buckets["unlinked"] == 0
    assert len(buckets["buckets"]) == params.readers.subject_buckets
    assert sum(b["questions"] for b in buckets["buckets"].values()) == n
    dev_em = saved["squad_dev"][name]["exact_match"]
    weighted = sum(b["questions"] * b["readers"][name]["exact_match"]
                   for b in buckets["buckets"].values() if b["questions"]) / n
    assert weighted == pytest.approx(dev_em, abs=0.05)
    assert "per subject-frequency bucket" in layout.readers_report.read_text()
    # the paraphrased set (its pairs table links each pair to a dev question): same buckets
    para = saved["paraphrased_buckets"]["dev"]
    assert (para["pairs"], para["linked"]) == (n, n)
    assert [b["pairs"] for b in para["buckets"].values()] == [
        b["questions"] for b in buckets["buckets"].values()]
    orig_em = sum(b["pairs"] * b["readers"][name]["exact_match"]["orig"]
                  for b in para["buckets"].values() if b["pairs"]) / n
    assert orig_em == pytest.approx(block["orig"]["exact_match"], abs=0.05)
    assert "`dev` per subject-frequency bucket" in layout.readers_report.read_text()
    # by what the paraphrases change: lower-casing changes no content word
    groups = saved["paraphrased_edit_groups"]["dev"]
    assert groups["pairs"] == n
    assert {g: b["pairs"] for g, b in groups["groups"].items()} == {
        "removes_answer_sentence_word": 0, "adds_context_word": 0, "other_content_change": 0,
        "no_content_change": n}
    assert groups["groups"]["other_content_change"]["readers"][name] is None
    same = groups["groups"]["no_content_change"]["readers"][name]["exact_match"]
    assert (same["orig"], same["para"]) == (block["orig"]["exact_match"],
                                            block["para"]["exact_match"])
    assert "`dev` by what the paraphrase changes" in layout.readers_report.read_text()


def test_without_subject_links_buckets_are_skipped_with_a_note(flow_run, capsys):
    from flows.readers import dev_buckets

    params = flow_run[0]
    absent = params.model_copy(update={"sources": params.sources.model_copy(
        update={"squad_dev_entities": "squad/none.jsonl"})})
    assert dev_buckets(absent, {}) is None
    assert "no subject links" in capsys.readouterr().out
