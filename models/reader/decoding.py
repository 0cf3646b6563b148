"""Best-span decoding: start/end logits of windows -> n-best answer spans per question.

A span of a window is its start and end token, both in the context, ``end >= start`` and at most
``max_answer_length`` tokens long; its score is ``start_logit + end_logit`` (the convention of
BERT's ``run_squad.py`` and Hugging Face's ``run_qa.py``, comparable across the windows of a
question). Unlike their top-20-starts x top-20-ends heuristic, every valid pair of a window is
scored (one masked ``L x L`` matrix per window), so the best span is exact. The spans of all
windows of a question are mapped to character offsets of the context, merged (a span seen in
two overlapping windows keeps its best score) and sorted: the first is the prediction.
A question without any valid span (impossible with valid settings: every window holds context)
gets the empty answer ``""``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from models.reader.features import Window


@dataclass(frozen=True, slots=True)
class Span:
    """A candidate answer: ``context[start:end]`` and its score."""

    text: str
    start: int
    end: int
    score: float


@dataclass(frozen=True, slots=True)
class Prediction:
    """The answer to one question and its n-best candidates (best first)."""

    id: str
    text: str
    start: int
    end: int
    score: float
    n_best: tuple[Span, ...]


def window_top_spans(start_logits: torch.Tensor, end_logits: torch.Tensor,
                     context_mask: torch.Tensor, n_best: int, max_answer_length: int
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The ``n_best`` best valid spans of each window of a batch.

    ``start_logits``, ``end_logits``: ``(B, L)``; ``context_mask``: ``(B, L)`` booleans (token
    in the context). Returns ``(scores, starts, ends)``, each ``(B, k)`` with ``k = min(n_best,
    L * L)``, best first; invalid entries have score ``-inf``.
    """
    length = start_logits.shape[1]
    scores = start_logits.float()[:, :, None] + end_logits.float()[:, None, :]
    idx = torch.arange(length, device=start_logits.device)
    band = (idx[None, :] >= idx[:, None]) & (idx[None, :] - idx[:, None] < max_answer_length)
    valid = band[None] & context_mask[:, :, None] & context_mask[:, None, :]
    scores = scores.masked_fill(~valid, float("-inf"))
    top, flat = scores.flatten(1).topk(min(n_best, length * length), dim=1)
    return top, torch.div(flat, length, rounding_mode="floor"), flat % length


def context_mask(windows: Sequence[Window], length: int) -> torch.Tensor:
    """``(len(windows), length)`` booleans: which (padded) positions hold context tokens."""
    mask = torch.zeros((len(windows), length), dtype=torch.bool)
    for row, window in enumerate(windows):
        for col, offset in enumerate(window.offsets):
            if offset is not None:
                mask[row, col] = True
    return mask


class SpanCollector:
    """Collects the candidate spans of each question over its windows (any order)."""

    def __init__(self, n_best: int) -> None:
        self.n_best = n_best
        self.spans: dict[int, dict[tuple[int, int], float]] = {}

    def add(self, windows: Sequence[Window], scores: torch.Tensor, starts: torch.Tensor,
            ends: torch.Tensor) -> None:
        """Add the top spans (from :func:`window_top_spans`) of a batch of windows."""
        for window, row_s, row_a, row_b in zip(windows, scores.tolist(), starts.tolist(),
                                               ends.tolist(), strict=True):
            found = self.spans.setdefault(window.example_index, {})
            for score, a, b in zip(row_s, row_a, row_b, strict=True):
                if score == float("-inf"):
                    break
                key = (window.offsets[a][0], window.offsets[b][1])
                if score > found.get(key, float("-inf")):
                    found[key] = score

    def predictions(self, ids: Sequence[str], contexts: Sequence[str]) -> list[Prediction]:
        """One :class:`Prediction` per question, in the order of ``ids``."""
        out = []
        for i, (qid, context) in enumerate(zip(ids, contexts, strict=True)):
            ranked = sorted(self.spans.get(i, {}).items(), key=lambda kv: (-kv[1], kv[0]))
            best = tuple(Span(context[s:e], s, e, score)
                         for (s, e), score in ranked[: self.n_best])
            if best:
                top = best[0]
                out.append(Prediction(qid, top.text, top.start, top.end, top.score, best))
            else:
                out.append(Prediction(qid, "", 0, 0, float("-inf"), ()))
        return out
