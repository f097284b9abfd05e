"""The demo warehouse written without Spark: the sample warehouse's jobs, each run twice, through the product's
SQL extractor and writer, then its PII/APP labels declared and propagated as `lineage demo` does."""

from __future__ import annotations

from datetime import date, timedelta

from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.demo import sample_declarations
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.ingest.sample_warehouse import BIZDATE, build_warehouse
from lineage_platform.labels import declare, propagate
from lineage_platform.labels.store import vertex_ids
from lineage_platform.model import RunInfo
from lineage_platform.sql import extract_lineage

FIRST_DAY = date(2024, 6, 1)


def write_demo_warehouse(g: GraphTraversalSource, tables: int = 40, seed: int = 42) -> dict:
    """Write the warehouse's lineage with two runs per job and its labels; returns its catalog."""
    warehouse = build_warehouse(tables, seed)
    catalog = warehouse.catalog()
    writer = LineageWriter(g)
    # as the scheduler submits them: the business date a Hive variable, so TTL advice sees the read windows
    sql = {job.name: job.template.replace(BIZDATE, "${bizdate}") for job in warehouse.jobs}
    for day in range(2):  # the same statements run on two days: one process each, two runs
        bizdate = (FIRST_DAY + timedelta(days=day)).isoformat()
        for job in warehouse.jobs:
            run = RunInfo(
                status="SUCCESS",
                user=f"etl_{job.layer}",
                start_time=f"{bizdate}T02:{len(job.name) % 60:02d}:00",
                host="gateway-1",
                cluster="hive-prod",
                engine="hive",
                job=job.name,
            )
            writer.write(extract_lineage(sql[job.name], schema=catalog), run)
    known = vertex_ids(g, (d.name for d in sample_declarations(catalog)))
    declare(g, [d for d in sample_declarations(catalog) if d.name in known], declared_by="demo")
    propagate(g)
    return catalog


if __name__ == "__main__":  # python -m tests.ui.warehouse STORE: write the warehouse into an embedded store
    import sys

    from lineage_platform.graph import connect

    write_demo_warehouse(connect(f"embedded:{sys.argv[1]}"))
