"""Query planning and execution over the partition catalog.

    SQL ─► WHERE as boxes (rectangles.py) ─► candidate partitions (Gremlin over the catalog)
        ─► blocks whose time range meets a box (block index) ─► read only those column chunks ─► DuckDB

The statement itself (GROUP BY, ORDER BY, aggregates, any WHERE) runs unchanged in DuckDB over the candidate rows,
so pruning can only drop rows that the WHERE clause would drop anyway: results equal a full scan's.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot
from gremlin_python.process.graph_traversal import GraphTraversalSource
from sqlglot import exp

from lineage_platform.errors import SqlError
from lineage_platform.netflow.blocks import load_blocks
from lineage_platform.netflow.catalog import Partition, all_partitions, candidate_partitions, load_layout
from lineage_platform.netflow.layout import PartitionLayout
from lineage_platform.netflow.records import (
    COLUMNS,
    IP_COLUMNS,
    SCHEMA,
    TIME_COLUMN,
    cidr_range,
    int_to_ip,
    ip_to_int,
)
from lineage_platform.netflow.rectangles import CIDR_FUNCTION, Box, where_boxes

RELATION = "flows"
READ_THREADS = 2


@dataclass
class FileSlice:
    """The blocks of one partition file a query reads."""

    path: Path
    row_groups: list[int]


@dataclass
class QueryPlan:
    """What a query will read, and why."""

    sql: str  # the statement as DuckDB runs it over the relation ``flows``
    columns: list[str]
    boxes: list[Box]
    slices: list[FileSlice]
    partitions_total: int
    partitions_read: int
    blocks_total: int
    blocks_read: int
    notes: list[str] = field(default_factory=list)


@dataclass
class QueryResult:
    """Rows of a query and what it cost."""

    table: pa.Table
    plan: QueryPlan
    bytes_read: int
    seconds: float


def engine_sql(sql: str, relation: str = RELATION) -> tuple[exp.Select, str]:
    """Parse a one-table NetFlow SELECT; return it and its DuckDB text over ``relation``.

    Dotted addresses compared with address columns become their uint32 values and ``in_cidr(col, 'a.b.c.d/n')``
    becomes ``col BETWEEN first AND last``, so the same text runs on the clustered and the unclustered data.
    """
    try:
        select = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise SqlError(
            f"cannot parse the query: {exc}", hint="write one SELECT over the NetFlow table"
        ) from exc
    tables = list(select.find_all(exp.Table))
    if not isinstance(select, exp.Select) or len(tables) != 1 or select.find(exp.Subquery, exp.Join):
        raise SqlError(
            "a NetFlow query is one SELECT over one table", hint="remove joins, subqueries and unions"
        )
    rewritten = select.copy().transform(_engine_literals)
    rewritten.find(exp.Table).replace(exp.to_table(relation))
    return select, rewritten.sql(dialect="duckdb")


def plan_query(g: GraphTraversalSource, dataset: str, sql: str) -> QueryPlan:
    """Turn the WHERE clause into boxes and pick the partition files and blocks that may hold matching rows."""
    select, text = engine_sql(sql)
    layout = load_layout(g, dataset)
    rectangles = where_boxes(select)
    boxes = _catalog_boxes(rectangles.boxes, layout)
    partitions = candidate_partitions(g, dataset, layout, boxes)
    total = len(all_partitions(g, dataset))
    slices, blocks_total = _block_slices(partitions, boxes)
    notes = _notes(select, layout, rectangles.unused)
    return QueryPlan(
        sql=text,
        columns=_columns(select),
        boxes=boxes,
        slices=slices,
        partitions_total=total,
        partitions_read=len(partitions),
        blocks_total=blocks_total,
        blocks_read=sum(len(item.row_groups) for item in slices),
        notes=notes,
    )


def execute(plan: QueryPlan) -> QueryResult:
    """Read the planned blocks and run the statement over them in DuckDB."""
    started = time.perf_counter()
    with ThreadPoolExecutor(READ_THREADS) as pool:
        parts = list(pool.map(lambda item: _read_slice(item, plan.columns), plan.slices))
    tables = [table for table, _ in parts]
    data = (
        pa.concat_tables(tables)
        if tables
        else pa.schema([SCHEMA.field(name) for name in plan.columns]).empty_table()
    )
    connection = duckdb.connect()
    try:
        connection.register(RELATION, data)
        result = connection.sql(plan.sql).to_arrow_table()
    except duckdb.Error as exc:
        raise SqlError(
            f"the query failed: {exc}", hint="check column names against the NetFlow schema"
        ) from exc
    finally:
        connection.close()
    return QueryResult(result, plan, sum(size for _, size in parts), time.perf_counter() - started)


def run_query(g: GraphTraversalSource, dataset: str, sql: str) -> QueryResult:
    """Plan and execute a query."""
    return execute(plan_query(g, dataset, sql))


def _engine_literals(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Anonymous) and node.name.upper() == CIDR_FUNCTION:
        column, block = node.expressions
        if not isinstance(block, exp.Literal) or not block.is_string:
            raise SqlError("in_cidr needs a constant block", hint="write in_cidr(src_ip, '10.0.0.0/8')")
        low, high = cidr_range(block.this)
        return exp.Between(this=column.copy(), low=exp.Literal.number(low), high=exp.Literal.number(high))
    if isinstance(node, exp.Literal) and node.is_string and _compared_with_address(node):
        return exp.Literal.number(ip_to_int(node.this))
    return node


def _compared_with_address(literal: exp.Literal) -> bool:
    parent = literal.parent
    if isinstance(parent, exp.Tuple):
        parent = parent.parent
    if not isinstance(parent, exp.Predicate | exp.In | exp.Between):
        return False
    return any(
        isinstance(child, exp.Column) and child.name in IP_COLUMNS for child in parent.iter_expressions()
    )


def _catalog_boxes(boxes: list[Box], layout: PartitionLayout) -> list[Box]:
    """Boxes reduced to the catalog's dimensions (time + clustering attributes), without duplicates."""
    dimensions = {TIME_COLUMN, *layout.attributes}
    unique: dict[tuple, Box] = {}
    for box in boxes:
        projected = {name: interval for name, interval in box.items() if name in dimensions}
        unique.setdefault(tuple(sorted(projected.items())), projected)
    return list(unique.values())


