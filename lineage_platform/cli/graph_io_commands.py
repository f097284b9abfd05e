"""`lineage graph export` / `lineage graph import`: the graph as GraphSON 3.0, one vertex per line.

The commands are attached to the `graph` group in graph_commands.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from lineage_platform.cli import params as p
from lineage_platform.cli.output import console
from lineage_platform.graph.graphson import IdStrategy, ProgressCallback


@contextmanager
def _progress_bars() -> Iterator[ProgressCallback]:
    """A rich progress display with one bar per phase, fed by the library's progress callback."""
    tasks: dict[str, TaskID] = {}
    with Progress(
        TextColumn("{task.description:<9}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TimeElapsedColumn(),
        console=console(stderr=True),
    ) as progress:

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = progress.add_task(phase, total=total)
            progress.update(tasks[phase], completed=done, total=total)

        yield update


@click.command("export")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@p.graph_url
def export(file: Path, graph_url: str | None) -> None:
    """Write the whole graph to FILE as GraphSON 3.0 (one vertex per line, as TinkerPop's io() reads)."""
    from lineage_platform.graph.connect import connect
    from lineage_platform.graph.graphson import export_graph

    with _progress_bars() as progress:
        summary = export_graph(connect(graph_url), file, progress=progress)
    click.echo(
        f"exported {summary.vertices} vertices and {summary.edges} edges to {file} in {summary.seconds:.1f}s"
    )


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@p.graph_url
@p.batch_size
@p.option(
    "--id-strategy",
    type=click.Choice([s.value for s in IdStrategy]),
    default=None,
    help="keep: write the file's ids (default for embedded graphs); generate: let the graph pick ids "
    "(default for ws:// servers such as JanusGraph).",
)
@p.option(
    "--skip-bad",
    is_flag=True,
    help="Keep unreadable or rejected lines aside in FILE.bad.jsonl (line, reason, text) and go on.",
)
@p.option(
    "--any-schema",
    is_flag=True,
    help="Take labels and property types the lineage schema does not declare (e.g. TinkerPop sample graphs).",
)
def import_(
    file: Path,
    graph_url: str | None,
    batch_size: int,
    id_strategy: str | None,
    skip_bad: bool,
    any_schema: bool,
) -> None:
    """Load a GraphSON 3.0 file (one vertex per line) into the graph; elements already there are kept, so running
    it again after a kill or after fixing bad lines completes the graph."""
    from graph_schema import load_schema
    from lineage_platform.graph.connect import backend_facts, connect
    from lineage_platform.graph.graphson import import_graph

    g = connect(graph_url)
    with _progress_bars() as progress:
        summary = import_graph(
            g,
            file,
            batch_size=batch_size,
            id_strategy=id_strategy or backend_facts(g).id_strategy,
            bad_lines_file=file.with_name(file.name + ".bad.jsonl") if skip_bad else None,
            progress=progress,
            schema=None if any_schema else load_schema(),
        )
    click.echo(
        f"imported {summary.vertices} vertices and {summary.edges} edges from {file} in {summary.seconds:.1f}s"
        + (f"; {summary.skipped} bad lines kept in {summary.bad_lines_file}" if summary.skipped else "")
    )
