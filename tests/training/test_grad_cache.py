"""The gradient cache (models/retriever/grad_cache.py): chunked encoding gives the gradients of
the whole batch's DPR loss -- with the same dropout masks when one chunk holds the batch, up to
rounding with small chunks -- leaves frozen encoders alone, and trains through Lightning."""

from __future__ import annotations

import copy
import json

import pytest
import torch

from models.retriever.data import BiEncoderBatch
from models.retriever.grad_cache import average_gradients, grad_cache_step
from models.retriever.loss import dpr_loss
from models.retriever.network import BiEncoder


def _batch(n_q: int = 6, per_q: int = 2, seed: int = 0) -> BiEncoderBatch:
    generator = torch.Generator().manual_seed(seed)
    q_ids = torch.randint(1000, 5000, (n_q, 7), generator=generator)
    ctx_ids = torch.randint(1000, 5000, (n_q * per_q, 11), generator=generator)
    q_mask, ctx_mask = torch.ones_like(q_ids), torch.ones_like(ctx_ids)
    q_mask[0, 5:] = 0  # padding in some rows
    ctx_mask[1, 8:] = 0
    return BiEncoderBatch(q_ids, q_mask, ctx_ids, ctx_mask, torch.arange(n_q) * per_q)


def _grads(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def _plain(model: BiEncoder, batch: BiEncoderBatch, seed: int) -> tuple[dict, float]:
    torch.manual_seed(seed)
    q, ctx = model(batch.q_ids, batch.q_mask, batch.ctx_ids, batch.ctx_mask)
    loss, _, _ = dpr_loss(q, ctx, batch.positive_idx)
    loss.backward()
    return _grads(model), float(loss.detach())


def _cached(model: BiEncoder, batch: BiEncoderBatch, seed: int, chunk: int) -> tuple[dict, float]:
    torch.manual_seed(seed)
    loss, correct, n = grad_cache_step(model, batch, chunk)
    assert n == batch.q_ids.shape[0] and 0 <= int(correct) <= n and not loss.requires_grad
    return _grads(model), float(loss)


def _assert_same(a: dict, b: dict, **tolerance) -> None:
    assert a.keys() == b.keys() and a
    for name in a:
        torch.testing.assert_close(a[name], b[name], **tolerance, msg=name)


def test_one_chunk_reproduces_the_plain_step_with_its_dropout_masks(tiny_bert):
    model = BiEncoder.from_pretrained(tiny_bert)  # training mode: dropout 0.1 acts
    twin = copy.deepcopy(model)
    batch = _batch()
    expected, loss = _plain(model, batch, seed=5)
    got, cached_loss = _cached(twin, batch, seed=5, chunk=64)
    assert cached_loss == pytest.approx(loss, abs=1e-6)
    _assert_same(got, expected, rtol=1e-5, atol=1e-6)
    # the re-encoding reuses the masks of the first pass: another stream gives other gradients
    other = copy.deepcopy(model)
    other.zero_grad()
    different, _ = _plain(other, batch, seed=6)
    assert any(not torch.allclose(different[n], expected[n], atol=1e-6) for n in expected)


def test_small_chunks_give_the_whole_batchs_gradients(tiny_bert):
    model = BiEncoder.from_pretrained(tiny_bert).eval()  # no dropout: chunking alone differs
    twin = copy.deepcopy(model)
    batch = _batch(n_q=7, per_q=2)
    expected, loss = _plain(model, batch, seed=0)
    got, cached_loss = _cached(twin, batch, seed=0, chunk=3)  # 7 q -> 3+3+1; 14 p -> 3x4+2
    assert cached_loss == pytest.approx(loss, abs=1e-6)
    _assert_same(got, expected, rtol=1e-4, atol=1e-6)


def test_random_stream_continues_where_the_first_pass_left_it(tiny_bert):
    model = BiEncoder.from_pretrained(tiny_bert)
    batch = _batch()
    torch.manual_seed(3)
    with torch.no_grad():
        model(batch.q_ids, batch.q_mask, batch.ctx_ids, batch.ctx_mask)
    after_plain_forward = torch.rand(4)
    torch.manual_seed(3)
    grad_cache_step(model, batch, chunk=64)
    assert torch.equal(torch.rand(4), after_plain_forward)


@pytest.mark.parametrize("freeze", ["onlyQ", "onlyP"])
def test_a_frozen_encoder_is_not_encoded_again_and_gets_no_gradient(tiny_bert, freeze):
    model = BiEncoder.from_pretrained(tiny_bert, freeze=freeze).eval()  # chunks: no dropout
    twin = copy.deepcopy(model)
    batch = _batch()
    expected, _ = _plain(model, batch, seed=1)
    calls = []
    torch.manual_seed(1)
    grad_cache_step(twin, batch, 4, backward=lambda t: (calls.append(1), t.backward()))
    got = _grads(twin)
    frozen = twin.frozen_module()
    assert all(p.grad is None for p in frozen.parameters())
    assert len(calls) == (2 if freeze == "onlyQ" else 3)  # 6 questions or 12 passages in 4s
    # the trained side gets the plain step's gradients
    _assert_same(got, expected, rtol=1e-4, atol=1e-6)


def test_a_shared_encoder_gets_both_sides_gradients(tiny_bert):
    model = BiEncoder.from_pretrained(tiny_bert, shared=True).eval()
    twin = copy.deepcopy(model)
    batch = _batch()
    expected, _ = _plain(model, batch, seed=0)
    got, _ = _cached(twin, batch, seed=0, chunk=5)
    _assert_same(got, expected, rtol=1e-4, atol=1e-6)


def test_bad_chunk_and_single_process_average():
    with pytest.raises(ValueError, match="chunk must be >= 1"):
        grad_cache_step(None, _batch(), 0)
    p = torch.nn.Parameter(torch.ones(3))
    p.grad = torch.full((3,), 2.0)
    average_gradients([p])  # one process: unchanged
    assert torch.equal(p.grad, torch.full((3,), 2.0))


def _no_dropout_bert(tiny_bert, path):
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(tiny_bert, hidden_dropout_prob=0.0,
                                      attention_probs_dropout_prob=0.0)
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(tiny_bert).save_pretrained(path)
    return path


def test_training_with_the_gradient_cache_follows_the_plain_training(
        tiny_bert, tiny_train_json, tiny_config, tmp_path, monkeypatch):
    from transformers import AutoModel

    import models.resume
    from models.retriever import load_samples
    from models.retriever.api import train_retriever

    # keep the runs' checkpoints (a finished run's are removed) to resume one below
    monkeypatch.setattr(models.resume, "discard_checkpoints", lambda path: None)

    init = _no_dropout_bert(tiny_bert, tmp_path / "init")
    samples = load_samples(tiny_train_json)
    states, weights = [], []
    for name, chunk in (("plain", None), ("cached", 3)):
        config = tiny_config(max_steps=6, pooling="mean", grad_cache_chunk=chunk, grad_clip=0.5)
        state = train_retriever(samples, init, config, tmp_path / name, tmp_path / f"{name}-ckpt")
        states.append(state)
        weights.append(AutoModel.from_pretrained(tmp_path / name / "question_encoder").state_dict())
        assert state["global_step"] == 6
        args = json.loads((tmp_path / name / "training_args.json").read_text())
        assert args["grad_cache_chunk"] == chunk
    plain, cached = ([h["loss"] for h in s["log_history"] if "loss" in h] for s in states)
    assert len(plain) == 6 and cached == pytest.approx(plain, rel=1e-4, abs=1e-5)
    assert [h["lr"] for h in states[1]["log_history"] if "lr" in h] == \
        pytest.approx([h["lr"] for h in states[0]["log_history"] if "lr" in h])
    for key, value in weights[0].items():
        torch.testing.assert_close(weights[1][key], value, rtol=1e-4, atol=1e-5, msg=key)
    # the same run again resumes from its step-5 checkpoint (manual optimization's optimizer
    # and schedule state included), trains step 6 and ends with the same weights
    config = tiny_config(max_steps=6, pooling="mean", grad_cache_chunk=3, grad_clip=0.5)
    again = train_retriever(samples, init, config, tmp_path / "again", tmp_path / "cached-ckpt")
    assert again["resumed_from"] == str(tmp_path / "cached-ckpt" / "last.ckpt")
    assert again["global_step"] == 6
    assert [h["step"] for h in again["log_history"] if "loss" in h] == list(range(1, 7))
    resumed = AutoModel.from_pretrained(tmp_path / "again" / "question_encoder").state_dict()
    assert all(torch.equal(resumed[key], value) for key, value in weights[1].items())


# --- two processes (gloo): the gather and the one gradient average -------------------------

#: Each rank's (questions, passages per question): different batch sizes per process.
RANK_SHAPES = [(4, 2), (3, 3)]


def _rank_batch(rank: int) -> BiEncoderBatch:
    n_q, per_q = RANK_SHAPES[rank]
    return _batch(n_q=n_q, per_q=per_q, seed=10 + rank)


def _gloo_worker(rank: int, world: int, port: int, bert: str, out_dir: str) -> None:
    import os

    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        model = BiEncoder.from_pretrained(bert).eval()
        batch = _rank_batch(rank)
        q, ctx = model(batch.q_ids, batch.q_mask, batch.ctx_ids, batch.ctx_mask)
        dpr_loss(q, ctx, batch.positive_idx)[0].backward()
        average_gradients(model.parameters())
        plain = _grads(model)
        model.zero_grad(set_to_none=True)
        grad_cache_step(model, batch, chunk=2)
        average_gradients(model.parameters())
        torch.save({"plain": plain, "cached": _grads(model)}, os.path.join(out_dir, f"{rank}.pt"))
    finally:
        dist.destroy_process_group()


def test_two_processes_with_the_gradient_cache_get_the_global_batchs_gradient(tiny_bert,
                                                                            tmp_path):
    from gloo import spawn_pair

    spawn_pair(_gloo_worker, str(tiny_bert), str(tmp_path))
    # one process over the concatenated batch: the global loss, whose gradient DDP averages
    # over the 2 processes (each owns its rows: 1 / world of it per process)
    model = BiEncoder.from_pretrained(tiny_bert).eval()
    parts = [_rank_batch(rank) for rank in range(2)]
    q = torch.cat([model.encode_questions(p.q_ids, p.q_mask) for p in parts])
    ctx = torch.cat([model.encode_ctxs(p.ctx_ids, p.ctx_mask) for p in parts])
    positive = torch.cat([parts[0].positive_idx, parts[1].positive_idx + len(parts[0].ctx_ids)])
    dpr_loss(q, ctx, positive)[0].backward()
    expected = {n: g / 2 for n, g in _grads(model).items()}
    for rank in range(2):
        got = torch.load(tmp_path / f"{rank}.pt")
        _assert_same(got["plain"], expected, rtol=1e-4, atol=1e-6)
        _assert_same(got["cached"], expected, rtol=1e-4, atol=1e-6)
