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
    module, so ``ddp_spawn`` can pickle it.

    A step that validation follows (an epoch's last, with a validation set) is saved when
    that validation ends, not before it: resumed there, the run neither loses the validation
    (its ``val_loss`` in the history) nor the random draws it made (the validation loader's
    seed from torch's generator), so it goes on as a run never stopped. Lightning resumes such
    a checkpoint without validating again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._after_validation_of: int | None = None  # the step whose save waits for it

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        """A step checkpoint, unless this step is the run's last (``max_steps``); after the
        validation that follows it, if one does."""
        if 0 < trainer.max_steps <= trainer.global_step:
            return
        if _validation_follows(trainer):
            self._after_validation_of = trainer.global_step
            return
        super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx)

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        """The step checkpoint that waited for this validation (if due), then Lightning's."""
        if self._after_validation_of == trainer.global_step:
            self._after_validation_of = None
            super().on_train_batch_end(trainer, pl_module, None, None, 0)
        super().on_validation_end(trainer, pl_module)

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        """No checkpoint of a finished run."""


def _validation_follows(trainer: Any) -> bool:
    """Whether Lightning validates right after the batch that just ended (its own decision,
    ``_should_check_val_fx``; False if this Lightning lacks it, and then the step is saved
    before validation as Lightning's ``ModelCheckpoint`` does)."""
    epoch_loop = trainer.fit_loop.epoch_loop
    decide = getattr(epoch_loop, "_should_check_val_fx", None)
    fetcher = getattr(trainer.fit_loop, "_data_fetcher", None)
    if decide is None or fetcher is None or not trainer.enable_validation:
        return False
    return bool(decide(fetcher))
