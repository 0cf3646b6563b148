"""Lightning DataModule over bi-encoder samples (seeded shuffling, resumable mid-epoch; under
DDP each process trains its own share of the questions: :mod:`models.datamodule`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from models.datamodule import SeededDataModule
from models.retriever.data import BiEncoderCollator, BiEncoderSample


class RetrieverDataModule(SeededDataModule):
    """Train (shuffled) and validation (in order) loaders of :class:`BiEncoderSample` lists."""

    def __init__(self, train: Sequence[BiEncoderSample], val: Sequence[BiEncoderSample] | None,
                 tokenizer: Any, batch_size: int, max_length: int, seed: int = 0,
                 num_workers: int = 0) -> None:
        if not train:
            raise ValueError("no training samples (the training set is empty)")
        super().__init__(list(train), list(val or []), BiEncoderCollator(tokenizer, max_length),
                         batch_size, seed, num_workers)
