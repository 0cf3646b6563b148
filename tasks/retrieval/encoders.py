"""Dense text encoders: load a resolved :class:`EncoderSpec` and encode questions and passages.

- :mod:`tasks.retrieval.encoder_spec`: which model (resolving names, fingerprints, vectors);
- this module: loading the models (cached per process, thread-safe) and encoding with them;
- :mod:`tasks.retrieval.encoding`: the encoding loop (:func:`encode_texts`).

The names of the first and last are importable from here too, where the pipeline imports them.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.hf_logging import quiet_transformers
from tasks.retrieval.encoder_spec import (  # noqa: F401  (re-exported)
    PACKAGED_MODELS,
    PACKAGED_PREFIX,
    PASSAGE_FORMAT,
    Embeddings,
    EncoderSpec,
    Pooling,
    model_dir_fingerprint,
    model_slug,
    resolve_encoder_spec,
    resolve_model_path,
)
from tasks.retrieval.encoding import SORT_WINDOW, encode_texts  # noqa: F401  (re-exported)


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
                         progress: bool = False, cpu_threads: int | None = None) -> np.ndarray:
        """Question vectors, float32 ``(len(texts), dim)`` (``cpu_threads``: torch CPU threads
        of the model, None: the machine's count; never the caller's)."""
        return encode_texts(self.question_model, self.question_tokenizer, texts, batch_size,
                            self.spec.max_length, self.spec.pooling, self.device, progress,
                            normalize=self.spec.normalize, bf16=bf16, label="encode questions",
                            cpu_threads=cpu_threads)

    def encode_passages(self, titles: Sequence[str], texts: Sequence[str], batch_size: int = 64,
                        bf16: bool = False, progress: bool = False,
                        cpu_threads: int | None = None,
                        token_ids: Sequence[Sequence[int]] | None = None) -> np.ndarray:
        """Passage vectors (title + [SEP] + text), float32 ``(len(texts), dim)``
        (``cpu_threads`` as :meth:`encode_questions`; ``token_ids``: the passages' ids by
        :attr:`ctx_tokenizer`, when already known)."""
        return encode_texts(self.ctx_model, self.ctx_tokenizer, texts, batch_size,
                            self.spec.max_length, self.spec.pooling, self.device, progress,
                            titles=titles, normalize=self.spec.normalize, bf16=bf16,
                            label="encode passages", cpu_threads=cpu_threads,
                            token_ids=token_ids)


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
    elif spec.kind == "pair":
        question_model, ctx_model = _auto_model(spec.question_model), _auto_model(spec.ctx_model)
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

    with quiet_transformers():  # "weights not used: pooler.*" is expected here
        try:
            return AutoModel.from_pretrained(str(model_dir), add_pooling_layer=False)
        except TypeError:  # e.g. DistilBERT: no pooler, no such argument
            return AutoModel.from_pretrained(str(model_dir))


def load_shared_model(model_dir: str | Path) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of one BERT-family directory in eval mode (tests, benchmarks)."""
    from transformers import AutoTokenizer

    return _auto_model(model_dir).eval(), AutoTokenizer.from_pretrained(str(model_dir))


def encode_questions(spec: EncoderSpec, texts: Sequence[str], qids: Sequence[str],
                     batch_size: int = 64, device: str = "auto", bf16: bool = False,
                     progress: bool = False, cpu_threads: int | None = None) -> Embeddings:
    """Question :class:`Embeddings` of ``texts`` with the question encoder of ``spec``
    (``cpu_threads``: see :meth:`LoadedEncoder.encode_questions`)."""
    if len(texts) != len(qids):
        raise ValueError(f"{len(texts)} questions but {len(qids)} qids")
    encoder = load_encoder(spec, device)
    vectors = encoder.encode_questions(texts, batch_size=batch_size, bf16=bf16,
                                       progress=progress, cpu_threads=cpu_threads)
    return Embeddings(vectors, list(qids), spec.name, spec.fingerprint)
