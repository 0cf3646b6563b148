"""Bi-encoder training samples from DPR training JSON, and their collation into tensors.

A sample is DPR's ``_create_biencoder_input`` unit: the question, its first positive passage
and up to ``hard_negatives`` BM25 hard negatives (``hard_negative_ctxs``, rank order) plus up to
``other_negatives`` random ones (``negative_ctxs``). A batch stacks the passages of all its
questions; every question is scored against every passage of the (gathered) batch, so the
other questions' positives and negatives are its in-batch negatives.

Passages are tokenised as the dense retriever encodes them (``tasks.retrieval.encoders``):
``[CLS] title [SEP] text [SEP]`` (the text alone without a title), all-zero segment ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import torch
from torch import Tensor

from tasks.io.dpr import DprCtx, iter_dpr_examples
from tasks.io.errors import DataFormatError


@dataclass(frozen=True, slots=True)
class BiEncoderSample:
    """One question with its positive passage and its negatives (hard first)."""

    question: str
    positive: DprCtx
    negatives: tuple[DprCtx, ...] = ()


class BiEncoderBatch(NamedTuple):
    """Padded questions and passages; ``positive_idx[i]`` is question i's passage row."""

    q_ids: Tensor
    q_mask: Tensor
    ctx_ids: Tensor
    ctx_mask: Tensor
    positive_idx: Tensor


def load_samples(paths: Path | Sequence[Path], hard_negatives: int = 1,
                 other_negatives: int = 0) -> list[BiEncoderSample]:
    """Samples of every example of the DPR training JSON ``paths`` (in file order).

    An example without any positive passage is an error naming the file and the record (DPR's
    trainer cannot use it; the writer of the file should have left it out). No example at all
    is an error naming the files.
    """
    paths = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not paths:
        raise ValueError("no DPR training files given (the training set is empty)")
    samples: list[BiEncoderSample] = []
    for path in paths:
        for index, example in enumerate(iter_dpr_examples(path)):
            if not example.positive_ctxs:
                raise DataFormatError(
                    path, f"record {index} (question {example.question!r})",
                    "at least one passage in positive_ctxs (a training question needs a "
                    "positive passage)", "positive_ctxs: []")
            negatives = (example.hard_negative_ctxs[:hard_negatives]
                         + example.negative_ctxs[:other_negatives])
            samples.append(BiEncoderSample(example.question, example.positive_ctxs[0],
                                           negatives))
    if not samples:
        raise ValueError(f"no training examples in {[str(p) for p in paths]} (the training "
                         "set is empty)")
    return samples


def _pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[Tensor, Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


def tokenize_passages(tokenizer: Any, texts: Sequence[str], titles: Sequence[str] | None,
                      max_length: int) -> list[list[int]]:
    """Token ids of passages without padding, in one tokenizer call per kind:
    ``[CLS] title [SEP] text [SEP]`` where both are given (truncated longest-first), the text
    (or the title) alone where one is empty, as DPR's ``tokenizer.encode(title, text_pair=text)``.
    The dense retriever encodes passages and the bi-encoder trains on them with these ids."""
    kwargs = {"truncation": True, "max_length": max_length, "padding": False,
              "return_attention_mask": False, "return_token_type_ids": False}
    if titles is None:
        return list(tokenizer(list(texts), **kwargs)["input_ids"])
    if len(titles) != len(texts):
        raise ValueError(f"{len(titles)} titles but {len(texts)} texts")
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


def tokenize_ctxs(tokenizer: Any, ctxs: Sequence[DprCtx], max_length: int) -> list[list[int]]:
    """Token ids of DPR passages (:func:`tokenize_passages`)."""
    return tokenize_passages(tokenizer, [ctx.text for ctx in ctxs], [ctx.title for ctx in ctxs],
                             max_length)


class BiEncoderCollator:
    """Tokenise and pad a list of samples into a :class:`BiEncoderBatch`."""

    def __init__(self, tokenizer: Any, max_length: int) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    def __call__(self, samples: Iterable[BiEncoderSample]) -> BiEncoderBatch:
        samples = list(samples)
        questions = self.tokenizer([s.question for s in samples], truncation=True,
                                   max_length=self.max_length, return_attention_mask=False,
                                   return_token_type_ids=False)["input_ids"]
        ctxs: list[DprCtx] = []
        positives: list[int] = []
        for sample in samples:
            positives.append(len(ctxs))
            ctxs.append(sample.positive)
            ctxs.extend(sample.negatives)
        q_ids, q_mask = _pad(questions, self.pad_id)
        c_ids, c_mask = _pad(tokenize_ctxs(self.tokenizer, ctxs, self.max_length), self.pad_id)
        return BiEncoderBatch(q_ids, q_mask, c_ids, c_mask,
                              torch.tensor(positives, dtype=torch.long))
