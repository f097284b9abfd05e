"""Query planning and execution over the partition catalog.

    SQL ─► WHERE as boxes (rectangles.py) ─► candidate partitions (the cached catalog snapshot, snapshot.py)
        ─► blocks whose time range meets a box (block index) ─► ONE DuckDB scan over the candidate files

The fixed cost of a query is one small Gremlin lookup (is the cached catalog current?), pruning in memory and
DuckDB's own planning. A statement's analysis (parse, DuckDB text, boxes, columns) is kept per distinct text
(:data:`STATEMENTS_CACHED`), so a repeated query is not parsed again; Parquet footers stay in DuckDB's metadata cache.

The statement itself (GROUP BY, ORDER BY, aggregates, any WHERE) runs unchanged in DuckDB over the candidate rows,
so pruning can only drop rows that the WHERE clause would drop anyway: results equal a full scan's.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot
from gremlin_python.process.graph_traversal import GraphTraversalSource
from sqlglot import exp

from lineage_platform.errors import SqlError
from lineage_platform.netflow.blocks import schema_signature
from lineage_platform.netflow.catalog import Partition
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
from lineage_platform.netflow.rectangles import CIDR_FUNCTION, Box, Rectangles, where_boxes
from lineage_platform.netflow.snapshot import CatalogSnapshot, catalog_snapshot

RELATION = "flows"
STREAM_BATCH_ROWS = 1 << 16
# A query whose answer is one row (aggregates without GROUP BY) or that reads at most this many records runs in one
# pass: DuckDB's relation API, which streams, binds a statement twice (once to describe it, once to run it), ~0.5 ms
# of a 3-6 ms query; a direct execution binds once and hands over its rows at the end, which costs a copy of them.
ONE_PASS_ROWS = 1 << 18
RELATION_SLOT = "__netflow_relation__"  # where the relation goes in a statement's rendered text
READ_THREADS = 2
STATEMENTS_CACHED = 512  # distinct statement texts whose analysis is kept (least recently used dropped)
ENGINES = ("duckdb", "arrow")
CANONICAL_SCHEMA = schema_signature(SCHEMA)
DUCKDB_TYPES = {
    pa.timestamp("ms"): "TIMESTAMP_MS",
    pa.uint8(): "UTINYINT",
    pa.uint16(): "USMALLINT",
    pa.uint32(): "UINTEGER",
    pa.uint64(): "UBIGINT",
}
_DUCKDB = duckdb.connect()  # one in-memory database; each query runs on its own cursor
# Parquet footers parsed once per file, not once per query (partition files are never rewritten in place)
_DUCKDB.execute("SET parquet_metadata_cache = true")
# the copy DuckDB warns about is the one-pass execution's, taken only for small answers (ONE_PASS_ROWS)
warnings.filterwarnings("ignore", "Arrow output on a DB-API result", UserWarning, __name__)


@dataclass
class FileSlice:
    """The blocks of one partition file a query reads."""

    path: Path
    row_groups: list[int]
    bytes: int  # compressed bytes of the query's columns in those blocks
    schema: str  # physical schema signature of the file
    rows: int = 0  # records in those blocks


@dataclass(frozen=True)
class Statement:
    """What planning needs from a statement's text, independent of the catalog (cached per distinct text)."""

    template: str  # the DuckDB text with :data:`RELATION_SLOT` where the relation goes
    rectangles: Rectangles
    columns: tuple[str, ...]  # record columns the statement reads
    filtered: frozenset[str]  # columns its WHERE clause refers to
    one_row: bool  # its answer is one row (aggregates, no GROUP BY)


@dataclass
class QueryPlan:
    """What a query will read, and why."""

    statement: str  # the query as given
    sql: str  # the statement as DuckDB runs it over the relation ``flows``
    columns: list[str]
    boxes: list[Box]
    slices: list[FileSlice]
    partitions_total: int
    partitions_read: int
    blocks_total: int
    blocks_read: int
    template: str = field(repr=False)  # ``sql`` with :data:`RELATION_SLOT` where the relation goes
    one_row: bool = False  # the answer is one row whatever the data
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0  # time spent planning


