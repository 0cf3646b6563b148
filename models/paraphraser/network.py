"""Transformer encoder-decoder with a pointer-generator copy mechanism (See et al., 2017).

Pre-LayerNorm layers, sinusoidal positions, one embedding matrix shared by the encoder, the
decoder and the output projection. At each decoder step a copy attention over the encoder
states gives the attention distribution ``a`` and a context vector ``c``;
``p_gen = sigmoid(w . [h; c; e])`` mixes the vocabulary distribution with ``a`` scattered onto
the source tokens' extended ids::

    P(w) = p_gen * P_vocab(w) + (1 - p_gen) * sum_{i: ext_i = w} a_i

Extended ids ``>= vocab_size`` are the example's out-of-vocabulary copy units (see
``tokenizer.py``); as decoder inputs they are read as ``<unk>``. The mixing is done in float32
(also under bf16 autocast). Decoding keeps a key/value cache per layer.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from models.paraphraser.config import ModelConfig

_EPS = 1e-10


def sinusoid(length: int, dim: int, offset: int = 0, device=None) -> Tensor:
    """Sinusoidal position encodings of positions ``offset .. offset + length - 1``."""
    position = torch.arange(offset, offset + length, dtype=torch.float32, device=device)
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32, device=device)
                     * (-math.log(10000.0) / dim))
    angles = position[:, None] * freq[None, :]
    enc = torch.zeros(length, dim, device=device)
    enc[:, 0::2] = torch.sin(angles)
    enc[:, 1::2] = torch.cos(angles)
    return enc


class Attention(nn.Module):
    """Multi-head attention on ``F.scaled_dot_product_attention`` with an optional cache."""

    def __init__(self, d_model: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def split(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def project_kv(self, x: Tensor) -> tuple[Tensor, Tensor]:
        return self.split(self.k(x)), self.split(self.v(x))

    def forward(self, x: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
                causal: bool = False) -> Tensor:
        q = self.split(self.q(x))
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=causal,
            dropout_p=self.dropout if self.training else 0.0)
        b, h, t, dh = out.shape
        return self.o(out.transpose(1, 2).reshape(b, t, h * dh))


class FeedForward(nn.Sequential):
    """The position-wise feed-forward block: Linear, GELU, dropout, Linear."""

    def __init__(self, d_model: int, ff: int, dropout: float) -> None:
        super().__init__(nn.Linear(d_model, ff), nn.GELU(), nn.Dropout(dropout),
                         nn.Linear(ff, d_model))


class EncoderLayer(nn.Module):
    """One pre-norm encoder layer: self-attention, then feed-forward, each residual."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg.d_model, cfg.heads, cfg.dropout)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.ff = FeedForward(cfg.d_model, cfg.ff, cfg.dropout)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        h = self.norm1(x)
        k, v = self.attn.project_kv(h)
        x = x + self.drop(self.attn(h, k, v, mask))
        return x + self.drop(self.ff(self.norm2(x)))


