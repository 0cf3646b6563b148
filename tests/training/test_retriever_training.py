"""Train the tiny bi-encoder for seconds: loss decreases, the saved pair reloads through the
dense retriever's EncoderSpec to identical vectors, frozen encoders stay bit-identical."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from models.retriever import load_samples
from models.retriever.api import export_retriever, fit_biencoder
from models.retriever.data import BiEncoderCollator, tokenize_ctxs
from models.retriever.loss import biencoder_nll
from models.retriever.network import BiEncoder, load_encoder_model
from tasks.io.dpr import DprCtx
from tasks.training.retriever import encoder_spec

QUESTIONS = ["where does kalomi live", "who is the mayor", "a question that is a bit longer"]
TITLES = ["Kalomi", "", "Mayor"]
TEXTS = ["kalomi lives in city 3", "a passage without a title", "the mayor of city 1"]


@pytest.fixture(scope="module")
def trained(tiny_bert, tiny_train_json, tiny_config, tmp_path_factory):
    """One 20-step run of a DPR pair and its export."""
    root = tmp_path_factory.mktemp("run")
    samples = load_samples(tiny_train_json, hard_negatives=1)
    result = fit_biencoder(samples, tiny_bert, tiny_config(), root / "ckpt", val=samples[:8])
    out = export_retriever(result, root / "out", len(samples), 8)
    return result, out


def _fixed_batch_loss(model, tokenizer, samples) -> float:
    """DPR loss of all samples as one batch, in eval mode (no dropout, no sampling noise)."""
    batch = BiEncoderCollator(tokenizer, 32)(samples)
    model.eval()
    with torch.no_grad():
        q, ctx = model(batch.q_ids, batch.q_mask, batch.ctx_ids, batch.ctx_mask)
        return float(biencoder_nll(q, ctx, batch.positive_idx)[0])


def test_passages_tokenised_in_one_call_as_one_call_each(tiny_bert):
    """The collator tokenises a batch's passages in one call per kind (pairs, singles); the ids
    are those of one DPR-style call per passage: a title and text as a pair, truncated
    longest-first; an empty title or text alone."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert))
    long_text = "kalomi lives in city 3 and " * 12
    ctxs = [DprCtx(title, text, None) for title, text in [
        ("Kalomi", "kalomi lives in city 3"), ("", "a passage without a title"),
        ("Mayor of a city with a long name", long_text), ("Only a title", ""),
        ("Ünïcode Ölmez", "café — naïve, “quoted”"), ("Kalomi", long_text)]]
    one_each = [tokenizer(c.title, c.text, truncation=True, max_length=16)["input_ids"]
                if c.title and c.text else
                tokenizer(c.text or c.title, truncation=True, max_length=16)["input_ids"]
                for c in ctxs]
    assert tokenize_ctxs(tokenizer, ctxs, 16) == one_each
    assert max(len(row) for row in one_each) == 16  # truncation was exercised


def test_loss_decreases(trained, tiny_bert, tiny_train_json):
    result, _ = trained
    samples = load_samples(tiny_train_json)
    before = _fixed_batch_loss(BiEncoder.from_pretrained(tiny_bert), result.tokenizer, samples)
    after = _fixed_batch_loss(result.module.model, result.tokenizer, samples)
    assert result.state["global_step"] == 20
    assert [h["step"] for h in result.state["log_history"] if "loss" in h] == list(range(1, 21))
    assert after < before - 0.3, (before, after)


def test_saved_pair_reloads_to_identical_embeddings(trained):
    from tasks.retrieval.encoders import encode_texts, load_encoder

    result, out = trained
    spec = encoder_spec(out)
    assert spec.kind == "dpr" and spec.pooling == "pooler" and not spec.normalize
    assert spec.ctx_model.endswith("ctx_encoder") and spec.max_length == 32
    loaded = load_encoder(spec, "cpu")
    model, tok = result.module.model.eval(), result.tokenizer
    q_mem = encode_texts(model.question_model, tok, QUESTIONS, 2, 32, "cls")
    c_mem = encode_texts(model.ctx_model, tok, TEXTS, 2, 32, "cls", titles=TITLES)
    q_disk = loaded.encode_questions(QUESTIONS, batch_size=2)
    c_disk = loaded.encode_passages(TITLES, TEXTS, batch_size=2)
    assert q_disk.shape == (3, 32)
    np.testing.assert_array_equal(q_mem, q_disk)
    np.testing.assert_array_equal(c_mem, c_disk)
    assert not np.array_equal(q_disk, c_disk[:, :])  # two different encoders


