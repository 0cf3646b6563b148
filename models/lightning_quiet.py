"""Two Lightning messages that say nothing about a run, silenced for exactly their text.

Every training (DPR, MLM pre-training, reader, paraphraser) printed both, once per Trainer:
17 times each in a demo run.

* Lightning 2.6 builds ``torch.utils._pytree.LeafSpec`` objects, which torch 2.13 deprecates
  with a ``FutureWarning`` on each build (a version mismatch between the two libraries, nothing
  the caller can change).
* Every Trainer without Lightning's cloud logger logs a tip to install it (``litlogger``).

Any other warning or log record of Lightning still shows.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator

#: The warning torch 2.13 gives when Lightning 2.6 builds a ``LeafSpec``.
LEAFSPEC_DEPRECATION = r"`isinstance\(treespec, LeafSpec\)` is deprecated"
#: Where Lightning logs its rank-zero information, and the start of its advertisement.
RANK_ZERO_LOGGER = "pytorch_lightning.utilities.rank_zero"
LITLOGGER_TIP = "💡 Tip: For seamless cloud logging"


class _DropLitLoggerTip(logging.Filter):
    """Drops the ``litlogger`` tip; passes every other record."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(LITLOGGER_TIP)


@contextlib.contextmanager
def quiet_lightning() -> Iterator[None]:
    """Inside, the ``LeafSpec`` deprecation warning and the ``litlogger`` tip are silenced;
    build the Trainer and call ``fit`` inside."""
    logger = logging.getLogger(RANK_ZERO_LOGGER)
    tip_filter = _DropLitLoggerTip()
    logger.addFilter(tip_filter)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=LEAFSPEC_DEPRECATION, category=FutureWarning)
            yield
    finally:
        logger.removeFilter(tip_filter)
