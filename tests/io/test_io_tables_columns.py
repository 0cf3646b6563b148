"""read_table(columns=...) with a column the file does not have is an error naming the file,
the missing columns and the columns it has (audit item #10)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tasks.io.errors import DataFormatError
from tasks.io.tables import read_table, write_table


@pytest.fixture
def table_path(tmp_path):
    path = tmp_path / "t.parquet"
    write_table(path, {"a": [1, 2], "b": ["x", "y"],
                       "s": pa.array([{"u": 1}, {"u": 2}], pa.struct([("u", pa.int64())]))})
    return path


@pytest.mark.parametrize("columns, missing", [(["nope"], ["nope"]), (["a", "nope"], ["nope"]),
                                              (["z", "a", "s.v"], ["z", "s.v"])])
def test_missing_columns_are_an_error(table_path, columns, missing):
    with pytest.raises(DataFormatError) as info:
        read_table(table_path, columns=columns)
    assert str(info.value) == (f"{table_path}, columns: expected columns {missing}; "
                               f"got a file with columns ['a', 'b', 's']")


def test_existing_columns_still_read(table_path):
    assert read_table(table_path, columns=["b", "a"]).column_names == ["b", "a"]
    assert read_table(table_path, columns=["s.u"]).num_rows == 2
    assert read_table(table_path, columns=[]).num_columns == 0
    assert read_table(table_path).column_names == ["a", "b", "s"]
