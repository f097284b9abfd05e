"""`lineage export …`: the graph's lineage in formats other catalogs read."""

from __future__ import annotations

import click

from lineage_platform.cli import params as p


@click.group()
def export() -> None:
    """Write the graph's lineage for other tools."""


@export.command()
@p.graph_url
@p.option(
    "--output",
    command="export openlineage",
    type=click.File("w"),
    default="-",
    show_default=True,
    help="JSON-lines file to write (-: standard output).",
)
@p.option(
    "--namespace", default="hive", show_default=True, help="OpenLineage namespace of jobs (and tables)."
)
@p.option(
    "--hive-metastore",
    default=None,
    metavar="HOST:PORT",
    help="Put tables in namespace hive://HOST:PORT, as the OpenLineage naming spec names Hive tables "
    "(default: --namespace).",
)
def openlineage(
    graph_url: str | None, output: click.utils.LazyFile, namespace: str, hive_metastore: str | None
) -> None:
    """Write every process as OpenLineage RunEvents (with columnLineage facets), one JSON document per line."""
    from lineage_platform.export import export_openlineage
    from lineage_platform.graph import connect

    tables = f"hive://{hive_metastore}" if hive_metastore else None
    summary = export_openlineage(connect(graph_url), output, namespace, tables)
    click.echo(f"{summary.events} events for {summary.processes} processes", err=True)