def test_shared_mean_encoder_reloads_as_shared_spec(tiny_bert, tiny_train_json, tiny_config,
                                                    tmp_path):
    from tasks.retrieval.encoders import encode_texts, load_encoder

    samples = load_samples(tiny_train_json)
    config = tiny_config(shared=True, pooling="mean", max_steps=3)
    result = fit_biencoder(samples, tiny_bert, config, tmp_path / "ckpt")
    out = export_retriever(result, tmp_path / "out", len(samples), 0)
    spec = encoder_spec(out)
    assert spec.kind == "shared" and spec.pooling == "mean"
    disk = load_encoder(spec, "cpu").encode_questions(QUESTIONS, batch_size=2)
    mem = encode_texts(result.module.model.eval().question_model, result.tokenizer, QUESTIONS,
                       2, 32, "mean")
    np.testing.assert_array_equal(mem, disk)


def test_mean_pooled_pair_saves_plain_encoders_and_reloads(tiny_bert, tiny_train_json,
                                                          tiny_config, tmp_path):
    """A pair with mean pooling (no DPR format for it): two plain AutoModel directories, a
    ``pair`` spec with mean pooling, identical vectors after reload, and fine-tuning from it
    keeps mean pooling (a cls fine-tune of it is refused)."""
    from models.retriever.network import model_type, saved_pair_pooling
    from tasks.retrieval.encoders import encode_texts, load_encoder
    from tasks.retrieval.retrievers import trained_encoder_config
    from tasks.retrieval_config import NamedDenseConfig

    samples = load_samples(tiny_train_json)
    result = fit_biencoder(samples, tiny_bert, tiny_config(pooling="mean", max_steps=3),
                           tmp_path / "ckpt")
    out = export_retriever(result, tmp_path / "out", len(samples), 0)
    assert model_type(out / "question_encoder") == "bert" == model_type(out / "ctx_encoder")
    assert saved_pair_pooling(out) == "mean"
    spec = encoder_spec(out)
    assert spec.kind == "pair" and spec.pooling == "mean" and not spec.normalize
    named = trained_encoder_config(NamedDenseConfig(model="trained:x"), out)
    assert named.pooling == "mean" and named.ctx_model.endswith("ctx_encoder")
    loaded = load_encoder(spec, "cpu")
    model, tok = result.module.model.eval(), result.tokenizer
    np.testing.assert_array_equal(
        encode_texts(model.question_model, tok, QUESTIONS, 2, 32, "mean"),
        loaded.encode_questions(QUESTIONS, batch_size=2))
    np.testing.assert_array_equal(
        encode_texts(model.ctx_model, tok, TEXTS, 2, 32, "mean", titles=TITLES),
        loaded.encode_passages(TITLES, TEXTS, batch_size=2))
    again = BiEncoder.from_saved_pair(out, "onlyQ")
    assert again.pooling == "mean"
    for name, value in model.ctx_model.state_dict().items():
        assert torch.equal(value, again.ctx_model.state_dict()[name]), name
    with pytest.raises(ValueError, match="pooling 'mean' cannot be fine-tuned with pooling"):
        fit_biencoder(samples, out, tiny_config(max_steps=1), tmp_path / "ckpt2")


@pytest.mark.parametrize(("freeze", "frozen", "trained_side"),
                         [("onlyQ", "ctx_model", "question_model"),
                          ("onlyP", "question_model", "ctx_model")])
def test_frozen_encoder_is_bit_identical_after_training(tiny_bert, tiny_train_json, tiny_config,
                                                        tmp_path, freeze, frozen, trained_side):
    initial = load_encoder_model(tiny_bert).state_dict()
    samples = load_samples(tiny_train_json)
    result = fit_biencoder(samples, tiny_bert, tiny_config(freeze=freeze, max_steps=4),
                           tmp_path / "ckpt")
    model = result.module.model
    for name, value in getattr(model, frozen).state_dict().items():
        assert torch.equal(value, initial[name]), name
    moved = [n for n, v in getattr(model, trained_side).state_dict().items()
             if not torch.equal(v, initial[n])]
    assert len(moved) > 10, "the trained encoder did not change"


