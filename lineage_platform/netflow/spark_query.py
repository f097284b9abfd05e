"""Scale-out queries: the driver plans from the catalog, Spark executors scan only the chosen partition files.

    driver: plan_query (catalog snapshot, boxes, candidate files) ─► Spark reads exactly those files
        ─► executors filter (Parquet row-group statistics skip blocks by time, as DuckDB's zone maps do), aggregate
        ─► rows come back one Spark partition at a time (toLocalIterator) as Arrow batches

The statement is the planner's DuckDB text (addresses already integers, ``in_cidr`` already BETWEEN) transpiled to
Spark SQL by sqlglot, so both engines run the same predicate over the same candidate files and answer alike.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pyarrow as pa
import sqlglot

from lineage_platform.errors import SqlError
from lineage_platform.netflow.query import RELATION_SLOT, STREAM_BATCH_ROWS, FileSlice, QueryPlan
from lineage_platform.netflow.records import COLUMNS, SCHEMA

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Spark has no unsigned integers: each record type widened to the signed type that holds all its values.
SPARK_TYPES = {
    pa.timestamp("ms"): "timestamp_ntz",  # record times are UTC wall times without a zone, as in DuckDB
    pa.uint8(): "smallint",
    pa.uint16(): "int",
    pa.uint32(): "bigint",
    pa.uint64(): "decimal(20,0)",
}


@contextmanager
def spark_batches(spark: SparkSession, plan: QueryPlan) -> Iterator[pa.RecordBatchReader]:
    """The statement's rows over the planned files, computed by Spark and streamed back as Arrow batches."""
    from pyspark.errors import PySparkException

    spark.conf.set(
        "spark.sql.session.timeZone", "UTC"
    )  # literals like '2026-01-01 01:00:00' are UTC, as in DuckDB
    view = f"netflow_{uuid.uuid4().hex[:12]}"
    try:
        _records(spark, plan.slices).createOrReplaceTempView(view)
        frame = spark.sql(spark_sql(plan.template.replace(RELATION_SLOT, view, 1)))
        from pyspark.sql.pandas.types import to_arrow_schema

        schema = to_arrow_schema(frame.schema, timezone="UTC")
        yield pa.RecordBatchReader.from_batches(schema, _batches(frame, schema))
    except PySparkException as exc:
        raise SqlError(
            f"the query failed on Spark: {str(exc).splitlines()[0]}",
            hint="check column names against the NetFlow schema",
        ) from exc
    finally:
        spark.catalog.dropTempView(view)


def spark_sql(duckdb_sql: str) -> str:
    """A statement in the planner's DuckDB dialect, as Spark SQL."""
    return sqlglot.transpile(duckdb_sql, read="duckdb", write="spark")[0]


def _records(spark: SparkSession, slices: list[FileSlice]) -> DataFrame:
    """The chosen files as one DataFrame of the record columns (files of different writers read apart, then unioned)."""
    from pyspark.sql import functions as F

    columns = [F.col(name).cast(SPARK_TYPES[SCHEMA.field(name).type]).alias(name) for name in COLUMNS]
    groups: dict[str, list[str]] = defaultdict(list)
    for item in slices:
        groups[item.schema].append(str(item.path))
    frames = [spark.read.parquet(*paths).select(*columns) for paths in groups.values()]
    if not frames:
        ddl = ", ".join(f"{name} {SPARK_TYPES[SCHEMA.field(name).type]}" for name in COLUMNS)
        return spark.createDataFrame([], ddl)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def _batches(frame: DataFrame, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Rows as they arrive from the executors (one Spark partition at a time), in Arrow batches."""
    rows: list[tuple] = []
    for row in frame.toLocalIterator(prefetchPartitions=True):
        rows.append(tuple(row))
        if len(rows) == STREAM_BATCH_ROWS:
            yield _batch(rows, schema)
            rows = []
    if rows:
        yield _batch(rows, schema)


def _batch(rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
    columns = list(zip(*rows))
    return pa.RecordBatch.from_arrays(
        [pa.array(column, type=field.type) for column, field in zip(columns, schema)], schema=schema
    )
