"""Lightning module and data module of the reader: span cross-entropy, AdamW (fused), warm-up
then a linear, constant or cosine learning rate."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytorch_lightning as pl
import torch

from models.datamodule import SeededDataModule
from models.logged_steps import logs_step, records_step
from models.optim import adamw, decay_groups, trainer_precision
from models.reader.config import ReaderConfig
from models.reader.data import WindowCollator, WindowDataset
from models.reader.features import Window
from models.resume import restore_run_state, save_run_state


def lr_factor(schedule: str, warmup: int, total: int, min_ratio: float = 0.0):
    """Multiplier of the base learning rate at step ``step``: linear warm-up over ``warmup``
    steps, then ``linear`` decay to ``min_ratio`` at ``total`` (BERT's and run_qa.py's with 0),
    ``constant``, or ``cosine`` decay to ``min_ratio``."""
    if schedule not in ("linear", "constant", "cosine"):
        raise ValueError(f"unknown lr_schedule {schedule!r}: expected linear, constant or cosine")

    def factor(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        if schedule == "constant":
            return 1.0
        if schedule == "linear":
            left = max(0.0, (total - step) / max(1, total - warmup))
        else:
            done = min(1.0, (step - warmup) / max(1, total - warmup))
            left = 0.5 * (1.0 + math.cos(math.pi * done))
        return min_ratio + (1.0 - min_ratio) * left

    return factor


class ReaderModule(pl.LightningModule):
    """Fine-tunes an ``AutoModelForQuestionAnswering`` on labelled windows.

    The loss is the model's own: mean of the start and end cross-entropies (Hugging Face's
    ``*ForQuestionAnswering``).
    """

    def __init__(self, model: Any, config: ReaderConfig) -> None:
        super().__init__()
        self.model = model.train()  # from_pretrained returns eval mode: dropout on to train
        self.config = config
        self.history: list[dict[str, float]] = []

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = self.model(**batch).loss
        step = self.global_step + 1
        if logs_step(self.trainer, step, self.config.log_every_n_steps):
            self.log("train_loss", loss, batch_size=batch["input_ids"].shape[0])
        if records_step(step, self.config.log_every_n_steps):
            self.history.append({"step": step, "loss": float(loss.detach()),
                                 "lr": float(self.optimizers().param_groups[0]["lr"])})
        return loss

    def validation_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = self.model(**batch).loss
        self.log("val_loss", loss, batch_size=batch["input_ids"].shape[0], sync_dist=True)
        return loss

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        save_run_state(checkpoint, self.history)

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        # (with torch's random state: the dropout masks the stopped run would have drawn)
        self.history = restore_run_state(checkpoint)

    def configure_optimizers(self):
        # fused AdamW (models/optim.py): with MiniLM on CPU the for-loop one was ~40 % of a
        # batch-2 step (bench/RESULTS.md)
        optimizer = adamw(decay_groups(self.model.named_parameters(), self.config.weight_decay),
                          lr=self.config.lr,
                          precision=trainer_precision(self, self.config.precision))
        total = self.config.max_steps or int(self.trainer.estimated_stepping_batches)
        warmup = int(self.config.warmup_ratio * total)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor(
            self.config.lr_schedule, warmup, total, self.config.min_lr_ratio))
        return {"optimizer": optimizer,
                "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


class ReaderDataModule(SeededDataModule):
    """Train (seeded shuffle) and validation loaders over labelled windows."""

    def __init__(self, train: Sequence[Window], val: Sequence[Window] | None, pad_id: int,
                 batch_size: int, seed: int = 0, num_workers: int = 0) -> None:
        if not train:
            raise ValueError("no training windows")
        super().__init__(WindowDataset(train), WindowDataset(val) if val else None,
                         WindowCollator(pad_id), batch_size, seed, num_workers)
