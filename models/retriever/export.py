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


def save_tokenizer(tokenizer: Any, path: Path) -> None:
    """``tokenizer.save_pretrained(path)`` without its runtime truncation and padding.

    A fast tokenizer's ``tokenizer.json`` records the truncation and padding of its last call,
    so two saves of one tokenizer would differ by the ``max_length`` each run used. The onlyQ
    check that a passage encoder is its index's compares files, so a save must not carry that
    state.
    """
    import copy

    canonical = copy.deepcopy(tokenizer)
    backend = getattr(canonical, "backend_tokenizer", None)
    if backend is not None:
        backend.no_truncation()
        backend.no_padding()
    canonical.save_pretrained(path)


def save_biencoder(model: Any, tokenizer: Any, out_dir: Path) -> None:
    """Write the encoders of a :class:`~models.retriever.network.BiEncoder` into ``out_dir``
    (an existing directory, e.g. the one being built by ``atomic_dir``)."""
    out_dir = Path(out_dir)
    if model.shared:
        target = out_dir / SHARED_DIR
        model.question_model.save_pretrained(target, safe_serialization=True)
        save_tokenizer(tokenizer, target)
        return
    for side, module, name in (("question", model.question_model, QUESTION_DIR),
                               ("ctx", model.ctx_model, CTX_DIR)):
        saved = to_dpr(module, side) if model.pooling == "cls" else module
        saved.save_pretrained(out_dir / name, safe_serialization=True)
        save_tokenizer(tokenizer, out_dir / name)


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


def assemble_dpr_pair(question_model: str | Path, ctx_model: str | Path, out_dir: str | Path,
                      max_length: int = 256) -> Path:
    """Save two DPR checkpoint directories (e.g. the snapshots of
    ``facebook/dpr-question_encoder-single-nq-base`` and
    ``facebook/dpr-ctx_encoder-single-nq-base``; the CLI resolves hub names) as one retriever
    directory, atomically: ``question_encoder/`` + ``ctx_encoder/`` written as
    :func:`save_biencoder` writes a trained pair (the question tokenizer on both sides), and
    ``training_args.json`` with pooling ``cls`` and ``max_length``.

    That directory is what fine-tuning starts from (``retriever_experiments.baseline``,
    ``specialised_encoders``): a released DPR pair fine-tuned as the paper did. The weights
    are the sources' (DPR pools ``[CLS]`` with ``projection_dim`` 0), so the pair encodes as
    they do and an index of their passage vectors (a prebuilt one) serves it; an ``onlyQ``
    fine-tune of it saves its passage encoder file for file as here, which is what lets that
    index serve the fine-tuned questions too.
    """
    from transformers import AutoTokenizer, DPRContextEncoder, DPRQuestionEncoder

    from models.hf_logging import quiet_transformers
    from tasks.io.atomic import atomic_dir, write_json

    sources = {"question": Path(question_model), "ctx": Path(ctx_model)}
    for path in sources.values():
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"{path}: not a Hugging Face model directory (no "
                                    "config.json)")
    classes = {"question": DPRQuestionEncoder, "ctx": DPRContextEncoder}
    for side, path in sources.items():
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        architectures = config.get("architectures") or []
        if config.get("model_type") != "dpr" or (
                architectures and classes[side].__name__ not in architectures):
            raise ValueError(f"{path}: expected a {classes[side].__name__} checkpoint "
                             f"(model_type 'dpr'), found model_type "
                             f"{config.get('model_type')!r} {architectures}")
    with quiet_transformers():
        question = DPRQuestionEncoder.from_pretrained(str(sources["question"]))
        ctx = DPRContextEncoder.from_pretrained(str(sources["ctx"]))
    for side, model in (("question", question), ("ctx", ctx)):
        if model.config.projection_dim:
            raise ValueError(f"{sources[side]}: projection_dim {model.config.projection_dim}; "
                             "the retriever pools [CLS] without a projection (0, as DPR)")
    tokenizer = AutoTokenizer.from_pretrained(str(sources["question"]))
    if tokenizer.get_vocab() != AutoTokenizer.from_pretrained(str(sources["ctx"])).get_vocab():
        raise ValueError(f"{sources['question']} and {sources['ctx']} have different "
                         "vocabularies: a retriever pair encodes both sides with one tokenizer "
                         "(the question encoder's)")
    with atomic_dir(Path(out_dir)) as tmp:
        for side, bert, name in (("question", question.question_encoder.bert_model, QUESTION_DIR),
                                 ("ctx", ctx.ctx_encoder.bert_model, CTX_DIR)):
            to_dpr(bert, side).save_pretrained(tmp / name, safe_serialization=True)
            save_tokenizer(tokenizer, tmp / name)
        write_json(tmp / TRAINING_ARGS_FILE, {
            "pooling": "cls", "max_length": max_length, "shared": False,
            "assembled_from": {side: str(path) for side, path in sources.items()}}, indent=2)
    return Path(out_dir)