class DecoderLayer(nn.Module):
    """One pre-norm decoder layer: causal self-attention (with a key/value cache for
    incremental decoding), cross-attention over the encoder's memory, feed-forward."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.self_attn = Attention(cfg.d_model, cfg.heads, cfg.dropout)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.cross_attn = Attention(cfg.d_model, cfg.heads, cfg.dropout)
        self.norm3 = nn.LayerNorm(cfg.d_model)
        self.ff = FeedForward(cfg.d_model, cfg.ff, cfg.dropout)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor, memory_kv: tuple[Tensor, Tensor], memory_mask: Tensor,
                cache: dict[str, Tensor] | None = None) -> Tensor:
        h = self.norm1(x)
        k, v = self.self_attn.project_kv(h)
        if cache is not None:  # incremental decoding: x holds only the new position(s)
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
            causal = x.shape[1] > 1 and k.shape[2] == x.shape[1]
        else:
            causal = True
        x = x + self.drop(self.self_attn(h, k, v, causal=causal))
        x = x + self.drop(self.cross_attn(self.norm2(x), *memory_kv, mask=memory_mask))
        return x + self.drop(self.ff(self.norm3(x)))


class PointerGeneratorTransformer(nn.Module):
    """The paraphraser network; :meth:`forward` returns log-probabilities over extended ids."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.embed = nn.Embedding(cfg.vocab_size, d, padding_idx=cfg.pad_id)
        nn.init.normal_(self.embed.weight, std=d ** -0.5)
        with torch.no_grad():
            self.embed.weight[cfg.pad_id].zero_()
        self.drop = nn.Dropout(cfg.dropout)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.encoder_layers))
        self.encoder_norm = nn.LayerNorm(d)
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.decoder_layers))
        self.decoder_norm = nn.LayerNorm(d)
        self.out_bias = nn.Parameter(torch.zeros(cfg.vocab_size))
        self.copy_q = nn.Linear(d, d)
        self.copy_k = nn.Linear(d, d)
        self.p_gen = nn.Linear(3 * d, 1)

    # ------------------------------------------------------------------------- pieces
    def _embed(self, ids: Tensor, offset: int = 0) -> Tensor:
        ids = ids.masked_fill(ids >= self.cfg.vocab_size, self.cfg.unk_id)
        x = self.embed(ids) * math.sqrt(self.cfg.d_model)
        x = x + sinusoid(ids.shape[1], self.cfg.d_model, offset, ids.device).to(x.dtype)
        return self.drop(x)

    def encode(self, src_ids: Tensor, src_mask: Tensor) -> dict[str, object]:
        """Encode a batch; ``src_mask`` is True at real (non-pad) positions.

        Returns the state the decoder needs: memory, its mask, per-layer cross-attention
        keys/values and the copy-attention keys.
        """
        attn_mask = src_mask[:, None, None, :]
        x = self._embed(src_ids)
        for layer in self.encoder:
            x = layer(x, attn_mask)
        memory = self.encoder_norm(x)
        return {
            "memory": memory,
            "mask": attn_mask,
            "src_mask": src_mask,
            "kv": [layer.cross_attn.project_kv(memory) for layer in self.decoder],
            "copy_k": self.copy_k(memory),
        }

    def decode(self, state: dict[str, object], dec_ids: Tensor, src_ext: Tensor, n_oov: int,
               caches: list[dict[str, Tensor]] | None = None, offset: int = 0) -> Tensor:
        """Log-probabilities ``(B, T, vocab_size + n_oov)`` of the next token at each step."""
        emb = self._embed(dec_ids, offset)
        x = emb
        for i, layer in enumerate(self.decoder):
            x = layer(x, state["kv"][i], state["mask"], None if caches is None else caches[i])
        h = self.decoder_norm(x)
        logits = F.linear(h, self.embed.weight, self.out_bias)
        # copy attention: single head over the encoder states
        scores = torch.matmul(self.copy_q(h), state["copy_k"].transpose(1, 2))
        scores = scores / math.sqrt(self.cfg.d_model)
        scores = scores.float().masked_fill(~state["src_mask"][:, None, :], float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        context = torch.matmul(attn.to(state["memory"].dtype), state["memory"])
        p_gen = torch.sigmoid(self.p_gen(torch.cat([h, context, emb], dim=-1)).float())
        b, t, _ = logits.shape
        index = src_ext[:, None, :].expand(b, t, src_ext.shape[1])
        copy = attn * (1.0 - p_gen)
        if torch.is_grad_enabled():
            vocab = torch.softmax(logits.float(), dim=-1) * p_gen
            if n_oov:
                vocab = torch.cat([vocab, vocab.new_zeros(b, t, n_oov)], dim=-1)
            return torch.log(vocab.scatter_add(2, index, copy) + _EPS)
        # inference: the same arithmetic in place (decoding speed)
        dist = torch.softmax(logits.float(), dim=-1).mul_(p_gen)
        if n_oov:
            dist = torch.cat([dist, dist.new_zeros(b, t, n_oov)], dim=-1)
        return dist.scatter_add_(2, index, copy).add_(_EPS).log_()

    def forward(self, src_ids: Tensor, src_ext: Tensor, src_mask: Tensor, dec_ids: Tensor,
                n_oov: int) -> Tensor:
        """Teacher-forced log-probabilities ``(B, T, vocab_size + n_oov)``."""
        return self.decode(self.encode(src_ids, src_mask), dec_ids, src_ext, n_oov)


def reorder_state(state: dict[str, object], index: Tensor) -> dict[str, object]:
    """Select rows of an encoder state (beam expansion / reordering)."""
    return {
        "memory": state["memory"].index_select(0, index),
        "mask": state["mask"].index_select(0, index),
        "src_mask": state["src_mask"].index_select(0, index),
        "kv": [(k.index_select(0, index), v.index_select(0, index)) for k, v in state["kv"]],
        "copy_k": state["copy_k"].index_select(0, index),
    }


def reorder_caches(caches: list[dict[str, Tensor]], index: Tensor) -> None:
    """Select rows of the decoder self-attention caches in place."""
    for cache in caches:
        for key in list(cache):
            cache[key] = cache[key].index_select(0, index)


def sequence_loss(log_probs: Tensor, labels: Tensor, pad_id: int, vocab_size: int,
                  label_smoothing: float = 0.0) -> tuple[Tensor, Tensor]:
    """Mean token NLL (with label smoothing over the fixed vocabulary) and the plain NLL."""
    mask = labels != pad_id
    safe = labels.masked_fill(~mask, 0)
    nll = -log_probs.gather(-1, safe[..., None]).squeeze(-1)
    n = mask.sum().clamp_min(1)
    plain = (nll * mask).sum() / n
    if label_smoothing <= 0:
        return plain, plain
    smooth = -log_probs[..., :vocab_size].mean(dim=-1)
    loss = (1 - label_smoothing) * nll + label_smoothing * smooth
    return (loss * mask).sum() / n, plain
