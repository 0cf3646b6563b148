"""Lightning's noise silenced in the processes ``ddp_spawn`` starts.

:func:`models.lightning_quiet.quiet_lightning` works in the process that enters it. A spawned
process unpickles the Trainer's callbacks and runs their ``setup``: there
:class:`QuietSpawnedProcesses` installs the same filters for the rest of that process's life.
Without it each spawned process printed the ``LeafSpec`` deprecation warning, and rank zero
"`Trainer.fit` stopped: `max_steps=N` reached.".
"""

from __future__ import annotations

import os

import pytorch_lightning as pl

from models.lightning_quiet import install_quiet_filters


class QuietSpawnedProcesses(pl.Callback):
    """Installs :func:`~models.lightning_quiet.install_quiet_filters` in ``setup`` when it runs
    in a process other than the one that built it (there the context manages the filters)."""

    def __init__(self) -> None:
        self.launcher_pid = os.getpid()

    def setup(self, trainer: pl.Trainer, pl_module: pl.LightningModule, stage: str) -> None:
        """Install the filters in a spawned process; nothing in the launching one."""
        if os.getpid() != self.launcher_pid:
            install_quiet_filters()
