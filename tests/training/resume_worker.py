"""Process of the resume test: train the tiny bi-encoder slowly (a sleep per step) so the test
can SIGKILL it after a checkpoint. Also ``python resume_worker.py BERT TRAIN_JSON CKPT OUT``."""

from __future__ import annotations

import sys
import time

import pytorch_lightning as pl

from models.retriever import RetrieverTrainConfig, load_samples, train_retriever
from models.retriever.module import RetrieverModule

CONFIG = {"max_steps": 12, "max_epochs": None, "batch_size": 8, "lr": 3e-3, "warmup_steps": 0,
          "max_length": 32, "log_every_n_steps": 1, "checkpoint_every_n_steps": 4,
          "accelerator": "cpu", "seed": 3, "cpu_threads": 1}


def main(bert: str, train_json: str, ckpt: str, out: str, delay: float) -> None:
    """Train with ``delay`` seconds of sleep after every step."""
    step = RetrieverModule.training_step

    def slow_step(self, batch, batch_idx):
        loss = step(self, batch, batch_idx)
        time.sleep(delay)
        return loss

    RetrieverModule.training_step = slow_step
    train_retriever(load_samples(train_json), bert, RetrieverTrainConfig(**CONFIG), out, ckpt)


if __name__ == "__main__":
    main(*sys.argv[1:5], float(sys.argv[5]) if len(sys.argv) > 5 else 0.0)



class CrashBeforeStep(pl.Callback):
    """Raises before optimizer step ``step`` + 1 on every process (a crash of the whole run),
    after the checkpoints of the steps before it. A class in this module, so ``ddp_spawn``
    can pickle it into the processes it starts."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        """Raise once the trainer has made ``step`` optimizer steps."""
        if trainer.global_step == self.step:
            raise RuntimeError(f"crash before step {self.step + 1}")
