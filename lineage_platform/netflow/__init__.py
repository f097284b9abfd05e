"""NetFlow partition catalog: clustering on the workload's attributes, fast ingest, hyper-rectangle pruning.

See README.md in this package for the data flow. The entry points a caller needs are re-exported here; the Spark
job lives in :mod:`lineage_platform.netflow.spark_job` so that importing this package never starts a JVM.
"""

from lineage_platform.netflow.catalog import all_partitions, find_dataset, load_layout
from lineage_platform.netflow.generate import FlowProfile, generate, write_records
from lineage_platform.netflow.ingest import IngestSummary, ingest_batches
from lineage_platform.netflow.layout import PartitionLayout
from lineage_platform.netflow.maintenance import (
    LayoutRequest,
    apply_retention,
    ingest,
    ingest_files,
    repartition,
)
from lineage_platform.netflow.query import QueryResult, engine_sql, format_result, plan_query, run_query
from lineage_platform.netflow.readers import Rejects, read_csv, read_parquet, read_records, write_csv
from lineage_platform.netflow.records import SCHEMA
from lineage_platform.netflow.workload import AttributeChoice, choose_attributes

__all__ = [
    "SCHEMA",
    "AttributeChoice",
    "FlowProfile",
    "IngestSummary",
    "LayoutRequest",
    "PartitionLayout",
    "QueryResult",
    "Rejects",
    "all_partitions",
    "apply_retention",
    "choose_attributes",
    "engine_sql",
    "find_dataset",
    "format_result",
    "generate",
    "ingest",
    "ingest_batches",
    "ingest_files",
    "load_layout",
    "plan_query",
    "read_csv",
    "read_parquet",
    "read_records",
    "repartition",
    "run_query",
    "write_csv",
    "write_records",
]
