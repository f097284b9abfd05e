"""`lineage trace NAME`: lineage of a table or column, up- and/or downstream."""

from __future__ import annotations

from pathlib import Path

import click

from lineage_platform.cli import params as p

FORMATS = ("tree", "json", "dot", "svg", "html")


@click.command()
@click.argument("name")
@p.one_of_flags(
    "trace",
    "direction",
    [
        ("--up", "up", "Trace upstream sources (default)."),
        ("--down", "down", "Trace downstream destinations."),
        ("--both", "both", "Trace both ways."),
    ],
    default="up",
)
@p.depth
@p.option(
    "--level",
    command="trace",
    type=click.Choice(["table", "column"]),
    default=None,
    help="Level (default: the name's); a table at column level is traced from all its columns.",
)
@p.option("--include-weak", is_flag=True, help="Also follow weak (filter/join/group-by) column edges.")
@p.selects(default=False)
@p.option("--since", default=None, help="Only processes with a run at or after this ISO date.")
@p.option(
    "--fanout",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Neighbours expanded per vertex and hop.",
)
@p.option(
    "--limit",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    help="Maximum vertices in the result.",
)
@p.output_format("trace", list(FORMATS), "tree", "Output.")
@p.option(
    "--output",
    "-o",
    command="trace",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write to this file.",
)
@p.graph_url
def trace(
    name: str,
    direction: str,
    depth: int | None,
    level: str | None,
    include_weak: bool,
    include_selects: bool,
    since: str | None,
    fanout: int,
    limit: int,
    output_format: str,
    output: str | None,
    graph_url: str | None,
) -> None:
    """Trace where a table or column comes from (--up) or goes to (--down)."""
    from lineage_platform.graph import connect
    from lineage_platform.trace import trace as run_trace

    lineage = run_trace(
        connect(graph_url),
        name,
        direction=direction,  # type: ignore[arg-type]
        depth=depth,
        level=level,  # type: ignore[arg-type]
        include_weak=include_weak,
        include_selects=include_selects,
        since=since,
        fanout=fanout,
        limit=limit,
    )
    renderers = {
        "tree": lineage.to_tree,
        "json": lineage.to_json,
        "dot": lineage.to_dot,
        "svg": lineage.to_svg,
    }
    text = {**renderers, "html": lineage.to_html}[output_format]()
    if output:
        Path(output).write_text(text)
        click.echo(f"wrote {len(lineage.nodes)} vertices and {len(lineage.edges)} edges to {output}")
    else:
        click.echo(text)


@click.command()
@click.argument("name")
@p.depth
@p.selects(default=True)
@p.output_format("impact", ["table", "json"], "table", "Output.")
@p.graph_url
def impact(
    name: str, depth: int | None, include_selects: bool, output_format: str, graph_url: str | None
) -> None:
    """Downstream tables and columns of NAME with the jobs and users that would be affected (and, by default,
    the plain SELECTs that read them: kind result)."""
    import json

    from rich.table import Table

    from lineage_platform.cli.output import console
    from lineage_platform.graph import connect
    from lineage_platform.impact import impact as run_impact

    report = run_impact(connect(graph_url), name, depth=depth, include_selects=include_selects)
    if output_format == "json":
        click.echo(json.dumps(report.to_dict(), indent=2, default=str))
        return
    table = Table(title=f"Impact of a change to {report.root}")
    for column in ("hops", "kind", "dataset", "jobs", "users", "last run"):
        table.add_column(column)
    for entry in report.impacted:
        table.add_row(
            str(entry.hops),
            entry.kind,
            entry.qualified_name,
            ", ".join(sorted(entry.jobs)),
            ", ".join(sorted(entry.users)),
            entry.last_run or "",
        )
    console().print(table)
    for note in report.notes:
        click.echo(f"note: {note}")
