"""Python rows of a plain ORC file, decoded by ORC C++ through pyorc, in the form ``pa.Table.to_pylist`` gives
(structs as dicts, timestamps as Arrow's ``as_py``) except maps, which are dicts in both paths.

pyorc builds each row in C++ and is several times faster than converting an Arrow table value by value.
Readers build such lists with the cyclic garbage collector paused (``lineage_platform.gc_pause``): while a list of
hundreds of thousands of rows is built, every new container stays alive, and the collector would run repeated full
collections that find nothing to free.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyorc
from pyorc.converters import ORCConverter


def _timestamp_converter(arrow_type: pa.DataType) -> type[ORCConverter]:
    """A pyorc converter giving a timestamp exactly as Arrow's ``as_py`` gives ``arrow_type``."""

    class _ArrowTimestamp(ORCConverter):
        @staticmethod
        def from_orc(seconds: int, nanoseconds: int, timezone: Any) -> Any:
            return pa.scalar(seconds * 1_000_000_000 + nanoseconds, arrow_type).as_py()

        @staticmethod
        def to_orc(*args: Any) -> Any:
            raise NotImplementedError

    return _ArrowTimestamp


_CONVERTERS: dict[pyorc.TypeKind, type[ORCConverter]] = {
    pyorc.TypeKind.TIMESTAMP: _timestamp_converter(pa.timestamp("ns")),
    pyorc.TypeKind.TIMESTAMP_INSTANT: _timestamp_converter(pa.timestamp("ns", tz="UTC")),
}


def orc_rows(plain: bytes, columns: Sequence[str]) -> pyorc.Reader:
    """pyorc's reader of the plain ORC file ``plain``: an iterator of dicts of ``columns`` (``read()``: all
    rows as a list); it raises what pyorc raises on data it cannot decode (``seek.DECODE_ERRORS``)."""
    return pyorc.Reader(
        io.BytesIO(plain),
        column_names=list(columns),
        struct_repr=pyorc.StructRepr.DICT,
        converters=_CONVERTERS,
    )


def table_rows(table: pa.Table) -> list[dict[str, Any]]:
    """An Arrow table's rows, maps as dicts (Arrow gives lists of pairs)."""
    rows = table.to_pylist()
    for field in table.schema:
        if _has_map(field.type):
            for row in rows:
                row[field.name] = _maps_as_dicts(row[field.name], field.type)
    return rows


def _has_map(arrow_type: pa.DataType) -> bool:
    if pa.types.is_map(arrow_type):
        return True
    return any(_has_map(arrow_type.field(i).type) for i in range(arrow_type.num_fields))


def _maps_as_dicts(value: Any, arrow_type: pa.DataType) -> Any:
    """``value`` (``as_py`` of ``arrow_type``) with every map as a dict."""
    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        return {k: _maps_as_dicts(v, arrow_type.item_type) for k, v in value}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return [_maps_as_dicts(v, arrow_type.value_type) for v in value]
    if pa.types.is_struct(arrow_type):
        return {f.name: _maps_as_dicts(value[f.name], f.type) for f in arrow_type}
    return value
