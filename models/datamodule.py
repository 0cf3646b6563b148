"""The data module shared by the trained models: a seeded, shuffled train loader and an
in-order validation loader over in-memory samples with the model's collate function.
(Under DDP each process's train loader holds its own share of the samples; Lightning adds a
``DistributedSampler`` to the validation loader.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytorch_lightning as pl
from torch.utils.data import DataLoader

from models.resumable_loader import ResumableLoader


class SeededDataModule(pl.LightningDataModule):
    """Train (shuffled with ``seed``) and validation (in order; none when empty) loaders;
    ``val_collate`` collates validation batches when it differs from training's."""

    def __init__(self, train: Sequence[Any], val: Sequence[Any] | None,
                 collate: Callable[[list[Any]], Any], batch_size: int, seed: int = 0,
                 num_workers: int = 0,
                 val_collate: Callable[[list[Any]], Any] | None = None) -> None:
        super().__init__()
        self.train_set = train
        self.val_set = val
        self.collate = collate
        self.val_collate = val_collate or collate
        self.batch_size = batch_size
        self.seed = seed
        self.num_workers = num_workers

    def train_dataloader(self) -> DataLoader:
        """The shuffled train loader: a :class:`ResumableLoader` (the batches of
        ``DataLoader(shuffle=True)`` with the seeded generator; under DDP, this process's
        share from a seeded ``DistributedSampler``), so a run resumed from a mid-epoch
        checkpoint trains the batches the stopped run had not reached."""
        trainer = self.trainer
        replicas, rank = (trainer.world_size, trainer.global_rank) if trainer else (1, 0)
        return ResumableLoader(self.train_set, self.batch_size, self.seed, self.collate,
                               self._trained_batches, num_workers=self.num_workers,
                               num_replicas=replicas, rank=rank)

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
                          collate_fn=self.val_collate, num_workers=self.num_workers)
