"""The PySpark ingest job for inputs too big for one machine.

Spark computes each record's partition with native column expressions (time bucket arithmetic and nested CASE
expressions of the layout's k-d tree: no Python UDF), shuffles by partition, sorts each partition by time and writes zstd
Parquet with small row groups (the time-pruned blocks). The driver then moves each written file to its partition
directory, builds its block index from the footer and catalogues it, exactly like the Arrow path.
"""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.errors import IngestError
from lineage_platform.netflow.blocks import PartitionFile, describe_file, index_blocks
from lineage_platform.netflow.catalog import add_partitions, find_dataset, register_dataset
from lineage_platform.netflow.ingest import partition_directory
from lineage_platform.netflow.layout import Node, PartitionLayout
from lineage_platform.netflow.maintenance import DEFAULT_REQUEST, LayoutRequest
from lineage_platform.netflow.records import COLUMNS, TIME_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

BLOCK_BYTES = 1 << 20  # Parquet row-group size Spark aims for: small enough for time pruning
_SPARK_DIRECTORY = re.compile(r"bucket=(-?\d+)/cell=(\d+)$")


def spark_ingest(
    g: GraphTraversalSource,
    spark: SparkSession,
    dataset: str,
    root: Path,
    inputs: list[Path],
    *,
    request: LayoutRequest = DEFAULT_REQUEST,
) -> list[PartitionFile]:
    """Partition Parquet record files with Spark into ``root`` and catalogue the result."""
    if not inputs:
        raise IngestError("no input files", hint="give one or more Parquet files of NetFlow records")
    known = find_dataset(g, dataset)
    if known is None:
        layout = request.layout(_sample(inputs, request.sample_rows))
        register_dataset(g, dataset, layout, root)
    else:
        layout, root = known
    frame = spark.read.parquet(*[str(path) for path in inputs]).select(*COLUMNS)
    staging = root / f"_spark-{uuid.uuid4().hex[:8]}"
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MILLIS")
    (
        _with_partition(frame, layout)
        .repartition("bucket", "cell")
        .sortWithinPartitions("bucket", "cell", TIME_COLUMN)
        .write.partitionBy("bucket", "cell")
        .option("compression", "zstd")
        .option("parquet.block.size", BLOCK_BYTES)
        .parquet(str(staging))
    )
    files = _adopt(staging, root, layout)
    add_partitions(g, dataset, root, files)
    return files


def _with_partition(frame: DataFrame, layout: PartitionLayout) -> DataFrame:
    from pyspark.sql import functions as F

    millis = F.unix_millis(F.col(TIME_COLUMN))
    return frame.withColumn("bucket", millis - F.pmod(millis, F.lit(layout.bucket_ms))).withColumn(
        "cell", _cell_expression(layout.tree)
    )


def _cell_expression(node: Node) -> Column:
    """The layout's k-d tree as nested CASE expressions (one comparison per level, as in ``layout.assign``)."""
    from pyspark.sql import functions as F

    if isinstance(node, int):
        return F.lit(node)
    name, cut, left, right = node
    return F.when(F.col(name) >= F.lit(cut), _cell_expression(right)).otherwise(_cell_expression(left))


def _adopt(staging: Path, root: Path, layout: PartitionLayout) -> list[PartitionFile]:
    """Move Spark's output files into partition directories and describe them."""
    files = []
    for written in sorted(staging.rglob("*.parquet")):
        match = _SPARK_DIRECTORY.search(written.parent.as_posix())
        if match is None:
            continue
        bucket, cell = int(match.group(1)), int(match.group(2))
        target = (
            partition_directory(root, bucket, cell) / f"{staging.name.lstrip('_')}-{written.stem}.parquet"
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(written, target)
        index_blocks(target)
        files.append(describe_file(target, bucket, cell, layout.attributes))
    shutil.rmtree(staging, ignore_errors=True)
    return files


def _sample(inputs: list[Path], rows: int) -> pa.Table:
    """The first ``rows`` records of the inputs (the sample the k-d tree and the sizes come from)."""
    tables, taken = [], 0
    for path in inputs:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=min(rows, 65_536), columns=list(COLUMNS)):
            tables.append(pa.Table.from_batches([batch]))
            taken += batch.num_rows
            if taken >= rows:
                return pa.concat_tables(tables)
    return pa.concat_tables(tables) if tables else pa.table({})
