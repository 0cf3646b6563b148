"""Errors raised in a worker process (Dask, Ray, a process pool) reach the flow intact."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest

from tasks.io.errors import DataFormatError, MissingInputError


def _read_bad_record(path: str) -> None:
    raise DataFormatError(path, "line 17", "3 tab-separated fields", "2")


def test_a_data_format_error_keeps_its_fields_through_pickle():
    error = pickle.loads(pickle.dumps(DataFormatError("psgs.tsv", "line 3", "an id", "''")))
    assert type(error) is DataFormatError
    assert (error.path, error.where, error.expected, error.got) == (
        "psgs.tsv", "line 3", "an id", "''")
    assert str(error) == "psgs.tsv, line 3: expected an id; got ''"
    missing = pickle.loads(pickle.dumps(MissingInputError("data/x: no such file; run y")))
    assert type(missing) is MissingInputError and str(missing) == "data/x: no such file; run y"


def test_a_worker_process_raises_the_same_error():
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        future = pool.submit(_read_bad_record, "psgs_w100.tsv")
        with pytest.raises(DataFormatError, match=r"psgs_w100\.tsv, line 17: expected 3 "
                           r"tab-separated fields; got 2") as info:
            future.result()
    assert info.value.where == "line 17"
