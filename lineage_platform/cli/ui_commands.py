"""`lineage ui`: the lineage explorer in the browser, served over the graph."""

from __future__ import annotations

import click

from lineage_platform.cli import params as p


@click.command()
@p.graph_url
@p.option(
    "--host",
    command="ui",
    type=p.Host(),
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (the explorer has no login: keep it on loopback or behind a proxy).",
)
@p.option(
    "--port",
    command="ui",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
def ui(graph_url: str | None, host: str, port: int) -> None:
    """Explore lineage in the browser: search, a column-level canvas, side panel and impact, until Ctrl-C."""
    from lineage_platform.config import load_settings
    from lineage_platform.graph import connect
    from lineage_platform.ui.server import serve

    g = connect(graph_url)

    def announce(url: str) -> None:
        click.echo(
            f"lineage ui: open {url} (graph {graph_url or load_settings().graph_url}); Ctrl-C stops", err=True
        )

    serve(g, host, port, announce)
    click.echo("lineage ui: stopped", err=True)
