"""(source, suggestion, target) triples as padded tensor batches (no Lightning import)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch.utils.data import Dataset

from models.paraphraser.tokenizer import EncodedSource, ParaphraseTokenizer

Triple = tuple[str, str | None, str]


def check_triples(triples: Sequence[Triple], name: str = "triples") -> list[Triple]:
    """Validate ``(source, suggestion | None, target)`` triples; errors name the index."""
    out: list[Triple] = []
    for i, item in enumerate(triples):
        if not isinstance(item, tuple | list) or len(item) != 3:
            raise ValueError(f"{name}[{i}]: expected (source, suggestion, target), got {item!r}")
        source, suggestion, target = item
        if not isinstance(source, str) or not source.strip():
            raise ValueError(f"{name}[{i}]: source must be a non-empty string, got {source!r}")
        if not isinstance(target, str) or not target.strip():
            raise ValueError(f"{name}[{i}]: target must be a non-empty string, got {target!r}")
        if suggestion is not None and not isinstance(suggestion, str):
            raise ValueError(f"{name}[{i}]: suggestion must be a string or None, "
                             f"got {suggestion!r}")
        out.append((source, suggestion or None, target))
    return out


@dataclass
class TensorBatch:
    """A padded training batch."""

    src_ids: Tensor
    src_ext: Tensor
    src_mask: Tensor
    dec_ids: Tensor
    labels: Tensor
    n_oov: int

    def to(self, device, **kwargs) -> TensorBatch:
        move = [t.to(device, **kwargs) for t in (self.src_ids, self.src_ext, self.src_mask,
                                                  self.dec_ids, self.labels)]
        return TensorBatch(*move, self.n_oov)


def pad_sources(encoded: Sequence[EncodedSource], pad_id: int
                ) -> tuple[Tensor, Tensor, Tensor, int]:
    """Right-pad encoder inputs: ``(src_ids, src_ext, src_mask, max_n_oov)``."""
    width = max(len(e.input_ids) for e in encoded)
    src_ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    src_ext = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    for row, e in enumerate(encoded):
        src_ids[row, : len(e.input_ids)] = torch.tensor(e.input_ids)
        src_ext[row, : len(e.ext_ids)] = torch.tensor(e.ext_ids)
    return src_ids, src_ext, src_ids != pad_id, max(len(e.oov_words) for e in encoded)


def pad_targets(targets: Sequence[Sequence[int]], pad_id: int, bos_id: int
                ) -> tuple[Tensor, Tensor]:
    """Teacher forcing: ``(labels, decoder inputs)``, the inputs shifted right after ``<s>``."""
    width = max(len(t) for t in targets)
    labels = torch.full((len(targets), width), pad_id, dtype=torch.long)
    dec_ids = torch.full((len(targets), width), pad_id, dtype=torch.long)
    for row, ids in enumerate(targets):
        labels[row, : len(ids)] = torch.tensor(ids)
        dec_ids[row, 0] = bos_id
        dec_ids[row, 1 : len(ids)] = torch.tensor(ids[:-1])
    return labels, dec_ids


class TripleDataset(Dataset):
    """Raw triples; encoding happens in :class:`Collator` (it draws the forced OOV words)."""

    def __init__(self, triples: Sequence[Triple]) -> None:
        self.triples = list(triples)

    def __len__(self) -> int:
        return len(self.triples)

    def __getitem__(self, index: int) -> Triple:
        return self.triples[index]


class Collator:
    """Encode and pad triples; with ``oov_rate > 0`` some source words are forced to be OOV.

    The forced words are drawn from a seeded generator (one stream per DataLoader worker), so a
    run is reproducible.
    """

    def __init__(self, tokenizer: ParaphraseTokenizer, oov_rate: float = 0.0,
                 seed: int = 0) -> None:
        self.tokenizer = tokenizer
        self.oov_rate = oov_rate
        self.seed = seed
        self.rng = random.Random(seed)
        self._worker: int | None = None

    def _forced(self, suggestion: str | None, source: str) -> set[str]:
        if self.oov_rate <= 0:
            return set()
        worker = torch.utils.data.get_worker_info()
        if worker is not None and self._worker != worker.id:  # one stream per loader worker
            self._worker = worker.id
            self.rng = random.Random(self.seed * 1_000_003 + worker.id + 1)
        tok = self.tokenizer
        words = tok.words(suggestion or "") + tok.words(source)
        cores = sorted({tok.core(w) for w in words if tok.core(w).isalnum()})
        return {c for c in cores if self.rng.random() < self.oov_rate}

    def get_state(self) -> tuple[Any, int | None]:
        """The forced-OOV generator's state (a resumed training restores it)."""
        return self.rng.getstate(), self._worker

    def set_state(self, state: tuple[Any, int | None]) -> None:
        """Continue the forced-OOV draws from a :meth:`get_state`."""
        rng_state, self._worker = state
        self.rng.setstate(rng_state)

    def __call__(self, triples: Sequence[Triple]) -> TensorBatch:
        tok = self.tokenizer
        sources, targets = [], []
        for source, suggestion, target in triples:
            forced = self._forced(suggestion, source)
            enc = tok.encode_source(suggestion, source, force=forced)
            sources.append(enc)
            targets.append(tok.encode_target(target, enc, force=forced))
        src_ids, src_ext, src_mask, n_oov = pad_sources(sources, tok.pad_id)
        labels, dec_ids = pad_targets(targets, tok.pad_id, tok.bos_id)
        return TensorBatch(src_ids, src_ext, src_mask, dec_ids, labels, n_oov)


def split_triples(triples: Sequence[Triple], val_fraction: float, seed: int
                  ) -> tuple[list[Triple], list[Triple]]:
    """Seeded train/validation split; sources stay on one side (no paraphrase leaks)."""
    sources = sorted({t[0] for t in triples})
    n_val = min(round(len(sources) * val_fraction), len(sources) - 1)
    if n_val <= 0:  # too few sources for a held-out set: no validation
        return list(triples), []
    rng = random.Random(seed)
    rng.shuffle(sources)
    held = set(sources[:n_val])
    train = [t for t in triples if t[0] not in held]
    val = [t for t in triples if t[0] in held]
    return train, val
