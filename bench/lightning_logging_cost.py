"""What Lightning's ``self.log`` costs a training step, on the same tiny model and batches.

A linear layer on batches of 8 x 64 floats, SGD, ``Trainer.fit`` for ``--steps`` steps (no
logger, no checkpointing, no progress bar, as the project's trainers run), four ways:

* ``none``: the training step logs nothing (the floor: Lightning's loop alone);
* ``sparse``: the loss is logged on the first, every ``--every``-th and the last step, by the
  trainers' own rule (``models.logged_steps.logs_step``);
* ``every``: the loss is logged on every step;
* ``every-prog-bar``: the loss with ``prog_bar=True`` and a second value on every step (the
  reader's and the paraphraser's logging before Session 38). ``prog_bar`` values are turned
  into Python numbers after every batch even without a progress bar: on a GPU, a device
  synchronisation per step.

Prints milliseconds per step of each way (median of ``--repeats`` alternating runs) and what
logging adds over ``none``. Example::

    python bench/lightning_logging_cost.py --steps 2000 --repeats 3
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

WAYS = ("none", "sparse", "every", "every-prog-bar")


def _module(way: str, every: int):
    import pytorch_lightning as pl
    import torch

    from models.logged_steps import logs_step

    class Tiny(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(64, 64)

        def training_step(self, batch, batch_idx):
            loss = self.layer(batch[0]).pow(2).mean()
            step = self.global_step + 1
            if way == "every-prog-bar":
                self.log("train_loss", loss, prog_bar=True, batch_size=8)
                self.log("train_nll", loss, batch_size=8)
            elif way == "every" or (way == "sparse" and logs_step(self.trainer, step, every)):
                self.log("train_loss", loss, batch_size=8)
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    return Tiny()


def ms_per_step(way: str, steps: int, every: int) -> float:
    """Milliseconds per step of one ``Trainer.fit`` of ``steps`` steps, logging ``way``."""
    import pytorch_lightning as pl
    import torch

    torch.manual_seed(0)
    data = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(8 * steps, 64)), batch_size=8)
    trainer = pl.Trainer(max_steps=steps, logger=False, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False,
                         accelerator="cpu", devices=1)
    start = time.perf_counter()
    trainer.fit(_module(way, every), data)
    return (time.perf_counter() - start) / steps * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000,
                        help="training steps per run (default 2000)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each way, alternating; the median is printed (default 3)")
    parser.add_argument("--every", type=int, default=50,
                        help="the sparse way logs the first and every N-th step (default 50)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch CPU threads (default 1)")
    args = parser.parse_args()

    import torch

    warnings.filterwarnings("ignore")
    for name in ("pytorch_lightning", "lightning.pytorch", "lightning_fabric"):
        logging.getLogger(name).setLevel(logging.ERROR)
    torch.set_num_threads(args.threads)
    times: dict[str, list[float]] = {way: [] for way in WAYS}
    for _ in range(args.repeats):
        for way in WAYS:
            times[way].append(ms_per_step(way, args.steps, args.every))
    floor = statistics.median(times["none"])
    print(f"{args.steps} steps, median of {args.repeats}, {args.threads} thread(s)")
    for way in WAYS:
        median = statistics.median(times[way])
        print(f"{way:>15}: {median:.3f} ms/step, logging adds {median - floor:+.3f} ms/step "
              f"(runs: {', '.join(f'{t:.3f}' for t in times[way])})")


if __name__ == "__main__":
    main()
