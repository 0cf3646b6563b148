"""One line, not a traceback, in the run's log for an error that already says what to do.

A missing input (:class:`~tasks.io.errors.MissingInputError`) or a bad record
(:class:`~tasks.io.errors.DataFormatError`) names the file, the place and the fix; Prefect's
engines log any exception a flow or task raises with its traceback, which buries that line
under thirty lines of engine frames. While :func:`input_errors_on_one_line` is active those log
records keep their message and lose the traceback; every other exception keeps its traceback.

The engines also repeat the error: the task's failure, the task's final state, the flow's
failure and the flow's final state each quote it whole, four copies before ``qastress`` prints
it once more. The first record of an input error keeps its message; every later record of the
block that quotes the same error keeps only its own words, the error's type and "as logged
above", so the run's log and the Prefect UI still show each state change.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tasks.io.errors import DataFormatError, MissingInputError

#: The loggers through which Prefect's flow and task engines report a raised exception.
ENGINE_LOGGERS = ("prefect.flow_runs", "prefect.task_runs")
#: Shorter error texts are never looked for in later records (they could match by chance).
_MIN_QUOTED = 20


class InputErrorsOnOneLine(logging.Filter):
    """Drops the traceback from records about a :class:`MissingInputError` or a
    :class:`DataFormatError`, and shortens later records that quote one already logged; lets
    every record through."""

    def __init__(self) -> None:
        super().__init__()
        self._logged: dict[str, str] = {}  # error message -> its type's name
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the record; strip its traceback when it is about an input error; shorten it
        when it repeats one logged before."""
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, MissingInputError | DataFormatError):
            record.exc_info = None
            record.exc_text = None
            with self._lock:
                if str(error) not in self._logged and len(str(error)) >= _MIN_QUOTED:
                    self._logged[str(error)] = type(error).__name__
                    return True
        with self._lock:
            logged = dict(self._logged)
        if logged:
            message = record.getMessage()
            quoted = next((kind for text, kind in logged.items()
                           if text in message or repr(text)[1:-1] in message), None)
            if quoted is not None:
                own_words = re.split(r"[(:]", message, maxsplit=1)[0].rstrip()
                record.msg, record.args = f"{own_words}: {quoted}, as logged above", ()
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
