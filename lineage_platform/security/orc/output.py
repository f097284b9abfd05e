"""Writing read results: a text table, JSON lines or a Parquet file."""

from __future__ import annotations

import json
import sys
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lineage_platform.errors import SecurityError


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def write_rows(table: pa.Table, output_format: str, output: str | None) -> None:
    """Write ``table`` as ``table`` (aligned text), ``jsonl`` or ``parquet`` to ``output`` (stdout if None)."""
    if output_format == "parquet":
        if not output:
            raise SecurityError("--format parquet needs --output FILE", hint="pass --output rows.parquet")
        pq.write_table(table, output)
        return
    handle = open(output, "w") if output else sys.stdout  # noqa: SIM115 - stdout must not be closed
    try:
        if output_format == "jsonl":
            for row in table.to_pylist():
                handle.write(json.dumps(row, default=_json_default) + "\n")
        else:
            handle.write(table.to_pandas().to_string(index=False, na_rep="NULL") + "\n")
    finally:
        if output:
            handle.close()
        else:
            handle.flush()
