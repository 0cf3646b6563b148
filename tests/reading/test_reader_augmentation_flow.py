"""The augmentation kinds' flows and the reader-augmentation comparison on the smoke world with
a tiny random BERT: augmented training files (only pairs above the bar that the world raters
accept, N respected, skips counted), re-trained readers, before/after predictions and Tables
3-6; clear errors when the reader, the paraphrase flow's outputs or a kind's stage are missing,
or when the world raters are asked on real data; a kind left out writes only that it was."""

from __future__ import annotations

import json

import pytest
from smoke_params import smoke_params_at

from tasks.io.squad import read_squad, write_squad
from tasks.io.squad_predictions import read_predictions, write_predictions
from tasks.io.tables import read_table
from tasks.layout import Layout
from tasks.orchestration import run_settings
from tasks.reading.augmentation import ADDED_FILE, TRAIN_FILE
from tasks.reading.scoring import read_squad_v11

N = 6
#: A reader training seed besides the smoke profile's readers.model.seed.
EXTRA = 7


class SilentTagger:
    """A Flair-like tagger that finds nothing (no adversarial suggestion can be made)."""

    label_type = "ner"

    def predict(self, sentences, mini_batch_size=32, **kwargs):
        return None


def _params(smoke_world, root, tiny_bert, **augmentation):
    readers = smoke_world.readers
    return smoke_params_at(
        smoke_world, root, tiny_bert,
        paraphrase=smoke_world.paraphrase.model_copy(update={
            "generator": "ppdb_substitution", "ner_tagger": "stub-ner",
            "chunk_tagger": "stub-chunk"}),
        readers=readers.model_copy(update={
            "augmentation": readers.augmentation.model_copy(update=augmentation)}))


