"""The checkpoints of the trainings that resume (DPR, readers, the paraphraser): when they are
taken (:class:`StepCheckpoint`: every N steps) and how they are written (Lightning's checkpoint
writer: ``torch.save`` streamed into a temporary sibling of the file, fsynced, then renamed
onto it).

Lightning's default (``TorchCheckpointIO`` -> ``_atomic_save``) serialises the whole checkpoint
into an in-memory buffer first and copies the buffer before writing it: for a BERT-base pair
with its AdamW state (2.43 GiB) the save's peak memory grows by 2.49 GiB and it takes twice as
long as this writer (``bench/bench_checkpoint_save.py``); on an H100 the end-of-training
``last.ckpt`` took 4-5 s longer than a bare ``torch.save`` of the same state
(``bench/RESULTS.md``, "On a GPU"). This writer streams instead and keeps the guarantee
that matters when a run is killed mid-save: the file at the checkpoint's path is either the
previous complete checkpoint or the new complete one, never a torn file that resume would read.
Paths with a URL scheme (``s3://``, ...) go to Lightning's own writer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.plugins import TorchCheckpointIO

from tasks.io.atomic import atomic_write


class StreamingAtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose local saves stream to a temporary file and rename it."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any,
                        storage_options: Any | None = None) -> None:
        if storage_options is not None or "://" in str(path):
            super().save_checkpoint(checkpoint, path, storage_options)
            return
        with atomic_write(Path(path), "wb") as handle:
            torch.save(checkpoint, handle)


class StepCheckpoint(ModelCheckpoint):
    """``ModelCheckpoint`` that saves every ``every_n_train_steps``, but never the run's
    last step nor when training ends (Lightning's ``save_last=True`` saves a run that ends
    before its first step checkpoint): a finished run is not resumed, its model is saved next
    and :func:`models.resume.discard_checkpoints` removes the directory. A class of this
    module, so ``ddp_spawn`` can pickle it."""

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        """A step checkpoint, unless this step is the run's last (``max_steps``)."""
        if 0 < trainer.max_steps <= trainer.global_step:
            return
        super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx)

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        """No checkpoint of a finished run."""
