"""Lightning DataModule over (source, suggestion, target) triples."""

from __future__ import annotations

from collections.abc import Sequence

import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from models.paraphraser.data import Collator, Triple, TripleDataset, check_triples
from models.paraphraser.tokenizer import ParaphraseTokenizer


class ParaphraseDataModule(pl.LightningDataModule):
    """Train/validation loaders over triples; shuffling is seeded."""

    def __init__(self, train: Sequence[Triple], val: Sequence[Triple] | None,
                 tokenizer: ParaphraseTokenizer, batch_size: int = 32, oov_rate: float = 0.0,
                 seed: int = 0, num_workers: int = 0) -> None:
        super().__init__()
        self.train_set = TripleDataset(check_triples(train, "train triples"))
        self.val_set = TripleDataset(check_triples(val, "val triples")) if val else None
        if not len(self.train_set):
            raise ValueError("no training triples")
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.oov_rate = oov_rate
        self.seed = seed
        self.num_workers = num_workers

    def train_dataloader(self) -> DataLoader:
        generator = torch.Generator().manual_seed(self.seed)
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True,
                          generator=generator, num_workers=self.num_workers,
                          collate_fn=Collator(self.tokenizer, self.oov_rate, self.seed),
                          persistent_workers=self.num_workers > 0)

    def val_dataloader(self) -> DataLoader | list:
        if self.val_set is None:
            return []
        return DataLoader(self.val_set, batch_size=self.batch_size, shuffle=False,
                          num_workers=self.num_workers, collate_fn=Collator(self.tokenizer))
