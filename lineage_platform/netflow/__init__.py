"""NetFlow partition catalog: clustering on the workload's attributes, fast ingest, hyper-rectangle pruning.

See README.md in this package for the data flow. The entry points a caller needs are re-exported here.
"""

from lineage_platform.netflow.catalog import add_partitions, all_partitions, load_layout, register_dataset
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.ingest import IngestSummary, ingest_batches
from lineage_platform.netflow.layout import PartitionLayout
from lineage_platform.netflow.query import QueryResult, engine_sql, plan_query, run_query
from lineage_platform.netflow.readers import Rejects, read_csv, read_parquet, read_records, write_csv
from lineage_platform.netflow.records import SCHEMA

__all__ = [
    "SCHEMA",
    "FlowProfile",
    "IngestSummary",
    "PartitionLayout",
    "QueryResult",
    "Rejects",
    "add_partitions",
    "all_partitions",
    "engine_sql",
    "generate",
    "ingest_batches",
    "load_layout",
    "plan_query",
    "read_csv",
    "read_parquet",
    "read_records",
    "register_dataset",
    "run_query",
    "write_csv",
]
