"""Lightning messages that say nothing about a run, silenced for exactly their text.

Every training (DPR, MLM pre-training, reader, paraphraser) printed them, once per Trainer:
17 trainings in a demo run, 56 log lines and as many warnings.

* Lightning 2.6 builds ``torch.utils._pytree.LeafSpec`` objects, which torch 2.13 deprecates
  with a ``FutureWarning`` on each build (a version mismatch between the two libraries, nothing
  the caller can change).
* Every Trainer without Lightning's cloud logger logs a tip to install it (``litlogger``).
* "GPU available: False, used: False" and "TPU available: False, using: 0 TPU cores" on a
  machine with neither; "GPU available: True, ..." still shows, since it says whether the GPU
  was used.
* What our trainers ask for on purpose: "`Trainer.fit` stopped: `max_steps=N` reached." (or
  ``max_epochs``: the configured end; each flow logs its trainings' steps and losses),
  "`Trainer(limit_val_batches=1.0)` was configured so 100% of the batches will be used" and
  "Loading `train_dataloader` to estimate number of stepping batches" (a schedule over the
  run's steps).

Any other warning or log record of Lightning still shows. :func:`quiet_lightning` silences
them in the process that trains; processes that ``ddp_spawn`` starts get the same filters from
the :class:`models.spawned_quiet.QuietSpawnedProcesses` callback.
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from collections.abc import Callable, Iterator

#: The warning torch 2.13 gives when Lightning 2.6 builds a ``LeafSpec``.
LEAFSPEC_DEPRECATION = r"`isinstance\(treespec, LeafSpec\)` is deprecated"
#: Where Lightning logs its rank-zero information, and the start of its advertisement.
RANK_ZERO_LOGGER = "pytorch_lightning.utilities.rank_zero"
LITLOGGER_TIP = "💡 Tip: For seamless cloud logging"
#: The rank-zero records dropped: each pattern matches a record's whole message.
SILENCED_RECORDS = tuple(re.compile(pattern) for pattern in (
    re.escape(LITLOGGER_TIP) + ".*",
    r"GPU available: False, used: False",
    r"TPU available: False, using: 0 TPU cores",
    r"`Trainer\.fit` stopped: `max_(steps|epochs)=\d+` reached\.",
    r"`Trainer\(limit_(train|val)_batches=1\.0\)` was configured so 100% of the batches "
    r"(per epoch )?will be used\.\.",
    r"Loading `train_dataloader` to estimate number of stepping batches\.",
))


class _DropNoise(logging.Filter):
    """Drops the records of :data:`SILENCED_RECORDS`; passes every other one."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(pattern.fullmatch(message) for pattern in SILENCED_RECORDS)


def install_quiet_filters() -> Callable[[], None]:
    """Silence the ``LeafSpec`` deprecation warning and the records of
    :data:`SILENCED_RECORDS` in this process; returns the function that undoes it."""
    logger = logging.getLogger(RANK_ZERO_LOGGER)
    drop = _DropNoise()
    logger.addFilter(drop)
    catcher = warnings.catch_warnings()
    catcher.__enter__()
    warnings.filterwarnings("ignore", message=LEAFSPEC_DEPRECATION, category=FutureWarning)

    def undo() -> None:
        catcher.__exit__(None, None, None)
        logger.removeFilter(drop)

    return undo


@contextlib.contextmanager
def quiet_lightning() -> Iterator[None]:
    """Inside, the ``LeafSpec`` deprecation warning and the records of
    :data:`SILENCED_RECORDS` are silenced; build the Trainer and call ``fit`` inside."""
    undo = install_quiet_filters()
    try:
        yield
    finally:
        undo()
