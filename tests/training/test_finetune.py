"""Fine-tuning a saved DPR pair (tasks/training/finetune.py): onlyQ keeps the passage encoder
bit-identical and searches the baseline's index; full re-encodes (the index refuses it);
multi-task mixes both sources in the counts asked for; empty sets are sized 0, not dropped."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tasks.io.passages import Passage, write_passages
from tasks.retriever_config import RetrieverTrainConfig
from tasks.retriever_experiments_config import FinetuneOverrides
from tasks.training.finetune import finetune, finetune_config, training_set_size
from tasks.training.retriever import encoder_spec


def _weights(model_dir: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(model_dir / "model.safetensors"))


@pytest.fixture(scope="module")
def baseline(tiny_bert, tiny_train_json, tiny_config, tmp_path_factory) -> Path:
    """A tiny DPR pair trained for 6 steps: the 'DPR-NQ' every fine-tune starts from."""
    from models.retriever import load_samples, train_retriever

    root = tmp_path_factory.mktemp("baseline")
    train_retriever(load_samples(tiny_train_json), tiny_bert, tiny_config(max_steps=6),
                    root / "pair", root / "ckpt")
    return root / "pair"


@pytest.fixture(scope="module")
def relation_json(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rel") / "P19_no_overlap.train.json"
    places = ("oslo", "lima", "cairo", "quito", "perth", "dakar", "hanoi", "minsk", "sofia",
              "tunis", "bern", "riga")
    examples = [{"dataset": "P19", "question": f"where was person{i} born",
                 "answers": [place.title()],
                 "positive_ctxs": [{"title": f"Person{i}", "text": f"person{i} was born in "
                                    f"{place}", "passage_id": str(i)}],
                 "negative_ctxs": [], "hard_negative_ctxs": []}
                for i, place in enumerate(places)]
    path.write_text(json.dumps(examples), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def finetuned(baseline, relation_json, tiny_config, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ft")
    out = {}
    for mode in ("onlyQ", "full"):
        config = tiny_config(max_steps=4, freeze=mode)
        summary = finetune({"P19": [relation_json]}, baseline, root / mode, str(root / "c" / mode),
                           config)
        assert summary["global_step"] == 4 and summary["freeze"] == mode
        out[mode] = root / mode
    return out


def test_onlyq_keeps_the_passage_encoder_bit_identical(baseline, finetuned):
    from tasks.retrieval.encoders import model_dir_fingerprint

    only_q = finetuned["onlyQ"]
    assert model_dir_fingerprint(only_q / "ctx_encoder") == model_dir_fingerprint(
        baseline / "ctx_encoder")  # every file: weights, config, tokenizer
    before, after = _weights(baseline / "question_encoder"), _weights(only_q / "question_encoder")
    assert any(not np.array_equal(before[k], after[k]) for k in before)  # it did train
    full_ctx, base_ctx = _weights(finetuned["full"] / "ctx_encoder"), _weights(
        baseline / "ctx_encoder")
    assert any(not np.array_equal(full_ctx[k], base_ctx[k]) for k in base_ctx)
    args = json.loads((only_q / "training_args.json").read_text())
    assert args["fine_tuned_from"] == str(baseline) and args["sources"] == {"P19": 12}


def _index(baseline: Path, root: Path) -> tuple[Path, object]:
    """The baseline's flat index over 30 passages (the retrieval core's encode + build)."""
    from tasks.retrieval.dense_shards import encode_shard, shard_path
    from tasks.retrieval.faiss_index import build_faiss_index

    passages = root / "psgs.tsv"
    write_passages(passages, [Passage(str(i), f"the {w} is in room {i}", w.title()) for i, w in
                              enumerate(["tiger", "piano", "river", "castle", "pepper"] * 6)])
    spec = encoder_spec(baseline)
    record = encode_shard(passages, 0, 30, shard_path(root / "shards", 0), spec, batch_size=8,
                          device="cpu")
    return build_faiss_index([record], root / "index", model_fingerprint=spec.fingerprint), spec


def test_onlyq_searches_the_baseline_index_and_full_is_refused(baseline, finetuned, tmp_path):
    from tasks.io.entityquestions import EQQuestion
    from tasks.io.trec import read_trec_run
    from tasks.retrieval.frozen_index import retrieve_frozen_index
    from tasks.retrieval.query_sets import QuerySet, write_query_set

    index, base_spec = _index(baseline, tmp_path)
    queries = write_query_set(QuerySet("q", {"P19": [EQQuestion("where was the tiger born",
                                                                ("room 0",))]}),
                              tmp_path / "q.json")
    spec = encoder_spec(finetuned["onlyQ"])
    assert spec.fingerprint != base_spec.fingerprint  # a new question encoder...
    run = read_trec_run(retrieve_frozen_index(index, queries, tmp_path / "run.trec", spec,
                                              base_spec, k=5, device="cpu"))
    assert len(run["P19:000000"]) == 5  # ...searching the index built by the baseline
    with pytest.raises(ValueError, match="not frozen, so re-encode the passages"):
        retrieve_frozen_index(index, queries, tmp_path / "bad.trec",
                              encoder_spec(finetuned["full"]), base_spec, k=5, device="cpu")


def test_multitask_mixes_both_sources_in_the_counts_asked(baseline, relation_json,
                                                          tiny_train_json, tiny_config, tmp_path):
    config = tiny_config(max_steps=2, batch_size=4)
    summary = finetune({"P19": [relation_json], "nq": [tiny_train_json]}, baseline,
                       tmp_path / "multi", str(tmp_path / "ckpt"), config,
                       max_questions={"P19": None, "nq": 9})
    assert summary["sources"] == {"P19": 12, "nq": 9} and summary["train_questions"] == 21
    args = json.loads((tmp_path / "multi" / "training_args.json").read_text())
    assert args["n_train"] == 21 and set(args["train_sets"]) == {"P19", "nq"}


def test_empty_training_sets_have_size_zero_and_cannot_train(baseline, tmp_path, tiny_config):
    questions = tmp_path / "P159_no_overlap.train.json"
    questions.write_text("[]", encoding="utf-8")
    assert training_set_size(questions, tmp_path / "absent.json").examples == 0
    assert training_set_size(tmp_path / "no-file.json", tmp_path / "absent.json").questions == 0
    questions.write_text(json.dumps([{"question": "q?", "answers": ["a"]}]), encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="no DPR training JSON for the 1 questions"):
        training_set_size(questions, tmp_path / "absent.json")
    empty_dpr = tmp_path / "dpr.json"
    empty_dpr.write_text("[]", encoding="utf-8")
    size = training_set_size(questions, empty_dpr)
    assert (size.questions, size.examples, size.without_positive) == (1, 0, 1)
    with pytest.raises(ValueError, match="training set 'P159'.*empty"):
        finetune({"P159": [empty_dpr]}, baseline, tmp_path / "x", str(tmp_path / "c"),
                 tiny_config())


def test_finetune_config_overrides_and_freezes():
    base = RetrieverTrainConfig(max_steps=300, max_epochs=None, lr=1e-4, batch_size=16)
    config = finetune_config(base, FinetuneOverrides(max_epochs=10), "onlyP")
    assert (config.max_steps, config.max_epochs, config.freeze, config.lr) == (None, 10, "onlyP",
                                                                               1e-4)
    config = finetune_config(base, FinetuneOverrides(max_steps=7, lr=3e-5, batch_size=4), "full")
    assert (config.max_steps, config.lr, config.batch_size, config.warmup_steps) == (7, 3e-5, 4, 0)


def test_tsne_figure_is_written_with_its_numbers(baseline, finetuned, relation_json,
                                                 tiny_train_json, tmp_path):
    from tasks.training.tsne import tsne_figure

    png = tmp_path / "plots" / "retriever_tsne.png"
    summary = tsne_figure({"NQ-style": tiny_train_json, "P19": relation_json},
                          {"before": encoder_spec(baseline),
                           "after": encoder_spec(finetuned["full"])},
                          png, tmp_path / "tsne.json", passages_per_set=10, perplexity=5.0,
                          device="cpu")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert summary["passages"] == {"NQ-style": 10, "P19": 10}
    assert set(summary["silhouette_cosine"]) == {"before", "after"}
    assert all(-1 <= v <= 1 for v in summary["silhouette_cosine"].values())
    rows = png.with_suffix(".csv").read_text().splitlines()
    assert rows[0] == "panel,set,x,y" and len(rows) == 1 + 2 * 20
    assert json.loads((tmp_path / "tsne.json").read_text())["passages"]["P19"] == 10


def test_finetune_pair_checks_the_frozen_side_and_registers_the_pair(
        baseline, relation_json, tiny_config, tmp_path, monkeypatch):
    """The one fine-tune step of Tables 2-4 (flows._finetune.finetune_pair; its Prefect task
    replaced by the plain function here, the flow tests run the task)."""
    import flows._finetune as step
    from tasks.config import DenseConfig

    monkeypatch.setattr(step, "finetune_task", finetune)
    dense = DenseConfig(batch_size=4, max_length=32, cpu_threads=1)
    tuned = {}
    for mode in ("onlyQ", "onlyP"):
        tuned[mode] = step.finetune_pair(
            f"ft-{mode.lower()}", {"P19": [relation_json]}, tiny_config(max_steps=2, freeze=mode),
            pair_dir=baseline, out_dir=tmp_path / mode, checkpoint_dir=tmp_path / "c" / mode,
            dense=dense)
    only_q = tuned["onlyQ"]
    assert only_q.passage_tensors_compared and only_q.passage_tensors_compared > 0
    assert tuned["onlyP"].passage_tensors_compared is None
    assert only_q.summary["freeze"] == "onlyQ" and only_q.summary["sources"] == {"P19": 12}
    spec = only_q.retriever.encoder()
    assert (only_q.retriever.name, spec.kind, spec.normalize) == ("ft-onlyq", "dpr", False)
    assert Path(spec.ctx_model) == (tmp_path / "onlyQ" / "ctx_encoder").resolve()
    assert only_q.retriever.config.cpu_threads == 1  # retrieval.dense settings carried over

    def unfrozen(train_sets, init_model, out_dir, checkpoint_dir, config, max_questions):
        return finetune(train_sets, init_model, out_dir, checkpoint_dir,
                        config.model_copy(update={"freeze": "full"}), max_questions)

    monkeypatch.setattr(step, "finetune_task", unfrozen)
    with pytest.raises(ValueError, match="passage encoder tensor"):
        step.finetune_pair("ft-bad", {"P19": [relation_json]},
                           tiny_config(max_steps=2, freeze="onlyQ"), pair_dir=baseline,
                           out_dir=tmp_path / "bad", checkpoint_dir=tmp_path / "c" / "bad",
                           dense=dense)
