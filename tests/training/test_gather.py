"""The DDP loss with 2 CPU processes (gloo): every process computes the loss of the gathered
batch -- equal to one process computing it over the concatenated batch -- and the gradient of
each process's own vectors equals the single-process gradient of those rows."""

from __future__ import annotations

import os

import torch
import torch.distributed as dist
from gloo import spawn_pair

from models.retriever.loss import biencoder_nll, dpr_loss

DIM = 8
#: (questions, passages per question) per rank: different passage counts per process.
SHAPES = [(3, 2), (2, 3)]


def _local(rank: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    n_q, per_q = SHAPES[rank]
    generator = torch.Generator().manual_seed(100 + rank)
    q = torch.randn(n_q, DIM, generator=generator)
    ctx = torch.randn(n_q * per_q, DIM, generator=generator)
    positive = torch.arange(n_q) * per_q
    return q, ctx, positive


def _worker(rank: int, world: int, port: int, out_dir: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        q, ctx, positive = _local(rank)
        q.requires_grad_(True)
        ctx.requires_grad_(True)
        loss, correct, n = dpr_loss(q, ctx, positive)
        loss.backward()
        torch.save({"loss": loss.detach(), "correct": int(correct), "n": n,
                    "q_grad": q.grad, "ctx_grad": ctx.grad}, os.path.join(out_dir, f"{rank}.pt"))
    finally:
        dist.destroy_process_group()


def test_each_process_loss_equals_the_single_process_loss_of_the_gathered_batch(tmp_path):
    spawn_pair(_worker, str(tmp_path))
    parts = [_local(rank) for rank in range(2)]
    q = torch.cat([p[0] for p in parts]).requires_grad_(True)
    ctx = torch.cat([p[1] for p in parts]).requires_grad_(True)
    offset = parts[0][1].shape[0]
    positive = torch.cat([parts[0][2], parts[1][2] + offset])
    loss, correct = biencoder_nll(q, ctx, positive)
    loss.backward()
    assert q.shape[0] == 5 and ctx.shape[0] == 12
    q_rows, c_rows = [0, 3, 5], [0, 6, 12]
    for rank in range(2):
        got = torch.load(tmp_path / f"{rank}.pt")
        assert got["n"] == 5 and got["correct"] == int(correct)
        torch.testing.assert_close(got["loss"], loss.detach(), rtol=0, atol=1e-6)
        torch.testing.assert_close(got["q_grad"], q.grad[q_rows[rank]:q_rows[rank + 1]])
        torch.testing.assert_close(got["ctx_grad"], ctx.grad[c_rows[rank]:c_rows[rank + 1]])
    # a process alone (no gather) would see only its own passages: a different loss
    alone, _ = biencoder_nll(*[t.detach() for t in parts[0]])
    assert abs(float(alone) - float(loss.detach())) > 1e-3