def _prerequisites(params) -> None:
    """What the readers and paraphrase stages leave: the reader, the PPDB table, the sets."""
    from tasks.paraphrase.ppdb_lookup import build_ppdb_table, resolve_pack
    from tasks.reading.stages import train_reader_on_squad

    layout = Layout(params)
    train_reader_on_squad(params.raw_path("squad_train"), layout.reader_dir("tiny-bert"),
                          params.readers.model)
    build_ppdb_table(resolve_pack(params.raw_path("ppdb"), None), layout.ppdb_table,
                     min_score=params.paraphrase.ppdb_min_score)
    dev = read_squad(params.raw_path("squad_dev")).raw
    para = json.loads(json.dumps(dev))
    for article in para["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["id"] += "-p"
                qa["question"] = qa["question"].lower()
    write_squad(layout.paraphrase_test_sets / "dev_orig.json", dev)
    write_squad(layout.paraphrase_test_sets / "dev_para.json", para)
    # the readers flow's prediction of SQuAD dev (gold answers): reused as the "before"
    write_predictions(layout.reader_predictions("tiny-bert") / "squad_dev.json",
                      {q.id: q.answers[0].text
                       for q in read_squad(params.raw_path("squad_dev")).questions()})


@pytest.fixture(scope="module")
def flow_run(prefect_api, smoke_world, tiny_bert, tmp_path_factory):
    import models.flair_taggers
    from flows.augment_reader import augment_adversarial, augment_non_adversarial
    from flows.reader_augmentation import reader_augmentation

    params = _params(smoke_world, tmp_path_factory.mktemp("augment"), tiny_bert,
                     kinds=("non_adversarial", "adversarial"), n_augmented=N,
                     max_source_questions=None, world_raters=True, extra_seeds=(EXTRA,))
    _prerequisites(params)
    stubs = {"stub-ner": SilentTagger(), "stub-chunk": SilentTagger()}
    with pytest.MonkeyPatch.context() as patch, run_settings(params.paths.state):
        patch.setattr(models.flair_taggers, "load_tagger", stubs.__getitem__)
        with pytest.raises(FileNotFoundError, match="no augmentation of kind 'non_adversarial' "
                           r"at .*augmentation.json: run its stage first \(qastress stage "
                           r"augment-non-adversarial\)"):
            reader_augmentation.fn(params=params)
        counts = {"non_adversarial": augment_non_adversarial(params=params),
                  "adversarial": augment_adversarial(params=params)}
        metrics = reader_augmentation(params=params)
    return params, Layout(params), metrics, counts


def test_augmented_training_file_holds_only_rated_pairs_above_the_bar(flow_run):
    params, layout, metrics, _ = flow_run
    counts = metrics["kinds"]["non_adversarial"]["augmentation"]
    work = layout.augmentation_dir("non_adversarial")
    scored = read_table(work / "scored.parquet").to_pylist()
    rated = read_table(work / "rated.parquet").to_pylist()
    assert [r["paraphrase"] for r in rated] == [r["paraphrase"] for r in scored]
    bar = params.paraphrase.similarity.augmentation
    above = [r for r in rated if r["similarity"] > bar]
    accepted = [r for r in above if r["world_verdict"] == "accepted"]
    outside = [r for r in above if r["world_verdict"] == "outside_grammar"]
    assert all(r["semantic_A"] is None for r in rated if r["similarity"] <= bar)
    assert all(min(r["semantic_A"], r["fluency_A"], r["semantic_B"], r["fluency_B"]) >= 4
               for r in accepted)
    assert counts["threshold"] == bar and counts["candidates"] == len(scored)
    assert counts["skipped_below_bar"] == len(scored) - len(above)
    rejected = len(above) - len(accepted) - len(outside)
    assert counts["skipped_by_raters"] == rejected > 0
    raters = counts["steps"]["world_raters"]
    assert (raters["accepted"], raters["rejected"]) == (len(accepted), rejected)
    assert 1 <= counts["added"] <= N and counts["added"] + counts["shortfall"] == N
    added = read_table(work / "data" / ADDED_FILE).to_pylist()
    assert len(added) == counts["added"]
    kept = {(r["qid"], r["paraphrase"]) for r in accepted + outside}
    assert all((r["orig_id"], r["paraphrase"]) in kept for r in added)
    train = read_squad_v11(work / "data" / TRAIN_FILE)
    n_train = len(read_squad(params.raw_path("squad_train")))
    assert len(train) == n_train + counts["added"] == counts["total_training_questions"]
    assert {r["id"] for r in added} <= {q.id for q in train.questions()}


def test_adversarial_kind_without_suggestions_adds_nothing_and_says_so(flow_run):
    _, layout, metrics, _ = flow_run
    counts = metrics["kinds"]["adversarial"]["augmentation"]
    assert counts["added"] == 0 and counts["shortfall"] == N
    assert counts["steps"]["suggestions"]["suggestions"] == 0
    assert counts["threshold"] == 0.83
    assert (layout.augmentation_dir("adversarial") / "reader" / "config.json").is_file()


def test_each_kind_stage_writes_its_counts_for_the_comparison(flow_run):
    _, layout, metrics, counts = flow_run
    for kind, returned in counts.items():
        saved = json.loads(layout.augmentation_counts(kind).read_text())
        assert saved == json.loads(json.dumps(returned))
        assert (saved["kind"], saved["configured"]) == (kind, True)
        block = metrics["kinds"][kind]["augmentation"]
        assert block == {k: v for k, v in saved.items() if k not in ("kind", "configured")}


def test_before_and_after_predictions_and_tables(flow_run):
    params, layout, metrics, _ = flow_run
    n_dev = len(read_squad(params.raw_path("squad_dev")))
    outs = {"tiny-bert": layout.augmentation_before_predictions,
            **{kind: layout.augmentation_predictions(kind)
               for kind in ("non_adversarial", "adversarial")}}
    for reader, out in outs.items():
        for name in ("dev_orig", "dev_para", "squad_dev"):
            path = out / f"{name}.json"
            if (reader, name) == ("tiny-bert", "squad_dev"):  # the readers flow's, reused
                assert not path.exists()
                continue
            assert len(read_predictions(path)) == n_dev, (reader, name)
    # which file was the "before" of each evaluated file
    files = json.loads((layout.augmentation_before_predictions / "files.json").read_text())
    assert files == {
        "dev_orig": str(layout.augmentation_before_predictions / "dev_orig.json"),
        "dev_para": str(layout.augmentation_before_predictions / "dev_para.json"),
        "squad_dev": str(layout.reader_predictions("tiny-bert") / "squad_dev.json")}
    for kind in ("non_adversarial", "adversarial"):
        assert metrics["kinds"][kind]["sets"]["squad_dev"]["before"]["exact_match"] == 100.0
    block = metrics["kinds"]["non_adversarial"]["sets"]["dev_para"]
    gain = block["f1_gain"]
    assert block["questions"] == n_dev
    assert gain["ci_low"] <= gain["difference"] <= gain["ci_high"]
    assert gain["difference"] == pytest.approx(block["after"]["f1"] - block["before"]["f1"],
                                               abs=0.02)
    assert json.loads(layout.augmentation_metrics.read_text()) == metrics
    text = layout.augmentation_report.read_text()
    assert "## Before vs after augmentation" in text and "## Augmented training data" in text
    assert f"| non_adversarial | dev_para | {n_dev} |" in text


def test_before_and_after_over_training_seeds(flow_run):
    params, layout, metrics, _ = flow_run
    main = params.readers.model.seed
    seeds = metrics["seeds"]
    assert seeds["seeds"] == [main, EXTRA]
    n_dev = len(read_squad(params.raw_path("squad_dev")))
    for reader in ("before", "non_adversarial", "adversarial"):
        assert (layout.augmentation_seed_reader(EXTRA, reader) / "config.json").is_file()
        for name in ("dev_orig", "dev_para", "squad_dev"):
            path = layout.augmentation_seed_predictions(EXTRA, reader) / f"{name}.json"
            assert len(read_predictions(path)) == n_dev, (reader, name)
    for kind in ("non_adversarial", "adversarial"):
        for name, block in seeds["kinds"][kind]["sets"].items():
            single = metrics["kinds"][kind]["sets"][name]
            # the main seed's row is the single-draw comparison's readers, scored again
            for side in ("before", "after"):
                assert block["per_seed"][str(main)][side] == {
                    m: single[side][m] for m in ("exact_match", "f1")}, (kind, name, side)
            for seed, row in block["per_seed"].items():
                assert row["exact_match_gain"] == pytest.approx(
                    row["after"]["exact_match"] - row["before"]["exact_match"], abs=0.011), seed
            assert block["exact_match_gain"]["seeds"] == 2
    # the extra seed's "before" reader is the readers flow's recipe with another seed: the
    # squad_dev before-scores of the main seed are the reused (gold) predictions
    dev = seeds["kinds"]["non_adversarial"]["sets"]["squad_dev"]["per_seed"]
    assert dev[str(main)]["before"]["exact_match"] == 100.0
    assert dev[str(EXTRA)]["before"]["exact_match"] < 100.0
    assert "dev" in seeds["kinds"]["non_adversarial"]["paraphrase_minus_original"]
    sets = seeds["kinds"]["non_adversarial"]["sets"]
    drop = seeds["kinds"]["non_adversarial"]["paraphrase_drop"]["dev"]["before"]["per_seed"]
    for seed in (main, EXTRA):
        orig, para = (sets[f"dev_{v}"]["per_seed"][str(seed)]["before"]["exact_match"]
                      for v in ("orig", "para"))
        assert drop[str(seed)]["exact_match"] == pytest.approx(orig - para, abs=0.011)
    by_edit = seeds["kinds"]["non_adversarial"]["paraphrase_drop_by_edit"]["dev"]["before"]
    assert by_edit["seeds"] == [main, EXTRA]
    assert by_edit["groups"]["all"]["per_seed"] == pytest.approx(
        [drop[str(s)]["exact_match"] for s in (main, EXTRA)], abs=0.011)
    assert sum(g["pairs"] for name, g in by_edit["groups"].items() if name != "all") == \
        by_edit["pairs"]
    text = layout.augmentation_report.read_text()
    assert "## Over reader training seeds" in text
    assert f"EM gain per seed ({main}, {EXTRA})" in text


def test_missing_reader_or_paraphraser_is_a_clear_error(smoke_world, tiny_bert, tmp_path):
    from flows.augment_reader import augment_non_adversarial, paraphraser_dir
    from flows.reader_augmentation import reader_augmentation

    params = _params(smoke_world, tmp_path, tiny_bert)
    with pytest.raises(FileNotFoundError, match="no trained reader at .*run the train-reader "
                       "stage first"):
        reader_augmentation.fn(params=params)
    real = _params(smoke_world, tmp_path / "real", tiny_bert, world_raters=True)
    real = real.model_copy(update={"sources": real.sources.model_copy(update={"world": "real"})})
    with pytest.raises(ValueError, match="world_raters needs the demo world"):
        augment_non_adversarial.fn(params=real)
    with pytest.raises(FileNotFoundError, match="no PPDB table at .*ppdb.sqlite"):
        paraphraser_dir(params)
    layout = Layout(params)
    layout.ppdb_table.parent.mkdir(parents=True)
    layout.ppdb_table.write_bytes(b"")
    neural = params.model_copy(update={"paraphrase": params.paraphrase.model_copy(
        update={"generator": "neural"})})
    with pytest.raises(FileNotFoundError, match=r"no paraphraser model found at .*paraphraser "
                       r"\(config.json, model.safetensors, spiece.model missing\)"):
        paraphraser_dir(neural)
    assert paraphraser_dir(params) is None  # the PPDB baseline needs no model


def test_a_kind_left_out_writes_only_that_and_the_comparison_refuses_it(smoke_world, tiny_bert,
                                                                        tmp_path):
    from flows.augment_reader import augment_adversarial, augment_kind
    from flows.reader_augmentation import augmented_kind, augmented_predictions

    params = _params(smoke_world, tmp_path, tiny_bert, kinds=("non_adversarial",))
    layout = Layout(params)
    assert augment_adversarial.fn(params=params) == {"configured": False}
    assert json.loads(layout.augmentation_counts("adversarial").read_text()) == {
        "kind": "adversarial", "configured": False}
    assert sorted(p.name for p in layout.augmentation_dir("adversarial").iterdir()) == [
        "augmentation.json"]
    assert list(layout.augmentation_predictions("adversarial").iterdir()) == []
    # asked for once the kind is configured, without running its stage again
    with pytest.raises(FileNotFoundError, match="the 'adversarial' stage ran while the kind was "
                       r"not in readers.augmentation.kinds; run it again \(qastress stage "
                       r"augment-adversarial\)"):
        augmented_kind(params, "adversarial")
    with pytest.raises(FileNotFoundError, match=r"no predictions of the 'adversarial' reader "
                       r"for \['dev_orig', 'squad_dev'\]"):
        augmented_predictions(params, "adversarial", {"squad_dev": tmp_path, "dev_orig": tmp_path})
    with pytest.raises(ValueError, match="unknown augmentation kind 'other'"):
        augment_kind(params, "other")


def test_a_run_that_dies_half_way_leaves_no_done_marker(smoke_world, tiny_bert, tmp_path,
                                                         monkeypatch):
    """augmentation.json marks a kind's stage done: a rerun that dies before it ends removes
    the last run's, and the comparison then asks for the stage instead of reading stale
    counts beside half-rewritten predictions."""
    import flows.augment_reader as augment_reader
    from flows.reader_augmentation import augmented_kind

    params = _params(smoke_world, tmp_path, tiny_bert, kinds=("non_adversarial",))
    counts = Layout(params).augmentation_counts("non_adversarial")
    counts.parent.mkdir(parents=True)
    counts.write_text(json.dumps({"kind": "non_adversarial", "configured": True, "added": 6}))

    def dies(*args, **kwargs):
        raise RuntimeError("killed half way")

    monkeypatch.setattr(augment_reader, "paraphraser_dir", lambda params: None)
    monkeypatch.setattr(augment_reader, "evaluation_files", lambda params: {})
    monkeypatch.setattr(augment_reader, "_augment", dies)
    with pytest.raises(RuntimeError, match="killed half way"):
        augment_reader.augment_kind(params, "non_adversarial")
    assert not counts.exists()
    with pytest.raises(FileNotFoundError, match="no augmentation of kind 'non_adversarial'"):
        augmented_kind(params, "non_adversarial")
