"""Semantic oracle for permission extraction: cells outside the resource blocks must not change the result.

For one query over a DuckDB database: run it; inside a transaction, change every cell outside the query's
resource blocks (rows failing the block conditions get new values in every column — their predicate
columns become NULL, which fails any comparison, so they stay outside; rows inside get new values in the
columns the block does not list); run it again; roll back. Then the same with every row outside the
blocks deleted. Different results mean the extractor missed a dependency. Counting the cells gives the
block size against table-level and column-only privileges.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from duckdb import DuckDBPyConnection
from sqlglot import exp

from lineage_platform.security.duckdb_masks import to_duckdb
from lineage_platform.security.resource_blocks import (
    AccessRequest,
    ResourceBlock,
    extract_resource_blocks,
    row_condition,
)

_NUMERIC = ("int", "bigint", "smallint", "tinyint", "double", "float", "decimal")


@dataclass(frozen=True)
class OracleResult:
    """One query's verdict and the cells each privilege model would grant."""

    sql: str
    preserved: bool
    block_cells: int
    column_cells: int
    table_cells: int


def check_query(
    connection: DuckDBPyConnection,
    sql: str,
    schema: Mapping[str, Mapping[str, Mapping[str, str]]],
    dialect: str = "hive",
    request: AccessRequest | None = None,
) -> OracleResult:
    """Run the oracle for ``sql`` (in ``dialect``) against the tables of ``schema`` loaded in ``connection``.

    Two experiments, each in a rolled-back transaction: change every cell outside the blocks, and delete
    every row outside them. ``request`` replaces the extracted blocks (to test the oracle itself).
    """
    request = request or extract_resource_blocks(sql, schema, dialect)
    query = to_duckdb(sql, dialect)
    tables = {
        f"{database}.{table}": (
            dict(columns),
            [b for b in request.blocks if b.table == f"{database}.{table}"],
        )
        for database, tables in schema.items()
        for table, columns in tables.items()
    }
    before = _rows(connection, query)
    preserved = all(
        _rows_after(connection, query, tables, change) == before for change in (_perturb, _delete_outside)
    )
    sizes = [0, 0, 0]
    for table, (columns, blocks) in tables.items():
        sizes = [total + n for total, n in zip(sizes, _cells(connection, table, columns, blocks))]
    return OracleResult(sql, preserved, *sizes)


def _rows_after(
    connection: DuckDBPyConnection,
    query: str,
    tables: dict[str, tuple[dict[str, str], list[ResourceBlock]]],
    change: Callable[[DuckDBPyConnection, str, dict[str, str], list[ResourceBlock]], None],
) -> list[tuple[Any, ...]]:
    """The query's rows after ``change`` on every table, inside a transaction that is rolled back."""
    connection.begin()
    try:
        for table, (columns, blocks) in tables.items():
            change(connection, table, columns, blocks)
        return _rows(connection, query)
    finally:
        connection.rollback()


def _rows(connection: DuckDBPyConnection, query: str) -> list[tuple[Any, ...]]:
    return sorted(connection.execute(query).fetchall(), key=repr)


def _inside(blocks: list[ResourceBlock]) -> str | None:
    """DuckDB condition of the rows inside the blocks; None when every row is inside."""
    if not blocks:
        return "FALSE"
    conditions = [row_condition(b.predicates) for b in blocks]
    return None if any(c is None for c in conditions) else exp.or_(*conditions).sql("duckdb")


def _cells(
    connection: DuckDBPyConnection, table: str, columns: dict[str, str], blocks: list[ResourceBlock]
) -> tuple[int, int, int]:
    """Cells granted by (resource blocks, column-only privileges, table-level privileges)."""
    total = connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    covered = {c for b in blocks for c in b.covered_columns}
    inside = _inside(blocks)
    rows = (
        total
        if inside is None
        else connection.execute(f"SELECT count(*) FROM {table} WHERE {inside}").fetchone()[0]
    )
    return rows * len(covered), total * len(covered), total * len(columns)


def _perturb(
    connection: DuckDBPyConnection, table: str, columns: dict[str, str], blocks: list[ResourceBlock]
) -> None:
    """Change every cell of ``table`` outside ``blocks``; rows outside stay outside."""
    inside = _inside(blocks)
    if inside is not None:
        keep = {p.column for b in blocks for p in b.predicates if p.op == "IS NULL"}
        tested = {p.column for b in blocks for p in b.predicates}
        outside_values = {
            c: ("NULL" if c in tested else _changed(c, t)) for c, t in columns.items() if c not in keep
        }
        _update(connection, table, outside_values, f"({inside}) IS NOT TRUE")
    covered = {c for b in blocks for c in b.covered_columns}
    inside_values = {c: _changed(c, t) for c, t in columns.items() if c not in covered}
    _update(connection, table, inside_values, None if inside is None else f"({inside}) IS TRUE")


def _delete_outside(
    connection: DuckDBPyConnection, table: str, columns: dict[str, str], blocks: list[ResourceBlock]
) -> None:
    """Delete every row of ``table`` outside ``blocks``."""
    inside = _inside(blocks)
    if inside is not None:
        connection.execute(f"DELETE FROM {table} WHERE ({inside}) IS NOT TRUE")


def _update(connection: DuckDBPyConnection, table: str, values: dict[str, str], where: str | None) -> None:
    if values:
        assignments = ", ".join(f"{column} = {value}" for column, value in values.items())
        connection.execute(f"UPDATE {table} SET {assignments}" + (f" WHERE {where}" if where else ""))


def _changed(column: str, hive_type: str) -> str:
    """A DuckDB expression giving another value of the same type, different in every row (so equal values
    stop being equal and joins, grouping and DISTINCT notice); NULLs become values too."""
    kind = hive_type.lower()
    if kind.startswith(_NUMERIC):
        return f"coalesce({column}, 0) * 3 + 7 + rowid * 1000"
    if kind == "date":
        return f"coalesce({column}, DATE '2000-01-01') + CAST(400 + rowid AS INTEGER)"
    if kind == "boolean":
        return f"NOT coalesce({column}, false)"
    if kind.startswith("array"):
        return f"list_append(coalesce({column}, []), 'zz' || rowid)"
    return f"'~' || md5(coalesce(CAST({column} AS VARCHAR), 'null') || rowid)"
