"""Lightning module of the DPR bi-encoder: in-batch + hard-negative NLL, AdamW, linear warm-up
and decay (DPR's ``get_schedule_linear``)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytorch_lightning as pl
import torch

from models.logged_steps import logs_step, records_step
from models.optim import adamw, decay_groups, trainer_precision
from models.resume import restore_run_state, save_run_state
from models.retriever.config import RetrieverTrainConfig
from models.retriever.data import BiEncoderBatch
from models.retriever.grad_cache import average_gradients, grad_cache_step
from models.retriever.loss import dpr_loss
from models.retriever.network import BiEncoder

#: The encoders' hidden size in a Lightning checkpoint (with models.resume's history and
#: random state).
DIM_KEY = "qastress_dim"


def linear_schedule(warmup: int, total: int | None):
    """Learning-rate factor at optimizer step ``step`` (0-based): linear warm-up over
    ``warmup`` steps, then linear decay to 0 at ``total`` (constant when ``total`` is None)."""

    def factor(step: int) -> float:
        if warmup and step < warmup:
            return (step + 1) / warmup
        if not total:
            return 1.0
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


class RetrieverModule(pl.LightningModule):
    """Trains a :class:`BiEncoder` on :class:`BiEncoderBatch` batches."""

    def __init__(self, model: BiEncoder, config: RetrieverTrainConfig) -> None:
        super().__init__()
        self.model = model
        self.config = config
        self.history: list[dict[str, float]] = []
        self.questions_seen = 0
        if config.gradient_checkpointing:
            model.gradient_checkpointing_enable()
        # the gradient cache runs its own backward passes: Lightning's manual optimization
        self.automatic_optimization = config.grad_cache_chunk is None

    def _loss(self, batch: BiEncoderBatch) -> tuple[torch.Tensor, torch.Tensor, int]:
        q, ctx = self.model(batch.q_ids, batch.q_mask, batch.ctx_ids, batch.ctx_mask)
        return dpr_loss(q, ctx, batch.positive_idx)

    def _grad_cache_step(self, batch: BiEncoderBatch) -> tuple[torch.Tensor, torch.Tensor, int]:
        """One optimizer step with the gradient cache (``models/retriever/grad_cache.py``):
        chunked backward passes without DDP's per-backward synchronisation, one gradient
        average across processes, then clipping, the step and the schedule."""
        optimizer = self.optimizers()
        optimizer.zero_grad()
        wrapped = self.trainer.strategy.model  # DDP's wrapper under DDP
        no_sync = getattr(wrapped, "no_sync", None)
        with no_sync() if no_sync is not None else contextlib.nullcontext():
            out = grad_cache_step(self.model, batch, self.config.grad_cache_chunk,
                                  self.manual_backward)
        average_gradients(p for p in self.model.parameters() if p.requires_grad)
        if self.config.grad_clip:
            self.clip_gradients(optimizer, gradient_clip_val=self.config.grad_clip,
                                gradient_clip_algorithm="norm")
        return out

    def training_step(self, batch: BiEncoderBatch, batch_idx: int) -> torch.Tensor:
        if self.automatic_optimization:
            loss, correct, n = self._loss(batch)
        else:
            loss, correct, n = self._grad_cache_step(batch)
        self.questions_seen += n
        step = self.global_step + 1
        if logs_step(self.trainer, step, self.config.log_every_n_steps):
            # Lightning's logging costs ~1.4 ms a step, 2-3 % of a demo DPR step
            self.log("train_loss", loss, batch_size=n)
        if records_step(step, self.config.log_every_n_steps):
            self.history.append({"step": step, "loss": float(loss.detach()),
                                 "accuracy": float(correct) / n,
                                 "lr": float(self.optimizers().param_groups[0]["lr"])})
        if not self.automatic_optimization:  # after the history: the step's lr, as above
            self.optimizers().step()
            self.lr_schedulers().step()
        return loss

    def validation_step(self, batch: BiEncoderBatch, batch_idx: int) -> torch.Tensor:
        loss, correct, n = self._loss(batch)
        self.log("val_loss", loss, batch_size=n, sync_dist=True)
        self.log("val_accuracy", correct.float() / n, batch_size=n, sync_dist=True)
        return loss

    def on_validation_epoch_end(self) -> None:
        metrics = self.trainer.callback_metrics
        if "val_loss" in metrics and not self.trainer.sanity_checking:
            self.history.append({"step": self.global_step, "val_loss": float(metrics["val_loss"]),
                                 "val_accuracy": float(metrics["val_accuracy"])})

    def end_state(self) -> dict[str, Any]:
        """What :class:`models.end_state.EndState` records beyond steps, history and
        metrics: the questions trained on (for questions/s)."""
        return {"questions_seen": self.questions_seen}

    def configure_optimizers(self) -> dict[str, Any]:
        optimizer = adamw(decay_groups(self.model.named_parameters(), self.config.weight_decay),
                          lr=self.config.lr, eps=self.config.adam_eps,
                          precision=trainer_precision(self, self.config.precision))
        total = self.config.max_steps
        if total is None and self.trainer is not None:
            total = int(self.trainer.estimated_stepping_batches)
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, linear_schedule(self.config.warmup_steps, total))
        return {"optimizer": optimizer,
                "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        save_run_state(checkpoint, self.history)
        checkpoint[DIM_KEY] = self.model.dim

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        saved = checkpoint.get(DIM_KEY)
        if saved is not None and saved != self.model.dim:
            raise ValueError(f"the checkpoint holds encoders of hidden size {saved} but the "
                             f"model being trained has {self.model.dim}: resume with the same "
                             "initial checkpoint, or delete the checkpoint directory")
        # (with torch's random state: the dropout masks the stopped run would have drawn)
        self.history = restore_run_state(checkpoint)