def _block_slices(partitions: list[Partition], boxes: list[Box]) -> tuple[list[FileSlice], int]:
    """Per candidate file, the blocks whose time range meets the time interval of some box."""
    windows = [box.get(TIME_COLUMN) for box in boxes]
    slices, total = [], 0
    for partition in partitions:
        blocks = load_blocks(partition.path)
        total += len(blocks)
        keep = [
            block.row_group
            for block in blocks
            if any(
                window is None or (block.time_max >= window[0] and block.time_min <= window[1])
                for window in windows
            )
        ]
        if keep:
            slices.append(FileSlice(partition.path, keep))
    return slices, total


def _read_slice(item: FileSlice, columns: list[str]) -> tuple[pa.Table, int]:
    parquet = pq.ParquetFile(item.path)
    table = parquet.read_row_groups(item.row_groups, columns=columns)
    expected = pa.schema([SCHEMA.field(name) for name in columns])
    if table.schema != expected:  # e.g. microsecond timestamps written by Spark
        table = table.cast(expected)
    return table, _chunk_bytes(parquet.metadata, item.row_groups, columns)


def _chunk_bytes(metadata: pq.FileMetaData, row_groups: list[int], columns: list[str]) -> int:
    """Compressed bytes of the given columns in the given row groups."""
    wanted = {metadata.schema.to_arrow_schema().get_field_index(name) for name in columns}
    return sum(
        metadata.row_group(group).column(index).total_compressed_size
        for group in row_groups
        for index in wanted
    )


def _columns(select: exp.Select) -> list[str]:
    """Record columns the statement needs (all of them for ``*``; one for ``count(*)``)."""
    if any(not isinstance(star.parent, exp.Count) for star in select.find_all(exp.Star)):
        return list(COLUMNS)
    used = {column.name for column in select.find_all(exp.Column) if column.name in COLUMNS}
    return [name for name in COLUMNS if name in used] or [TIME_COLUMN]


def _notes(select: exp.Select, layout: PartitionLayout, unused: set[str]) -> list[str]:
    where = select.args.get("where")
    filtered = {column.name for column in where.find_all(exp.Column)} if where else set()
    other = sorted(filtered - {TIME_COLUMN, *layout.attributes})
    notes = []
    if other:
        verb = "is not a clustering attribute" if len(other) == 1 else "are not clustering attributes"
        notes.append(
            f"{', '.join(other)} {verb} (clustered on {', '.join(layout.attributes)}): "
            "the answer is complete, but fewer partitions could be skipped"
        )
    unusable = sorted(unused - set(other))
    if unusable:
        notes.append(
            f"conditions on {', '.join(unusable)} are not simple ranges and were not used for pruning"
        )
    return notes


def format_result(result: QueryResult, *, explain: bool = False, max_rows: int = 50) -> str:
    """The rows as text (addresses dotted), a cost line, notes, and with ``explain`` the boxes."""
    table = result.table
    names = table.column_names
    rows = [
        [_cell(name, value) for name, value in zip(names, row.values())]
        for row in table.slice(0, max_rows).to_pylist()
    ]
    widths = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(names)]
    lines = ["  ".join(name.ljust(width) for name, width in zip(names, widths))]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in rows]
    if table.num_rows > max_rows:
        lines.append(f"... {table.num_rows - max_rows} more rows")
    plan = result.plan
    lines.append(
        f"{table.num_rows} rows in {result.seconds:.3f} s; read {plan.partitions_read}/{plan.partitions_total} "
        f"partitions, {plan.blocks_read}/{plan.blocks_total} blocks, {result.bytes_read:,} bytes"
    )
    lines += [f"note: {note}" for note in plan.notes]
    if explain:
        lines.append(f"DuckDB: {plan.sql}")
        lines += [f"box: {box or '(everything)'}" for box in plan.boxes]
    return "\n".join(lines)


def _cell(name: str, value: object) -> str:
    if name in IP_COLUMNS and isinstance(value, int):
        return int_to_ip(value)
    return str(value)