def _eval_mode_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if "in eval mode at the start" in str(w.message)]


@pytest.mark.parametrize("extra_eval_module", [False, True])
def test_only_the_frozen_encoders_eval_mode_is_silenced(tiny_bert, tiny_train_json, tiny_config,
                                                        tmp_path, monkeypatch, extra_eval_module):
    """The frozen encoder stays in eval mode on purpose, so Lightning's warning about it is not
    shown; one more module in eval mode changes the count and the warning comes back."""
    import warnings

    if extra_eval_module:
        original = BiEncoder.train

        def train(self, mode=True):
            original(self, mode)
            self.question_model.embeddings.dropout.eval()
            return self

        monkeypatch.setattr(BiEncoder, "train", train)
    samples = load_samples(tiny_train_json)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fit_biencoder(samples, tiny_bert, tiny_config(freeze="onlyQ", max_steps=1),
                               tmp_path / "ckpt")
    frozen = sum(1 for _ in result.module.model.ctx_model.modules())
    assert frozen > 10
    messages = _eval_mode_warnings(caught)
    if extra_eval_module:
        assert len(messages) == 1 and messages[0].startswith(f"Found {frozen + 1} module(s)")
    else:
        assert messages == []


def test_metrics_and_encoder_hook(trained, tmp_path):
    import json

    from tasks.training.retriever import trained_encoder, write_training_metrics

    result, out = trained
    hook = trained_encoder(out, name="dpr-tiny")
    assert hook["spec"]["name"] == "dpr-tiny" and hook["spec"]["kind"] == "dpr"
    assert hook["dense_params"] == {"model": str(out.resolve() / "question_encoder"),
                                    "ctx_model": str(out.resolve() / "ctx_encoder"),
                                    "normalize": False, "max_length": 32}
    metrics = write_training_metrics({"dpr-tiny": out}, tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text()) == metrics
    curve = metrics["dpr-tiny"]["loss_curve"]
    assert [s for s, _ in curve] == list(range(1, 21)) and metrics["dpr-tiny"]["global_step"] == 20
    # no times in the metrics (the report hashes them: same inputs, same bytes); they stay in
    # the model's trainer_state.json
    assert not {"train_seconds", "questions_per_second"} & set(metrics["dpr-tiny"])
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["questions_per_second"] > 0


def test_gradient_checkpointing_gives_the_same_training(tiny_bert, tiny_train_json, tiny_config,
                                                        tmp_path):
    samples = load_samples(tiny_train_json)
    runs = {}
    for flag in (False, True):
        result = fit_biencoder(samples, tiny_bert, tiny_config(max_steps=2,
                                                               gradient_checkpointing=flag),
                               tmp_path / f"ckpt{flag}")
        runs[flag] = result.module.model.question_model
    assert runs[True].is_gradient_checkpointing and not runs[False].is_gradient_checkpointing
    plain, checkpointed = runs[False].state_dict(), runs[True].state_dict()
    for name, value in plain.items():
        torch.testing.assert_close(checkpointed[name], value, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("length", [{"max_steps": 6}, {"max_steps": None, "max_epochs": 2}],
                         ids=["max-steps", "max-epochs"])
def test_final_train_loss_is_the_last_steps_when_logging_is_sparse(tiny_bert, tiny_train_json,
                                                                    tiny_config, tmp_path, length):
    """The module logs the loss only on the steps it records (every `log_every_n_steps`, the
    first and the last): the run's final train loss is still the last step's, by steps or by
    epochs (24 questions in batches of 8: 6 steps either way)."""
    samples = load_samples(tiny_train_json, hard_negatives=1)
    every_step = fit_biencoder(samples, tiny_bert, tiny_config(**length, log_every_n_steps=1),
                               tmp_path / "every")
    sparse = fit_biencoder(samples, tiny_bert, tiny_config(**length, log_every_n_steps=4),
                           tmp_path / "sparse")
    last = every_step.state["log_history"][-1]
    assert last["step"] == sparse.state["global_step"] == 6
    assert [h["step"] for h in sparse.state["log_history"] if "loss" in h] == [1, 4]
    assert sparse.state["final_train_loss"] == pytest.approx(last["loss"], abs=1e-6)
    assert every_step.state["final_train_loss"] == pytest.approx(last["loss"], abs=1e-6)
