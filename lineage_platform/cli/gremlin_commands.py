"""`lineage gremlin`: the Gremlin console, or a Gremlin script run non-interactively."""

from __future__ import annotations

from pathlib import Path

import click

from lineage_platform.cli import params


@click.command()
@params.graph_url
@click.argument("script_file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def gremlin(graph_url: str | None, script_file: Path | None) -> None:
    """Gremlin console on the lineage graph; with SCRIPT_FILE, run the script and exit (1 if a statement fails).

    A ws:// graph is reached with GraphBinary 1.0, which `lineage graph serve`, JanusGraph Server and Gremlin
    Server all serve (`lineage graph serve` also serves GraphSON 3.0 and 2.0 to other clients)."""
    from lineage_platform.cli.output import console
    from lineage_platform.console import run_console, run_script

    out, err = console(), console(stderr=True)
    if script_file is None:
        run_console(graph_url, out=out, err=err)
    elif not run_script(script_file, graph_url, out, err):
        raise click.ClickException(f"{script_file} stopped at a failing statement")
