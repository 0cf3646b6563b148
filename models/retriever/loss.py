"""DPR's loss: negative log-likelihood of the positive passage among all passages of the batch.

Under DDP the question and passage vectors of every process are gathered (DPR's
``_calc_loss``): each process computes the same loss over the global batch, its own vectors
keeping their gradient and the other processes' vectors entering as constants. The gradient of
the global loss with respect to a vector is then computed exactly once, by the process that owns
it; DDP's gradient all-reduce averages these (a global learning-rate factor of 1 / world size,
as in DPR).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def biencoder_nll(q: Tensor, ctx: Tensor, positive_idx: Tensor) -> tuple[Tensor, Tensor]:
    """Mean NLL of each question's positive passage under softmax over dot products with all
    passages; also the number of questions whose positive scores highest."""
    scores = q @ ctx.T
    log_probs = F.log_softmax(scores, dim=1)
    loss = F.nll_loss(log_probs, positive_idx, reduction="mean")
    correct = (scores.argmax(dim=1) == positive_idx).sum()
    return loss, correct


def rank_and_world() -> tuple[int, int]:
    """``(rank, world size)`` of this process; ``(0, 1)`` outside ``torch.distributed``."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def gather_with_grad(local: Tensor) -> tuple[Tensor, list[int]]:
    """All processes' rows concatenated in rank order (rows may differ per process); the
    local rows keep their autograd graph. Also returns each process's row count."""
    import torch.distributed as dist

    rank, world = rank_and_world()
    if world == 1:
        return local, [local.shape[0]]
    size = torch.tensor([local.shape[0]], device=local.device, dtype=torch.long)
    sizes = [torch.zeros_like(size) for _ in range(world)]
    dist.all_gather(sizes, size)
    counts = [int(s.item()) for s in sizes]
    width = max(counts)
    padded = local.detach()
    if local.shape[0] < width:
        pad = local.new_zeros((width - local.shape[0], *local.shape[1:]))
        padded = torch.cat([padded, pad])
    buffers = [torch.empty_like(padded) for _ in range(world)]
    dist.all_gather(buffers, padded.contiguous())
    parts = [local if r == rank else buffers[r][: counts[r]] for r in range(world)]
    return torch.cat(parts), counts


def global_batch(q: Tensor, ctx: Tensor, positive_idx: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The batch of every process: questions, passages and positive indices into the gathered
    passages (offset by the passages of lower ranks). Single process: the inputs."""
    _, world = rank_and_world()
    if world == 1:
        return q, ctx, positive_idx
    all_q, _ = gather_with_grad(q)
    all_ctx, ctx_counts = gather_with_grad(ctx)
    all_pos, q_counts = gather_with_grad(positive_idx.unsqueeze(1))
    offsets = torch.cumsum(torch.tensor([0, *ctx_counts[:-1]], device=q.device), 0)
    rank_of_row = torch.repeat_interleave(torch.arange(len(q_counts), device=q.device),
                                          torch.tensor(q_counts, device=q.device))
    return all_q, all_ctx, all_pos.squeeze(1) + offsets[rank_of_row]


def dpr_loss(q: Tensor, ctx: Tensor, positive_idx: Tensor) -> tuple[Tensor, Tensor, int]:
    """Loss over the global batch (see the module docstring), correct count, questions."""
    all_q, all_ctx, all_pos = global_batch(q, ctx, positive_idx)
    loss, correct = biencoder_nll(all_q, all_ctx, all_pos)
    return loss, correct, int(all_q.shape[0])
