"""Lightning DataModule over (source, suggestion, target) triples."""

from __future__ import annotations

from collections.abc import Sequence

from models.datamodule import SeededDataModule
from models.paraphraser.data import Collator, Triple, TripleDataset, check_triples
from models.paraphraser.tokenizer import ParaphraseTokenizer


class ParaphraseDataModule(SeededDataModule):
    """Train (seeded shuffle; resumable mid-epoch with the collator's forced-OOV draws) and
    validation loaders over triples; only training forces words out of vocabulary."""

    def __init__(self, train: Sequence[Triple], val: Sequence[Triple] | None,
                 tokenizer: ParaphraseTokenizer, batch_size: int = 32, oov_rate: float = 0.0,
                 seed: int = 0, num_workers: int = 0) -> None:
        train_set = TripleDataset(check_triples(train, "train triples"))
        val_set = TripleDataset(check_triples(val, "val triples")) if val else None
        if not len(train_set):
            raise ValueError("no training triples")
        super().__init__(train_set, val_set, Collator(tokenizer, oov_rate, seed), batch_size,
                         seed, num_workers, val_collate=Collator(tokenizer))
        self.tokenizer = tokenizer
        self.oov_rate = oov_rate
