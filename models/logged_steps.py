"""Which training steps log their loss to Lightning.

Every trainer keeps its own loss history (the first step and every ``log_every_n_steps``-th),
and reports the Lightning-logged ``train_loss`` of the last step as the run's final training
loss. Logging on the other steps adds nothing anyone reads, and it costs: Lightning's
``self.log`` updates its result collection on each call, and a value logged with
``prog_bar=True`` is turned into a Python number after every batch even without a progress bar
(on a GPU, a device synchronisation a step). So the trainers log on the recorded steps and on
the last one only (:func:`logs_step`); the numbers they report are the same.
"""

from __future__ import annotations

from typing import Any


def is_last_step(trainer: Any, step: int) -> bool:
    """Whether optimizer step ``step`` (1-based) is the run's last: ``max_steps`` when it is
    set, else the last batch of the last epoch (``max_epochs``, 1 when unset)."""
    if trainer.max_steps is not None and trainer.max_steps > 0:
        return step >= trainer.max_steps
    epochs = trainer.max_epochs if trainer.max_epochs and trainer.max_epochs > 0 else 1
    return bool(trainer.is_last_batch) and trainer.current_epoch + 1 >= epochs


def records_step(step: int, every: int) -> bool:
    """Whether step ``step`` (1-based) goes into a trainer's loss history: the first step and
    every ``every``-th."""
    return step == 1 or step % every == 0


def logs_step(trainer: Any, step: int, every: int) -> bool:
    """Whether step ``step`` logs its loss to Lightning: a recorded step or the last one."""
    return records_step(step, every) or is_last_step(trainer, step)
