"""What a training ended with, for the process that launched it.

Under ``ddp_spawn`` the launching process gets the trained weights and the final metrics back
from the processes Lightning started, but not the loop's state (global step, epochs) nor the
module's attributes (the loss history): a training record written from its own trainer would
say 0 steps and no history. :class:`EndState` has the global-zero process write them to a JSON
file when training ends; :func:`read_end_state` gives them back (an empty mapping when no file
was written). In one process the file says what the trainer says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytorch_lightning as pl

from tasks.io.atomic import write_json

#: The file's usual name, beside a run's checkpoints or in its scratch directory.
END_STATE_FILE = "train_end.json"


class EndState(pl.Callback):
    """At the end of ``fit`` (also of one resumed from a checkpoint of its last step, which
    trains nothing), the global-zero process writes ``global_step``, ``epochs``,
    ``log_history`` (the module's ``history``), ``metrics`` (the trainer's callback metrics)
    and what the module's ``end_state()`` adds, if it has one, to ``path``. A class of this
    module, so ``ddp_spawn`` can pickle it."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)

    def on_fit_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Write the end state (global zero only)."""
        if not trainer.is_global_zero:
            return
        extra = pl_module.end_state() if hasattr(pl_module, "end_state") else {}
        write_json(self.path, {
            "global_step": trainer.global_step, "epochs": trainer.current_epoch,
            "log_history": list(getattr(pl_module, "history", [])),
            "metrics": {k: float(v) for k, v in trainer.callback_metrics.items()}, **extra})


def read_end_state(path: str | Path) -> dict[str, Any]:
    """The end state :class:`EndState` wrote to ``path``, or ``{}``."""
    path = Path(path)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
