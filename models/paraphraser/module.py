"""Lightning module of the paraphraser: teacher forcing, label smoothing, AdamW + warmup."""

from __future__ import annotations

import math
from typing import Any

import pytorch_lightning as pl
import torch

from models.logged_steps import logs_step, records_step
from models.optim import adamw, decay_groups, trainer_precision
from models.paraphraser.config import ModelConfig, ParaphraserConfig
from models.paraphraser.data import TensorBatch
from models.paraphraser.network import PointerGeneratorTransformer, sequence_loss
from models.resume import restore_run_state, save_run_state


def lr_lambda(schedule: str, warmup: int, total: int | None):
    """Multiplier of the base learning rate at optimizer step ``step`` (0-based)."""

    def factor(step: int) -> float:
        step += 1
        if warmup and step <= warmup:
            return step / warmup
        if schedule == "inverse_sqrt":
            return math.sqrt(max(warmup, 1) / step)
        if schedule == "linear" and total:
            return max(0.0, (total - step) / max(1, total - warmup))
        return 1.0

    return factor


class ParaphraserModule(pl.LightningModule):
    """Trains a :class:`PointerGeneratorTransformer` on padded triples (``TensorBatch``)."""

    def __init__(self, model_config: ModelConfig, config: ParaphraserConfig) -> None:
        super().__init__()
        self.model_config = model_config
        self.config = config
        self.model = PointerGeneratorTransformer(model_config)
        self.history: list[dict[str, float]] = []

    def _loss(self, batch: TensorBatch) -> tuple[torch.Tensor, torch.Tensor]:
        log_probs = self.model(batch.src_ids, batch.src_ext, batch.src_mask, batch.dec_ids,
                               batch.n_oov)
        return sequence_loss(log_probs, batch.labels, self.model_config.pad_id,
                             self.model_config.vocab_size, self.config.label_smoothing)

    def training_step(self, batch: TensorBatch, batch_idx: int) -> torch.Tensor:
        loss, nll = self._loss(batch)
        size = batch.src_ids.shape[0]
        step = self.global_step + 1
        if logs_step(self.trainer, step, self.config.log_every_n_steps):
            self.log("train_loss", loss, batch_size=size)
            self.log("train_nll", nll, batch_size=size)
        if records_step(step, self.config.log_every_n_steps):
            self.history.append({"step": step, "loss": float(loss.detach()),
                                 "nll": float(nll.detach()),
                                 "lr": float(self.optimizers().param_groups[0]["lr"])})
        return loss

    def validation_step(self, batch: TensorBatch, batch_idx: int) -> torch.Tensor:
        _, nll = self._loss(batch)
        self.log("val_loss", nll, batch_size=batch.src_ids.shape[0], sync_dist=True)
        return nll

    def on_validation_epoch_end(self) -> None:
        value = self.trainer.callback_metrics.get("val_loss")
        if value is not None and not self.trainer.sanity_checking:
            self.history.append({"step": self.global_step, "val_loss": float(value)})

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        save_run_state(checkpoint, self.history)

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        # (with torch's random state: the dropout masks the stopped run would have drawn)
        self.history = restore_run_state(checkpoint)

    def configure_optimizers(self):
        groups = decay_groups(self.model.named_parameters(), self.config.weight_decay,
                              no_decay=lambda name, p: p.ndim < 2 or name.startswith("embed"))
        optimizer = adamw(groups, lr=self.config.lr, betas=self.config.betas,
                          precision=trainer_precision(self, self.config.precision))
        total = self.config.max_steps
        if total is None and self.trainer is not None:
            total = int(self.trainer.estimated_stepping_batches)
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lr_lambda(self.config.schedule, self.config.warmup_steps, total))
        return {"optimizer": optimizer,
                "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
