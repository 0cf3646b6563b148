"""Bad input gets a clear error naming what is wrong."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from models.retriever import RetrieverTrainConfig, check_index_dim, load_samples
from models.retriever.api import fit_biencoder, resolve_hardware
from tasks.io.errors import DataFormatError
from tasks.params_loading import ParamsError, load_params
from tasks.training.retriever import relation_training_files


def _write(path, records):
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_training_json_without_positive_names_the_record(tmp_path):
    good = {"question": "q0", "answers": ["a"], "positive_ctxs": [{"title": "t", "text": "x"}]}
    bad = {"question": "who is nobody", "answers": ["a"], "positive_ctxs": [],
           "hard_negative_ctxs": [{"title": "t", "text": "y"}]}
    path = _write(tmp_path / "train.json", [good, good, bad])
    with pytest.raises(DataFormatError, match=r"train\.json, record 2 \(question 'who is "
                                              r"nobody'\).*positive_ctxs"):
        load_samples(path)


def test_empty_training_set_and_empty_relation_set(tmp_path):
    with pytest.raises(ValueError, match="training set is empty"):
        load_samples(_write(tmp_path / "empty.json", []))
    with pytest.raises(ValueError, match="training set is empty"):
        load_samples([])
    with pytest.raises(ValueError, match="relation set is empty"):
        relation_training_files(tmp_path, [], "train")
    with pytest.raises(FileNotFoundError, match=r"relation P19: no DPR training file .*"
                                                r"P19\.train\.json"):
        relation_training_files(tmp_path, ["P19"], "train")


def test_unknown_strategy_is_refused_in_config_and_params():
    with pytest.raises(ValidationError, match="unknown strategy 'horovod'"):
        RetrieverTrainConfig(strategy="horovod")
    with pytest.raises(ParamsError, match=r"retriever_training\.dpr\.strategy.*unknown "
                                          "strategy"):
        load_params("params.yaml", profile="smoke",
                    overrides={"retriever_training.dpr.strategy": "horovod"})


def test_hardware_resolution():
    assert resolve_hardware(RetrieverTrainConfig(accelerator="cpu"))["precision"] == "32-true"
    assert resolve_hardware(RetrieverTrainConfig(devices=4))["strategy"] == "ddp"
    assert resolve_hardware(RetrieverTrainConfig(num_nodes=2))["strategy"] == "ddp"
    with pytest.raises(ValueError, match="bf16-mixed needs a CUDA device"):
        resolve_hardware(RetrieverTrainConfig(accelerator="cpu", precision="bf16-mixed"))
    assert RetrieverTrainConfig(pooling="mean").pooling == "mean"  # a mean-pooled pair
    with pytest.raises(ValidationError, match="needs two encoders"):
        RetrieverTrainConfig(shared=True, freeze="onlyQ")


def test_checkpoint_hidden_size_differs_from_the_index(tmp_path, tiny_bert, tiny_train_json,
                                                       tiny_config):
    samples = load_samples(tiny_train_json)
    from models.retriever.api import export_retriever

    result = fit_biencoder(samples, tiny_bert, tiny_config(max_steps=1), tmp_path / "ckpt")
    out = export_retriever(result, tmp_path / "out", len(samples), 0)
    assert check_index_dim(out, 32) == 32
    with pytest.raises(ValueError, match=r"hidden size is 32 but data/indexes/x holds vectors "
                                         "of dim 384"):
        check_index_dim(out, 384, "data/indexes/x")


def test_resuming_with_another_hidden_size_is_refused(tmp_path, tiny_bert, tiny_train_json,
                                                      tiny_config):
    import torch

    from models.retriever.module import RetrieverModule
    from models.retriever.network import BiEncoder

    module = RetrieverModule(BiEncoder.from_pretrained(tiny_bert), tiny_config())
    with pytest.raises(ValueError, match="hidden size 64 but the model being trained has 32"):
        module.on_load_checkpoint({"qastress_dim": 64, "state_dict": {}})
    assert torch.is_tensor(next(module.parameters()))


def test_non_bert_pair_is_refused(tmp_path, tiny_train_json, tiny_config):
    model_dir = tmp_path / "distil"
    model_dir.mkdir()
    (model_dir / "config.json").write_text('{"model_type": "distilbert"}')
    with pytest.raises(ValueError, match="model_type 'distilbert'.*shared: true"):
        fit_biencoder(load_samples(tiny_train_json), model_dir, tiny_config(), tmp_path / "c")


def test_relation_files_follow_the_dataset_layout(tmp_path):
    for split in ("train", "dev"):
        (tmp_path / split).mkdir()
        for relation in ("P19", "P36"):
            (tmp_path / split / f"{relation}.{split}.json").write_text("[]")
    files = relation_training_files(tmp_path, ["P36", "P19"], "dev")
    assert files == [tmp_path / "dev" / "P36.dev.json", tmp_path / "dev" / "P19.dev.json"]
