"""`lineage graph …`: schema, serving, export and import of the lineage graph."""

from __future__ import annotations

from datetime import datetime

import click

from lineage_platform.cli import params as p
from lineage_platform.cli.graph_io_commands import export as export_graph
from lineage_platform.cli.graph_io_commands import import_ as import_graph
from lineage_platform.cli.serve_commands import serve


@click.group()
def graph() -> None:
    """Create, serve, export and import the lineage graph."""


@graph.command()
@p.graph_url
@click.option("--print-janusgraph", is_flag=True, help="Print the JanusGraph management script and exit.")
def init(graph_url: str | None, print_janusgraph: bool) -> None:
    """Apply the graph schema (labels, keys, unique constraints, indexes) to the graph."""
    if print_janusgraph:
        from graph_schema import load_schema
        from graph_schema.janusgraph import janusgraph_script

        click.echo(janusgraph_script(load_schema()))
        return
    from lineage_platform.graph.schema import apply_schema

    report = apply_schema(graph_url)
    click.echo(
        f"schema v{report.version} applied to {report.url}: {report.vertex_labels} vertex labels, "
        f"{report.edge_labels} edge labels, {report.unique_constraints} unique constraints, "
        f"{report.indexed_keys} indexed keys"
    )
    if report.server_reply:
        click.echo(f"server: {report.server_reply}")


@graph.command("compact-runs")
@p.as_of
@p.graph_url
@p.keep_days
@p.keep_day_rollups
def compact_runs(
    as_of: datetime | None, graph_url: str | None, keep_days: int, keep_day_rollups: int | None
) -> None:
    """Roll up runs older than --keep-days into one vertex per process and day (count, first/last start, statuses),
    and day roll-ups older than --keep-day-rollups into one per process and month."""
    from lineage_platform.graph import connect
    from lineage_platform.graph.run_history import compact_runs as compact

    summary = compact(
        connect(graph_url),
        keep_days,
        keep_day_rollups=keep_day_rollups,
        as_of=as_of.date() if as_of else None,
    )
    click.echo("\n".join(f"{name}: {value}" for name, value in summary.rows()))


graph.add_command(serve)
graph.add_command(export_graph)
graph.add_command(import_graph)
