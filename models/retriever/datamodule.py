"""Lightning DataModule over bi-encoder samples (seeded shuffling; Lightning adds a
``DistributedSampler`` under DDP, so each process sees its own share of the questions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from models.retriever.data import BiEncoderCollator, BiEncoderSample


class RetrieverDataModule(pl.LightningDataModule):
    """Train (shuffled) and validation (in order) loaders of :class:`BiEncoderSample` lists."""

    def __init__(self, train: Sequence[BiEncoderSample], val: Sequence[BiEncoderSample] | None,
                 tokenizer: Any, batch_size: int, max_length: int, seed: int = 0,
                 num_workers: int = 0) -> None:
        super().__init__()
        if not train:
            raise ValueError("no training samples (the training set is empty)")
        self.train_set = list(train)
        self.val_set = list(val or [])
        self.collate = BiEncoderCollator(tokenizer, max_length)
        self.batch_size = batch_size
        self.seed = seed
        self.num_workers = num_workers

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True,
                          generator=torch.Generator().manual_seed(self.seed),
                          collate_fn=self.collate, num_workers=self.num_workers,
                          persistent_workers=self.num_workers > 0)

    def val_dataloader(self) -> DataLoader | list:
        if not self.val_set:
            return []
        return DataLoader(self.val_set, batch_size=self.batch_size, shuffle=False,
                          collate_fn=self.collate, num_workers=self.num_workers)