@dataclass
class QueryResult:
    """Rows of a query and what it cost."""

    table: pa.Table
    plan: QueryPlan
    bytes_read: int
    seconds: float  # time spent executing (the plan carries its own)


def engine_sql(sql: str, relation: str = RELATION) -> tuple[exp.Select, str]:
    """Parse a one-table NetFlow SELECT; return it and its DuckDB text over ``relation``.

    Dotted addresses compared with address columns become their uint32 values and ``in_cidr(col, 'a.b.c.d/n')``
    becomes ``col BETWEEN first AND last``, so the same text runs on the clustered and the unclustered data.
    """
    select, template = _parse(sql)
    return select, _over(template, relation)


def _parse(sql: str) -> tuple[exp.Select, str]:
    """The statement as written, and its DuckDB text (see :func:`engine_sql`) over :data:`RELATION_SLOT`."""
    if RELATION_SLOT in sql:
        raise SqlError(f"{RELATION_SLOT} is a reserved name", hint="rename that column alias or literal")
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
    rewritten = select.transform(_engine_literals)  # a copy: boxes are read from the statement as written
    table = rewritten.find(exp.Table)
    alias = exp.TableAlias(this=exp.to_identifier(table.alias_or_name))  # `flows.col` still resolves
    table.replace(exp.Table(this=exp.to_identifier(RELATION_SLOT), alias=alias))
    return select, rewritten.sql(dialect="duckdb")


def _over(template: str, relation: str) -> str:
    """A statement's DuckDB text over ``relation`` (rendered once, placed for each scan)."""
    return template.replace(RELATION_SLOT, relation, 1)


@lru_cache(maxsize=STATEMENTS_CACHED)
def analyse(sql: str) -> Statement:
    """Parse a statement once: its DuckDB text, WHERE boxes and columns (raises :class:`SqlError` on bad input)."""
    select, template = _parse(sql)
    where = select.args.get("where")
    filtered = frozenset(column.name for column in where.find_all(exp.Column)) if where else frozenset()
    return Statement(template, where_boxes(select), tuple(_columns(select)), filtered, _one_row(select))


def _one_row(select: exp.Select) -> bool:
    """Whether the statement answers with exactly one row: every output is an aggregate and nothing groups."""
    if select.args.get("group") or select.find(exp.Window, exp.Unnest, exp.Explode):
        return False
    return all(output.find(exp.AggFunc) is not None for output in select.expressions)


def plan_query(g: GraphTraversalSource, dataset: str, sql: str) -> QueryPlan:
    """Turn the WHERE clause into boxes and pick the partition files and blocks that may hold matching rows."""
    started = time.perf_counter()
    statement = analyse(sql)
    catalog = catalog_snapshot(g, dataset)
    layout = catalog.layout
    boxes = _catalog_boxes(statement.rectangles.boxes, layout)
    partitions = catalog.candidates(boxes)
    columns = list(statement.columns)
    slices, blocks_total = _block_slices(catalog, partitions, boxes, columns)
    return QueryPlan(
        statement=sql,
        sql=_over(statement.template, RELATION),
        columns=columns,
        boxes=boxes,
        slices=slices,
        partitions_total=len(catalog.partitions),
        partitions_read=len(partitions),
        blocks_total=blocks_total,
        blocks_read=sum(len(item.row_groups) for item in slices),
        template=statement.template,
        one_row=statement.one_row,
        notes=_notes(statement, layout),
        seconds=time.perf_counter() - started,
    )


