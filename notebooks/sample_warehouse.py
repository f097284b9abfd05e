"""A small lineage graph for the notebooks, built in process in seconds (no Spark).

The notebooks import this from their own folder: sample job logs (the generator behind `lineage ingest sample`)
are read, their distinct lineage statements parsed with `extract_lineage` and written with `LineageWriter`, which
is what `lineage ingest logs` does on Spark.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.ingest.bulk_load import parse_statement
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.readers import read_text
from lineage_platform.ingest.records import FAILED, QueryRecord
from lineage_platform.ingest.sample_logs import generate_sample
from lineage_platform.ingest.statements import prepare_query


@dataclass
class SampleWarehouse:
    """The graph, the table catalog of the sample warehouse and what was loaded."""

    g: GraphTraversalSource
    graph_url: str
    catalog: dict[str, dict[str, dict[str, str]]]
    statements: int
    rejected: int

    def tables(self, layer: str) -> list[str]:
        """Qualified names of the tables of one layer (ods, dwd, dws, ads), sorted."""
        return sorted(f"{layer}.{table}" for table in self.catalog.get(layer, {}))


def build(tables: int = 80, statements: int = 400, graph_url: str = "memory:") -> SampleWarehouse:
    """Generate sample job logs and load their lineage into the graph at ``graph_url``."""
    logs = Path(tempfile.mkdtemp(prefix="lineage-notebook-")) / "logs"
    generate_sample(logs, tables=tables, statements=statements)
    catalog = json.loads((logs / "catalog.json").read_text())
    distinct: dict[str, tuple] = {}
    for path in sorted(p for p in logs.rglob("*") if p.is_file() and p.name != "catalog.json"):
        for record in read_text(path.read_text(encoding="utf-8"), str(path)):
            if isinstance(record, QueryRecord) and record.status != FAILED:
                for statement in prepare_query(
                    record.sql, record.engine, start_time=record.start_time
                ).statements:
                    distinct.setdefault(statement.key, (statement, []))[1].append(record.run_info())
    index = CatalogIndex(catalog)
    parsed = [parse_statement(statement, runs, index) for statement, runs in distinct.values()]
    g = connect(graph_url)
    LineageWriter(g).write_runs(
        [(lineage, run) for item in parsed for lineage in item.lineage for run in item.runs]
    )
    return SampleWarehouse(g, graph_url, catalog, len(parsed), sum(1 for item in parsed if not item.lineage))
