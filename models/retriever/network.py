"""The bi-encoder: a question encoder and a passage encoder (or one shared), pooled vectors."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn


def model_type(model_dir: str | Path) -> str:
    """``model_type`` of a Hugging Face model directory's ``config.json``."""
    config = Path(model_dir) / "config.json"
    if not config.is_file():
        raise FileNotFoundError(f"{model_dir}: not a Hugging Face model directory "
                                "(no config.json)")
    return str(json.loads(config.read_text(encoding="utf-8")).get("model_type", ""))


def load_encoder_model(model_dir: str | Path) -> nn.Module:
    """A BERT-family ``AutoModel`` from ``model_dir`` without its pooler (DPR pools [CLS]).

    Weights of a task head (e.g. ``BertForMaskedLM``'s ``cls.*``) are dropped quietly.
    """
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with contextlib.suppress(TypeError):
            return AutoModel.from_pretrained(str(model_dir), add_pooling_layer=False)
        return AutoModel.from_pretrained(str(model_dir))  # e.g. DistilBERT: no pooler
    finally:
        hf_logging.set_verbosity(level)


def is_saved_pair(model_dir: str | Path) -> bool:
    """Whether ``model_dir`` is a DPR pair saved by :func:`models.retriever.export.save_biencoder`
    (``question_encoder/`` + ``ctx_encoder/``)."""
    from models.retriever.export import CTX_DIR, QUESTION_DIR

    return (Path(model_dir) / QUESTION_DIR).is_dir() and (Path(model_dir) / CTX_DIR).is_dir()


def load_dpr_pair(model_dir: str | Path) -> tuple[nn.Module, nn.Module]:
    """The ``BertModel`` inside the ``DPRQuestionEncoder`` and the ``DPRContextEncoder`` of a
    saved pair (``projection_dim`` 0: the [CLS] vector is the DPR vector, as in training)."""
    from transformers import DPRContextEncoder, DPRQuestionEncoder

    from models.retriever.export import CTX_DIR, QUESTION_DIR

    question = DPRQuestionEncoder.from_pretrained(str(Path(model_dir) / QUESTION_DIR))
    ctx = DPRContextEncoder.from_pretrained(str(Path(model_dir) / CTX_DIR))
    for side, model in (("question", question), ("ctx", ctx)):
        if model.config.projection_dim:
            raise ValueError(f"{model_dir}: the {side} encoder has a projection "
                             f"(projection_dim {model.config.projection_dim}); only pairs "
                             "that pool [CLS] (projection_dim 0) can be trained further")
    return question.question_encoder.bert_model, ctx.ctx_encoder.bert_model


def pool(hidden: Tensor, mask: Tensor, pooling: str) -> Tensor:
    """``cls``: the first token's vector; ``mean``: the mean over unmasked tokens (float32)."""
    hidden = hidden.float()
    if pooling == "cls":
        return hidden[:, 0]
    if pooling == "mean":
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * weights).sum(dim=1) / torch.clamp(weights.sum(dim=1), min=1e-9)
    raise ValueError(f"pooling must be 'cls' or 'mean', not {pooling!r}")


class BiEncoder(nn.Module):
    """Question and passage encoders; ``shared`` when both are the same module.

    ``freeze`` ``onlyQ`` freezes the passage encoder and ``onlyP`` the question encoder: the
    frozen encoder gets no gradient and stays in eval mode (no dropout) while training.
    """

    def __init__(self, question_model: nn.Module, ctx_model: nn.Module | None = None,
                 pooling: str = "cls", freeze: str = "full") -> None:
        super().__init__()
        self.question_model = question_model
        self.shared = ctx_model is None or ctx_model is question_model
        self.ctx_model = question_model if self.shared else ctx_model
        self.pooling = pooling
        if freeze not in ("full", "onlyQ", "onlyP"):
            raise ValueError(f"freeze must be 'full', 'onlyQ' or 'onlyP', not {freeze!r}")
        if freeze != "full" and self.shared:
            raise ValueError(f"freeze {freeze!r} needs two encoders, not one shared encoder")
        self.freeze = freeze
        frozen = self.frozen_module()
        if frozen is not None:
            frozen.requires_grad_(False)
        q_dim = question_model.config.hidden_size
        c_dim = self.ctx_model.config.hidden_size
        if q_dim != c_dim:
            raise ValueError(f"question encoder hidden size {q_dim} differs from the passage "
                             f"encoder's {c_dim}: their vectors cannot be compared")
        self.train()  # from_pretrained leaves models in eval mode; Lightning keeps the mode

    @classmethod
    def from_pretrained(cls, model_dir: str | Path, shared: bool = False, pooling: str = "cls",
                        freeze: str = "full") -> BiEncoder:
        """Both encoders initialised from one checkpoint (two copies unless ``shared``), or,
        for a saved DPR pair (:func:`is_saved_pair`), each side from its own encoder (e.g. to
        fine-tune only the question encoder of a trained retriever, ``freeze="onlyQ"``)."""
        if is_saved_pair(model_dir):
            if shared:
                raise ValueError(f"{model_dir}: a saved question/passage pair cannot start a "
                                 "shared encoder (shared: false)")
            question, ctx = load_dpr_pair(model_dir)
            return cls(question, ctx, pooling, freeze)
        question = load_encoder_model(model_dir)
        ctx = None if shared else load_encoder_model(model_dir)
        return cls(question, ctx, pooling, freeze)

    @property
    def dim(self) -> int:
        """Vector dimension (the encoders' hidden size)."""
        return int(self.question_model.config.hidden_size)

    def frozen_module(self) -> nn.Module | None:
        """The encoder that ``freeze`` keeps fixed, if any."""
        return {"onlyQ": self.ctx_model, "onlyP": self.question_model}.get(self.freeze)

    def train(self, mode: bool = True) -> BiEncoder:
        super().train(mode)
        frozen = self.frozen_module()
        if frozen is not None:
            frozen.eval()
        return self

    def gradient_checkpointing_enable(self) -> None:
        """Recompute activations in the backward pass (less memory, ~30 % more compute)."""
        for model in {id(m): m for m in (self.question_model, self.ctx_model)}.values():
            model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False})

    def _encode(self, model: nn.Module, ids: Tensor, mask: Tensor) -> Tensor:
        hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
        return pool(hidden, mask, self.pooling)

    def encode_questions(self, ids: Tensor, mask: Tensor) -> Tensor:
        """Question vectors ``(batch, dim)`` in float32."""
        return self._encode(self.question_model, ids, mask)

    def encode_ctxs(self, ids: Tensor, mask: Tensor) -> Tensor:
        """Passage vectors ``(passages, dim)`` in float32."""
        return self._encode(self.ctx_model, ids, mask)

    def forward(self, q_ids: Tensor, q_mask: Tensor, ctx_ids: Tensor, ctx_mask: Tensor
                ) -> tuple[Tensor, Tensor]:
        """``(question vectors, passage vectors)``."""
        return self.encode_questions(q_ids, q_mask), self.encode_ctxs(ctx_ids, ctx_mask)


def trainable_state(model: nn.Module) -> dict[str, Any]:
    """Detached CPU copies of ``model``'s parameters (tests compare frozen encoders)."""
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