@contextmanager
def result_batches(plan: QueryPlan, *, engine: str = "duckdb") -> Iterator[pa.RecordBatchReader]:
    """The statement's rows over the planned partitions, as Arrow batches read while DuckDB produces them (a one-row
    answer, or one from at most :data:`ONE_PASS_ROWS` records, is computed in one pass and then handed over).

    ``duckdb`` hands DuckDB the candidate files in one scan (it reads only the needed columns, and its zone maps skip
    the same time blocks the index chose, from each row group's time statistics); ``arrow`` reads exactly the indexed blocks
    with pyarrow and runs DuckDB over the Arrow table.
    """
    if engine not in ENGINES:
        raise SqlError(f"unknown query engine {engine!r}", hint=f"use one of {', '.join(ENGINES)}")
    cursor = _DUCKDB.cursor()
    try:
        if engine == "duckdb" and plan.slices:
            text = _over(plan.template, _parquet_relation(plan.slices))
        else:
            cursor.register(RELATION, _read_blocks(plan))
            text = plan.sql
        if plan.one_row or sum(item.rows for item in plan.slices) <= ONE_PASS_ROWS:
            yield cursor.execute(text).to_arrow_table().to_reader(STREAM_BATCH_ROWS)
        else:
            yield cursor.sql(text).to_arrow_reader(STREAM_BATCH_ROWS)
    except duckdb.Error as exc:
        raise SqlError(
            f"the query failed: {exc}", hint="check column names against the NetFlow schema"
        ) from exc
    finally:
        cursor.close()


def execute(plan: QueryPlan, *, engine: str = "duckdb") -> QueryResult:
    """Run the statement over the planned partitions (see :func:`result_batches`) and collect its rows."""
    started = time.perf_counter()
    with result_batches(plan, engine=engine) as reader:
        table = reader.read_all()
    bytes_read = sum(item.bytes for item in plan.slices)
    return QueryResult(table, plan, bytes_read, time.perf_counter() - started)


def run_query(g: GraphTraversalSource, dataset: str, sql: str, *, engine: str = "duckdb") -> QueryResult:
    """Plan and execute a query."""
    return execute(plan_query(g, dataset, sql), engine=engine)


def _engine_literals(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Anonymous) and node.name.upper() == CIDR_FUNCTION:
        arguments = node.expressions
        if len(arguments) != 2 or not isinstance(arguments[1], exp.Literal) or not arguments[1].is_string:
            raise SqlError(
                "in_cidr needs a column and a constant block", hint="write in_cidr(src_ip, '10.0.0.0/8')"
            )
        column, block = arguments
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


def _block_slices(
    catalog: CatalogSnapshot, partitions: list[Partition], boxes: list[Box], columns: list[str]
) -> tuple[list[FileSlice], int]:
    """Per candidate file, the blocks whose time range meets the time interval of some box."""
    windows = [box.get(TIME_COLUMN) for box in boxes]
    slices, total = [], 0
    for partition in partitions:
        index = catalog.index(partition.path)
        blocks = index.blocks
        total += len(blocks)
        keep = [
            block
            for block in blocks
            if any(
                window is None or (block.time_max >= window[0] and block.time_min <= window[1])
                for window in windows
            )
        ]
        if keep:
            size = sum(block.bytes_of(columns) for block in keep)
            rows = sum(block.rows for block in keep)
            slices.append(
                FileSlice(partition.path, [block.row_group for block in keep], size, index.schema, rows)
            )
    return slices, total


def _parquet_relation(slices: list[FileSlice]) -> str:
    """DuckDB's read_parquet over the files, as the record schema.

    Files written by this platform's Arrow path are read as they are. When some file has other physical types or
    column order (e.g. written by Spark), columns are matched by name and cast to the record types.
    """
    files = ", ".join("'" + str(item.path).replace("'", "''") + "'" for item in slices)
    if all(item.schema == CANONICAL_SCHEMA for item in slices):
        return f"read_parquet([{files}], hive_partitioning = false)"
    columns = ", ".join(
        f"CAST({name} AS {DUCKDB_TYPES[SCHEMA.field(name).type]}) AS {name}" for name in COLUMNS
    )
    return f"(SELECT {columns} FROM read_parquet([{files}], hive_partitioning = false, union_by_name = true))"


