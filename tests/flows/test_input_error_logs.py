"""Prefect's engines log a missing input or a bad record on one line under `qastress stage`;
any other exception keeps its traceback."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from prefect import flow, task

from flows._input_error_logs import (
    ENGINE_LOGGERS,
    InputErrorsOnOneLine,
    input_errors_on_one_line,
)
from tasks.io.errors import DataFormatError, MissingInputError


class Collect(logging.Handler):
    def __init__(self, level: int = logging.ERROR):
        super().__init__(level)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _engine_records(level: int) -> Iterator[list[logging.LogRecord]]:
    """The records of the engines' loggers at ``level`` and up, while the fixture lasts."""
    handler = Collect(level)
    loggers = [logging.getLogger(name) for name in ENGINE_LOGGERS]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler.records
    for logger in loggers:
        logger.removeHandler(handler)


@pytest.fixture
def engine_errors():
    yield from _engine_records(logging.ERROR)


@pytest.fixture
def engine_records():
    """Every record of the engines' loggers from INFO up (a flow's final state is INFO)."""
    yield from _engine_records(logging.INFO)


@task(retries=0)
def read_record() -> None:
    raise DataFormatError("psgs_w100.tsv", "line 17", "3 tab-separated fields", "2")


@task(retries=0)
def read_quoted_record() -> None:
    raise DataFormatError("it's.json", "record 1", "well-formed JSON", "a colon (':') or \"x\"")


@flow
def reads_a_quoted_bad_record() -> None:
    read_quoted_record()


@flow
def reads_a_bad_record() -> None:
    read_record()


@flow
def misses_an_input() -> None:
    raise MissingInputError("data/x.tsv: no such file (sources.x); run `qastress stage y`")


@flow
def breaks() -> None:
    raise ZeroDivisionError("a bug")


def _tracebacks(records: list[logging.LogRecord]) -> list[bool]:
    return [record.exc_info is not None for record in records]


def test_input_errors_lose_the_traceback_others_keep_it(prefect_api, engine_errors):
    with input_errors_on_one_line():
        for run, error in ((reads_a_bad_record, DataFormatError),
                           (misses_an_input, MissingInputError), (breaks, ZeroDivisionError)):
            with pytest.raises(error):
                run()
    messages = [record.getMessage() for record in engine_errors]
    bad_record = [m for m in messages if "line 17: expected 3 tab-separated fields" in m]
    missing = [m for m in messages if "run `qastress stage y`" in m]
    bug = [r for r in engine_errors if "a bug" in r.getMessage()]
    assert bad_record and missing and bug
    assert not any(_tracebacks([r for r in engine_errors if "a bug" not in r.getMessage()]))
    assert all(_tracebacks(bug))


def test_outside_the_block_prefect_logs_the_traceback(prefect_api, engine_errors):
    with pytest.raises(MissingInputError):
        misses_an_input()
    assert engine_errors and all(_tracebacks(engine_errors))
    assert not any(isinstance(f, InputErrorsOnOneLine) for name in ENGINE_LOGGERS
                   for f in logging.getLogger(name).filters)


@pytest.mark.parametrize("run, quoted", [
    (reads_a_bad_record, "line 17: expected 3 tab-separated fields"),
    (reads_a_quoted_bad_record, "record 1: expected well-formed JSON; got a colon"),
    (misses_an_input, "run `qastress stage y`")])
def test_an_input_error_is_quoted_once_and_later_records_refer_to_it(prefect_api,
                                                                     engine_records, run, quoted):
    """The engines log the task's failure, its final state, the flow's failure and its final
    state: the error's text once, then each record in its own words."""
    with input_errors_on_one_line(), pytest.raises((DataFormatError, MissingInputError)) as error:
        run()
    kind = type(error.value).__name__
    messages = [r.getMessage() for r in engine_records if kind in r.getMessage()]
    assert sum(quoted in m for m in messages) == 1, messages
    later = messages[[quoted in m for m in messages].index(True) + 1:]
    assert later and all(m.endswith(f": {kind}, as logged above") for m in later), messages
    assert f"Finished in state Failed: {kind}, as logged above" in later, messages
