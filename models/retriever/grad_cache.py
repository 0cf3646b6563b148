"""Gradient cache (Gao et al., 2021): DPR's loss over a batch larger than memory allows.

The in-batch loss couples every question with every passage of the (global) batch, so it cannot
be split into per-chunk losses as gradient accumulation would. The gradient cache splits the
computation instead:

1. encode the questions and the passages chunk by chunk without an autograd graph (one chunk's
   activations in memory at a time), recording each chunk's random-number state;
2. compute the loss (the cross-device gather included) on these vectors as leaf tensors and
   backpropagate to the vectors only: ``dL/dq`` and ``dL/dctx`` are as small as the vectors;
3. encode each chunk again with its random state restored (the same dropout masks) and
   backpropagate ``sum(vectors * cached gradient)``: by the chain rule the parameter gradients
   accumulate to exactly those of the whole batch's loss.

The price is one more forward pass (in theory a third more compute; 55-65 % more time for
the demo's small BERTs on 2 CPU cores, ``bench/bench_grad_cache.py``); activation memory is
one chunk's, whatever the batch size. A frozen encoder (``onlyQ`` / ``onlyP``) is not encoded
again. Under DDP the per-chunk backward passes run without DDP's gradient synchronisation and
:func:`average_gradients` all-reduces once at the end (the average DDP would have taken).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from models.retriever.data import BiEncoderBatch
from models.retriever.loss import dpr_loss, rank_and_world

Encode = Callable[[Tensor, Tensor], Tensor]
Backward = Callable[[Tensor], Any]


@dataclass(frozen=True)
class _RandomState:
    """The CPU generator's state and, on a CUDA device, that device's."""

    cpu: Tensor
    cuda: Tensor | None
    device: torch.device

    @classmethod
    def capture(cls, device: torch.device) -> _RandomState:
        cuda = torch.cuda.get_rng_state(device) if device.type == "cuda" else None
        return cls(torch.get_rng_state(), cuda, device)

    def restore(self) -> None:
        torch.set_rng_state(self.cpu)
        if self.cuda is not None:
            torch.cuda.set_rng_state(self.cuda, self.device)


def _chunks(n: int, size: int) -> list[slice]:
    return [slice(start, min(start + size, n)) for start in range(0, n, size)]


def encode_without_graph(encode: Encode, ids: Tensor, mask: Tensor, chunk: int
                         ) -> tuple[Tensor, list[tuple[slice, _RandomState]]]:
    """Step 1: the vectors of all rows, ``chunk`` rows at a time and without autograd graph,
    with each chunk's rows and random state."""
    vectors, chunks = [], []
    with torch.no_grad():
        for rows in _chunks(ids.shape[0], chunk):
            chunks.append((rows, _RandomState.capture(ids.device)))
            vectors.append(encode(ids[rows], mask[rows]))
    return torch.cat(vectors), chunks


def backward_through_encoder(encode: Encode, ids: Tensor, mask: Tensor, grads: Tensor,
                             chunks: list[tuple[slice, _RandomState]],
                             backward: Backward) -> None:
    """Step 3: encode each chunk again under its recorded random state and backpropagate the
    cached vector gradients ``grads`` into the encoder's parameters. The random stream is left
    where step 1 left it."""
    devices = [ids.device] if ids.device.type == "cuda" else []
    for rows, state in chunks:
        with torch.random.fork_rng(devices=devices):
            state.restore()
            vectors = encode(ids[rows], mask[rows])
            backward((vectors * grads[rows]).sum())


def grad_cache_step(model: Any, batch: BiEncoderBatch, chunk: int,
                    backward: Backward = Tensor.backward) -> tuple[Tensor, Tensor, int]:
    """Accumulate into ``model``'s (a :class:`~models.retriever.network.BiEncoder`) parameter
    gradients those of :func:`~models.retriever.loss.dpr_loss` over ``batch``, encoding at most
    ``chunk`` questions or passages at once; returns ``(loss, correct, questions)`` as
    ``dpr_loss`` does (the loss detached). ``backward`` runs each chunk's backward pass
    (Lightning: ``LightningModule.manual_backward``)."""
    if chunk < 1:
        raise ValueError(f"grad cache chunk must be >= 1, got {chunk}")
    q, q_chunks = encode_without_graph(model.encode_questions, batch.q_ids, batch.q_mask, chunk)
    ctx, c_chunks = encode_without_graph(model.encode_ctxs, batch.ctx_ids, batch.ctx_mask, chunk)
    q.requires_grad_(True)
    ctx.requires_grad_(True)
    loss, correct, n = dpr_loss(q, ctx, batch.positive_idx)
    q_grad, ctx_grad = torch.autograd.grad(loss, [q, ctx])
    frozen = model.frozen_module()  # None for a shared encoder: both sides train it
    if model.question_model is not frozen:
        backward_through_encoder(model.encode_questions, batch.q_ids, batch.q_mask, q_grad,
                                 q_chunks, backward)
    if model.ctx_model is not frozen:
        backward_through_encoder(model.encode_ctxs, batch.ctx_ids, batch.ctx_mask, ctx_grad,
                                 c_chunks, backward)
    return loss.detach(), correct, n


def average_gradients(parameters: Iterable[torch.nn.Parameter]) -> None:
    """All-reduce the gradients of ``parameters`` to their mean over the processes (what DDP's
    synchronisation does), in one collective over a flat buffer; no-op in one process."""
    import torch.distributed as dist

    _, world = rank_and_world()
    if world == 1:
        return
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat.div_(world)
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()
