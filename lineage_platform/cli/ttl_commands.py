"""`lineage ttl advise TABLE`: how long each column's partitions must be kept."""

from __future__ import annotations

import json

import click

from lineage_platform.cli import params as p


@click.group()
def ttl() -> None:
    """Partition TTL advice from how far back downstream jobs read."""


@ttl.command()
@click.argument("table")
@p.option(
    "--margin",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Days added to the longest read range.",
)
@p.option(
    "--partition-column",
    "partition_columns",
    multiple=True,
    help="Partition column names (repeatable; in the env var, separated by spaces).",
)
@p.output_format("ttl advise", ["table", "json"], "table", "Output.")
@p.graph_url
def advise(
    table: str, margin: int, partition_columns: tuple[str, ...], output_format: str, graph_url
) -> None:
    """Per-column TTL advice for TABLE with the jobs and filters it rests on."""
    from rich.table import Table

    from lineage_platform.cli.output import console as make_console
    from lineage_platform.graph import connect
    from lineage_platform.ttl import PARTITION_COLUMNS
    from lineage_platform.ttl import advise as run_advise

    advice = run_advise(
        connect(graph_url),
        table,
        margin_days=margin,
        partition_columns=frozenset(partition_columns) or PARTITION_COLUMNS,
    )
    if output_format == "json":
        click.echo(json.dumps(advice.to_dict(), indent=2))
        return
    view = Table(title=f"TTL advice for {advice.table} (margin {margin} d)")
    for name in ("column", "reads back", "advised TTL", "evidence"):
        view.add_column(name)
    for column in advice.columns:
        evidence = (
            "; ".join(f"{', '.join(u.jobs) or u.process}: {u.predicate}" for u in column.uses) or "no readers"
        )
        reach = "unused" if column.unused else _days(column.reads_back_days)
        advised = "-" if column.unused else _days(column.recommended_ttl_days)
        view.add_row(column.column, reach, column.no_advice_reason or advised, evidence)
    console = make_console()
    console.print(view)
    console.print(
        f"table: {advice.no_advice_reason or f'keep {advice.recommended_ttl_days} d'}", highlight=False
    )
    if advice.savable_bytes is not None:
        console.print(
            f"expiring beyond that frees {advice.savable_bytes / 2**30:.2f} GiB of {advice.retention_days} days kept"
        )


def _days(days: int | None) -> str:
    return "unbounded" if days is None else f"{days} d"
