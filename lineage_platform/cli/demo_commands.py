"""`lineage demo`: the main job on the embedded default."""

from __future__ import annotations

import click

from lineage_platform.cli import params as p


@click.command()
@p.option(
    "--work-dir",
    command="demo",
    type=click.Path(file_okay=False),
    default=None,
    help="Where logs and state go (default: the work directory's demo/).",
)
@p.graph_url
def demo(work_dir: str | None, graph_url: str | None) -> None:
    """Generate sample job logs, bulk-load them with Spark, propagate labels, trace and advise TTLs."""
    from pathlib import Path

    from lineage_platform.demo import run_demo

    run_demo(Path(work_dir) if work_dir else None, graph_url)
