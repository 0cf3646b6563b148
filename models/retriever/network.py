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


def is_saved_pair(path: str | Path) -> bool:
    """Whether ``path`` holds a retriever saved as a DPR pair (not a plain BERT directory)."""
    from models.retriever.export import CTX_DIR, QUESTION_DIR

    return (Path(path) / QUESTION_DIR).is_dir() and (Path(path) / CTX_DIR).is_dir()


def load_dpr_bert(retriever_dir: str | Path, side: str) -> nn.Module:
    """The ``BertModel`` inside the saved question (``side="question"``) or context (``"ctx"``)
    encoder of ``retriever_dir``, its weights as saved: the inverse of
    :func:`models.retriever.export.to_dpr` for a DPR pair, the plain ``AutoModel`` for a
    mean-pooled pair (saved without the DPR wrapper)."""
    from transformers import DPRContextEncoder, DPRQuestionEncoder

    from models.hf_logging import quiet_transformers
    from models.retriever.export import CTX_DIR, QUESTION_DIR

    if side not in ("question", "ctx"):
        raise ValueError(f"side must be 'question' or 'ctx', not {side!r}")
    path = Path(retriever_dir) / (QUESTION_DIR if side == "question" else CTX_DIR)
    found = model_type(path)
    if found != "dpr":
        if saved_pair_pooling(retriever_dir) == "mean":
            return load_encoder_model(path)
        raise ValueError(f"{path}: model_type {found!r}, expected a saved DPR {side} encoder "
                         "('dpr'; a mean-pooled pair records pooling 'mean' in "
                         "training_args.json)")
    with quiet_transformers():
        if side == "question":
            return DPRQuestionEncoder.from_pretrained(str(path)).question_encoder.bert_model
        return DPRContextEncoder.from_pretrained(str(path)).ctx_encoder.bert_model


def saved_pair_pooling(retriever_dir: str | Path) -> str:
    """The pooling a saved retriever was trained with (``training_args.json``; ``cls`` when the
    file or the field is absent, as for DPR checkpoints from elsewhere)."""
    from models.retriever.export import TRAINING_ARGS_FILE

    args_file = Path(retriever_dir) / TRAINING_ARGS_FILE
    if not args_file.is_file():
        return "cls"
    pooling = json.loads(args_file.read_text(encoding="utf-8")).get("pooling", "cls")
    if pooling not in ("cls", "mean"):
        raise ValueError(f"{args_file}: pooling {pooling!r}, expected 'cls' or 'mean'")
    return str(pooling)


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
        """Both encoders initialised from one checkpoint (two copies unless ``shared``); a
        saved DPR pair (:func:`is_saved_pair`) starts each side from its own encoder
        (:meth:`from_saved_pair`)."""
        if is_saved_pair(model_dir):
            if shared:
                raise ValueError(f"{model_dir}: a saved question/passage pair cannot start a "
                                 "shared encoder (shared: false to fine-tune it)")
            return cls.from_saved_pair(model_dir, freeze)
        question = load_encoder_model(model_dir)
        ctx = None if shared else load_encoder_model(model_dir)
        return cls(question, ctx, pooling, freeze)

    @classmethod
    def from_saved_pair(cls, retriever_dir: str | Path, freeze: str = "full") -> BiEncoder:
        """The two encoders of a retriever saved as a DPR pair (``question_encoder/`` +
        ``ctx_encoder/``, :func:`models.retriever.export.save_biencoder`): fine-tuning starts
        from its weights (e.g. DPR-NQ), each side from its own encoder, pooled as it was
        trained (:func:`saved_pair_pooling`)."""
        return cls(load_dpr_bert(retriever_dir, "question"), load_dpr_bert(retriever_dir, "ctx"),
                   saved_pair_pooling(retriever_dir), freeze)

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
