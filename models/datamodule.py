"""The data module shared by the trained models: a seeded, shuffled train loader and an
in-order validation loader over in-memory samples with the model's collate function.
(Lightning adds a ``DistributedSampler`` under DDP, so each process sees its own share.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from models.resumable_loader import ResumableLoader


class SeededDataModule(pl.LightningDataModule):
    """Train (shuffled with ``seed``) and validation (in order; none when empty) loaders."""

    def __init__(self, train: Sequence[Any], val: Sequence[Any] | None,
                 collate: Callable[[list[Any]], Any], batch_size: int, seed: int = 0,
                 num_workers: int = 0) -> None:
        super().__init__()
        self.train_set = train
        self.val_set = val
        self.collate = collate
        self.batch_size = batch_size
        self.seed = seed
        self.num_workers = num_workers

    def train_dataloader(self) -> DataLoader:
        """The shuffled train loader. In one process it is a :class:`ResumableLoader` (same
        batches, same order), so a run resumed from a mid-epoch checkpoint trains the batches
        the stopped run had not reached. Under DDP it is the plain loader whose sampler
        Lightning replaces with a ``DistributedSampler``; a resumed DDP run starts the epoch's
        batches again (Lightning warns)."""
        trainer = self.trainer
        if trainer is not None and trainer.world_size > 1:
            return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True,
                              generator=torch.Generator().manual_seed(self.seed),
                              collate_fn=self.collate, num_workers=self.num_workers,
                              persistent_workers=self.num_workers > 0)
        return ResumableLoader(self.train_set, self.batch_size, self.seed, self.collate,
                               self._trained_batches, self.num_workers)

    def _trained_batches(self) -> int:
        """Batches of the current epoch the trainer has trained (its own progress count)."""
        trainer = self.trainer
        if trainer is None:
            return 0
        return trainer.fit_loop.epoch_loop.batch_progress.current.processed

    def val_dataloader(self) -> DataLoader | list:
        if not self.val_set:
            return []
        return DataLoader(self.val_set, batch_size=self.batch_size, shuffle=False,
                          collate_fn=self.collate, num_workers=self.num_workers)
