"""Save a trained bi-encoder with ``save_pretrained`` so the dense retriever loads it.

Layout of a saved retriever (``out_dir``)::

    question_encoder/   DPRQuestionEncoder (projection_dim 0: pooler_output = [CLS]) + tokenizer
    ctx_encoder/        DPRContextEncoder + tokenizer            (a separate pair, cls), or
                        two plain AutoModel checkpoints          (a separate pair, mean), or
    encoder/            one AutoModel + tokenizer                (shared: cls or mean pooling)
    training_args.json  the RetrieverTrainConfig, data sizes, init model, hardware, versions
    trainer_state.json  steps, time, loss history

A mean-pooled pair cannot be a DPR checkpoint (DPR pools ``[CLS]``): its two sides are saved
as plain ``AutoModel`` directories, which ``resolve_encoder_spec(question, ctx, pooling="mean")``
loads as a ``pair``. A DPR pair is what ``facebook/dpr-*-single-nq-base`` are, so
``tasks.retrieval.encoders.resolve_encoder_spec(".../question_encoder")`` finds its
``ctx_encoder`` by name and pools with ``pooler_output``;
:func:`tasks.training.retriever.encoder_spec` does that.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from torch import nn

QUESTION_DIR = "question_encoder"
CTX_DIR = "ctx_encoder"
SHARED_DIR = "encoder"
TRAINING_ARGS_FILE = "training_args.json"
TRAINER_STATE_FILE = "trainer_state.json"
#: BERT config fields a DPRConfig takes over.
_DPR_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
               "intermediate_size", "hidden_act", "hidden_dropout_prob",
               "attention_probs_dropout_prob", "max_position_embeddings", "type_vocab_size",
               "initializer_range", "layer_norm_eps", "pad_token_id", "position_embedding_type")


def check_dpr_convertible(model_dir: str | Path, kind: str) -> None:
    """A separate pair is saved as DPR checkpoints, which wrap ``BertModel``: refuse others."""
    from models.retriever.network import model_type

    found = model_type(model_dir)
    if found != "bert":
        raise ValueError(f"{model_dir}: model_type {found!r}; a separate question/passage pair "
                         f"is saved as DPR checkpoints, which need a BERT model ({kind}). Use "
                         "shared: true for other architectures")


def to_dpr(bert: nn.Module, side: str) -> nn.Module:
    """A ``DPRQuestionEncoder`` (``side="question"``) or ``DPRContextEncoder`` holding the
    weights of ``bert`` (a ``BertModel`` without pooler), ``projection_dim`` 0."""
    from transformers import DPRConfig, DPRContextEncoder, DPRQuestionEncoder

    source = bert.config.to_dict()
    config = DPRConfig(**{k: source[k] for k in _DPR_FIELDS if k in source}, projection_dim=0)
    if side == "question":
        model = DPRQuestionEncoder(config)
        target = model.question_encoder.bert_model
    elif side == "ctx":
        model = DPRContextEncoder(config)
        target = model.ctx_encoder.bert_model
    else:
        raise ValueError(f"side must be 'question' or 'ctx', not {side!r}")
    state = {k: v.detach().cpu() for k, v in bert.state_dict().items()
             if not k.startswith("pooler.")}
    target.load_state_dict(state, strict=True)
    return model.eval()


def save_biencoder(model: Any, tokenizer: Any, out_dir: Path) -> None:
    """Write the encoders of a :class:`~models.retriever.network.BiEncoder` into ``out_dir``
    (an existing directory, e.g. the one being built by ``atomic_dir``)."""
    out_dir = Path(out_dir)
    if model.shared:
        target = out_dir / SHARED_DIR
        model.question_model.save_pretrained(target, safe_serialization=True)
        tokenizer.save_pretrained(target)
        return
    for side, module, name in (("question", model.question_model, QUESTION_DIR),
                               ("ctx", model.ctx_model, CTX_DIR)):
        saved = to_dpr(module, side) if model.pooling == "cls" else module
        saved.save_pretrained(out_dir / name, safe_serialization=True)
        tokenizer.save_pretrained(out_dir / name)


def check_index_dim(out_dir: str | Path, index_dim: int, index_name: str = "the index") -> int:
    """The vector dimension of a saved retriever; an error when it is not ``index_dim`` (a
    passage index built with another encoder cannot be searched with these questions)."""
    out_dir = Path(out_dir)
    config_dir = out_dir / (SHARED_DIR if (out_dir / SHARED_DIR).is_dir() else QUESTION_DIR)
    config_file = config_dir / "config.json"
    if not config_file.is_file():
        raise FileNotFoundError(f"{out_dir}: not a saved retriever ({config_file} is missing)")
    config = json.loads(config_file.read_text(encoding="utf-8"))
    dim = int(config.get("projection_dim") or config["hidden_size"])
    if dim != index_dim:
        raise ValueError(f"{config_file}: the encoder's hidden size is {dim} but {index_name} "
                         f"holds vectors of dim {index_dim}: re-encode the passages with this "
                         "encoder (or train with freeze onlyQ from the index's encoder)")
    return dim
