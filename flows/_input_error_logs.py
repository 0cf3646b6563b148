"""One line, not a traceback, in the run's log for an error that already says what to do.

A missing input (:class:`~tasks.io.errors.MissingInputError`) or a bad record
(:class:`~tasks.io.errors.DataFormatError`) names the file, the place and the fix; Prefect's
engines log any exception a flow or task raises with its traceback, which buries that line
under thirty lines of engine frames. While :func:`input_errors_on_one_line` is active those log
records keep their message and lose the traceback; every other exception keeps its traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from tasks.io.errors import DataFormatError, MissingInputError

#: The loggers through which Prefect's flow and task engines report a raised exception.
ENGINE_LOGGERS = ("prefect.flow_runs", "prefect.task_runs")


class InputErrorsOnOneLine(logging.Filter):
    """Drops the traceback from records about a :class:`MissingInputError` or a
    :class:`DataFormatError`; lets every record through."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the record; strip its traceback when it is about an input error."""
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, MissingInputError | DataFormatError):
            record.exc_info = None
            record.exc_text = None
        return True


@contextmanager
def input_errors_on_one_line() -> Iterator[None]:
    """Install :class:`InputErrorsOnOneLine` on Prefect's engine loggers for the block."""
    quiet = InputErrorsOnOneLine()
    loggers = [logging.getLogger(name) for name in ENGINE_LOGGERS]
    for logger in loggers:
        logger.addFilter(quiet)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(quiet)
