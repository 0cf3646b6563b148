"""Parquet tables via pyarrow, written atomically and stamped with a content fingerprint.

The fingerprint is the sha256 of the table's canonical Arrow IPC stream: columns combined into
one chunk each and all schema-level metadata removed, so it depends on the column names, types
and values only (not on chunking, on user metadata, or on Parquet encoding details). It is
stored in the Parquet schema metadata under :data:`FINGERPRINT_KEY` and can be read back from
the footer without loading the data (:func:`table_fingerprint`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tasks.io.atomic import atomic_write
from tasks.io.errors import DataFormatError

FINGERPRINT_KEY = "qastress.fingerprint"

TableLike = pa.Table | pa.RecordBatch | Mapping[str, Any] | Iterable[Mapping[str, Any]]


def to_table(table_or_rows: TableLike, schema: pa.Schema | None = None) -> pa.Table:
    """A :class:`pyarrow.Table` from a table, a record batch, ``{column: values}`` or rows."""
    if isinstance(table_or_rows, pa.Table):
        return table_or_rows if schema is None else table_or_rows.cast(schema)
    if isinstance(table_or_rows, pa.RecordBatch):
        table = pa.Table.from_batches([table_or_rows])
        return table if schema is None else table.cast(schema)
    if isinstance(table_or_rows, Mapping):
        return pa.Table.from_pydict(dict(table_or_rows), schema=schema)
    rows = [dict(row) for row in table_or_rows]
    if not rows and schema is None:
        raise ValueError("cannot infer the columns of an empty row list: pass a schema")
    return pa.Table.from_pylist(rows, schema=schema)


def compute_table_fingerprint(table: pa.Table) -> str:
    """sha256 (hex) of the canonical IPC stream of ``table`` (see the module docstring)."""
    canonical = table.replace_schema_metadata(None).combine_chunks()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, canonical.schema) as writer:
        for batch in canonical.to_batches():
            writer.write_batch(batch)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


def write_table(path: str | Path, table_or_rows: TableLike,
                metadata: Mapping[str, str] | None = None,
                schema: pa.Schema | None = None) -> str:
    """Atomically write a Parquet file; return the content fingerprint stored in it.

    ``metadata`` (string keys and values) is added to the schema metadata, with the fingerprint
    under :data:`FINGERPRINT_KEY`. ``schema`` types the columns (needed for an empty row list).
    """
    table = to_table(table_or_rows, schema)
    fingerprint = compute_table_fingerprint(table)
    merged: dict[bytes | str, bytes | str] = dict(table.schema.metadata or {})
    for key, value in (metadata or {}).items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError(f"metadata keys and values must be strings: {key!r}: {value!r}")
        if key == FINGERPRINT_KEY:
            raise ValueError(f"{FINGERPRINT_KEY} is set by write_table")
        merged[key] = value
    merged[FINGERPRINT_KEY] = fingerprint
    table = table.replace_schema_metadata(merged)
    with atomic_write(path, "wb") as out:
        pq.write_table(table, out)
    return fingerprint


def read_table(path: str | Path, columns: list[str] | None = None) -> pa.Table:
    """Read a Parquet file (optionally only ``columns``), schema metadata included.

    A file that is not Parquet raises :class:`DataFormatError`; so does a name in ``columns``
    that is not a column of the file (naming the missing ones and the file's columns). As in
    pyarrow, ``"a.b"`` names the field ``b`` of a struct column ``a``.
    """
    try:
        parquet = pq.ParquetFile(path)
        if columns is not None:
            _check_columns(path, parquet, columns)
        return parquet.read(columns=columns)
    except (pa.ArrowInvalid, pa.ArrowIOError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise DataFormatError(path, "file", "a Parquet file", str(exc).splitlines()[0]) from None


def _check_columns(path: str | Path, parquet: pq.ParquetFile, columns: list[str]) -> None:
    """Raise :class:`DataFormatError` for names in ``columns`` that select nothing (pyarrow
    ignores them): a name must be a column, or a dotted path (prefix) into a nested one."""
    if isinstance(columns, str):
        raise TypeError(f"columns must be a list of names, not the string {columns!r}")
    known: set[str] = set(parquet.schema_arrow.names)
    schema = parquet.schema
    for i in range(len(schema)):
        parts = schema.column(i).path.split(".")
        known.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
    missing = [name for name in columns if name not in known]
    if missing:
        raise DataFormatError(path, "columns", f"columns {missing}",
                              f"a file with columns {parquet.schema_arrow.names}")


def table_fingerprint(path: str | Path) -> str:
    """The content fingerprint of a Parquet file.

    The stored :data:`FINGERPRINT_KEY` value when present (read from the footer only); for a
    file written elsewhere, computed from its content the same way :func:`write_table` does.
    """
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, pa.ArrowIOError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise DataFormatError(path, "file", "a Parquet file", str(exc).splitlines()[0]) from None
    stored = (schema.metadata or {}).get(FINGERPRINT_KEY.encode())
    if stored is not None:
        return stored.decode()
    return compute_table_fingerprint(read_table(path))
