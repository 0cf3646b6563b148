"""Small Parquet tables that hand per-fact decisions from one step of the flow to the next.

Each row names a fact by ``(relation, subject_id)`` and carries the step's decision (its split,
its frequency bucket, its no-overlap split). Rows are written in a fixed order, so the same
decisions give the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pyarrow as pa

from tasks.io.tables import read_table, write_table


def write_assignments(path: Path, rows: Iterable[Mapping[str, object]],
                      schema: pa.Schema) -> str:
    """Write rows (dicts with the schema's columns) as Parquet; return the fingerprint."""
    columns: dict[str, list] = {name: [] for name in schema.names}
    for row in rows:
        for name in schema.names:
            columns[name].append(row[name])
    return write_table(path, pa.table(columns, schema=schema))


def read_assignments(path: Path) -> list[dict[str, object]]:
    """The rows of an assignment table as dicts, in file order."""
    return read_table(path).to_pylist()


SPLITS_SCHEMA = pa.schema([("relation", pa.string()), ("subject_id", pa.string()),
                           ("split", pa.string())])
BUCKETS_SCHEMA = pa.schema([("relation", pa.string()), ("subject_id", pa.string()),
                            ("frequency", pa.int64()), ("bucket", pa.int32())])