def _read_blocks(plan: QueryPlan) -> pa.Table:
    """The planned blocks' columns as one Arrow table (record types, whoever wrote the files)."""
    expected = pa.schema([SCHEMA.field(name) for name in plan.columns])

    def read(item: FileSlice) -> pa.Table:
        table = pq.ParquetFile(item.path).read_row_groups(item.row_groups, columns=plan.columns)
        return table if table.schema == expected else table.cast(expected)  # e.g. Spark's types

    with ThreadPoolExecutor(READ_THREADS) as pool:
        tables = list(pool.map(read, plan.slices))
    return pa.concat_tables(tables) if tables else expected.empty_table()


def _columns(select: exp.Select) -> list[str]:
    """Record columns the statement needs (all of them for ``*``; one for ``count(*)``)."""
    if any(not isinstance(star.parent, exp.Count) for star in select.find_all(exp.Star)):
        return list(COLUMNS)
    used = {column.name for column in select.find_all(exp.Column) if column.name in COLUMNS}
    return [name for name in COLUMNS if name in used] or [TIME_COLUMN]


def _notes(statement: Statement, layout: PartitionLayout) -> list[str]:
    other = sorted(statement.filtered - {TIME_COLUMN, *layout.attributes})
    notes = []
    if other:
        verb = "is not a clustering attribute" if len(other) == 1 else "are not clustering attributes"
        notes.append(
            f"{', '.join(other)} {verb} (clustered on {', '.join(layout.attributes)}): "
            "the answer is complete, but fewer partitions could be skipped"
        )
    unusable = sorted(statement.rectangles.unused - set(other))
    if unusable:
        notes.append(
            f"conditions on {', '.join(unusable)} are not simple ranges and were not used for pruning"
        )
    return notes


def format_result(result: QueryResult, *, explain: bool = False, max_rows: int = 50) -> str:
    """The rows as text (addresses dotted), a cost line, notes, and with ``explain`` the boxes."""
    first = result.table.slice(0, max_rows)
    return _format(first, result.table.num_rows, result.plan, result.seconds, result.bytes_read, explain)


def format_streamed(
    plan: QueryPlan,
    *,
    engine: str = "duckdb",
    explain: bool = False,
    max_rows: int = 50,
    batches: AbstractContextManager[pa.RecordBatchReader] | None = None,
) -> str:
    """Like :func:`format_result`, reading the rows as a stream: the first ``max_rows`` are kept, the rest counted.

    ``batches`` is another engine's stream of the plan's rows (``spark_query.spark_batches``) used instead of
    :func:`result_batches` with ``engine``.
    """
    started = time.perf_counter()
    kept: list[pa.RecordBatch] = []
    total = 0
    with batches or result_batches(plan, engine=engine) as reader:
        for batch in reader:
            if total < max_rows:
                kept.append(batch.slice(0, max_rows - total))
            total += batch.num_rows
        first = pa.Table.from_batches(kept, schema=reader.schema)
    bytes_read = sum(item.bytes for item in plan.slices)
    return _format(first, total, plan, time.perf_counter() - started, bytes_read, explain)


def _format(
    first: pa.Table, total: int, plan: QueryPlan, seconds: float, bytes_read: int, explain: bool
) -> str:
    names = first.column_names
    rows = [[_cell(name, value) for name, value in zip(names, row.values())] for row in first.to_pylist()]
    widths = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(names)]
    lines = ["  ".join(name.ljust(width) for name, width in zip(names, widths))]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in rows]
    if total > len(rows):
        lines.append(f"... {total - len(rows)} more rows")
    lines.append(
        f"{total} rows; planned in {plan.seconds * 1000:.1f} ms, ran in {seconds * 1000:.1f} ms; read "
        f"{plan.partitions_read}/{plan.partitions_total} partitions, {plan.blocks_read}/{plan.blocks_total} blocks, "
        f"{bytes_read:,} bytes"
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
