"""Print statement results the way Gremlin console users expect, with rich tables for tabular results."""

from __future__ import annotations

from enum import Enum
from typing import Any

from aenum import Enum as AEnum
from gremlin_python.structure.graph import Edge, Path, Property, Vertex, VertexProperty
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from lineage_platform.console.session import StatementResult
from lineage_platform.console.tabular import tabulate


def format_value(value: Any) -> str:
    """Gremlin console notation: ``v[1]``, ``e[7][1-knows->2]``, ``vp[name->marko]``, ``[a, b]``, ``{k: v}``."""
    if isinstance(value, Vertex):
        return f"v[{value.id}]"
    if isinstance(value, Edge):
        return f"e[{value.id}][{value.outV.id}-{value.label}->{value.inV.id}]"
    if isinstance(value, VertexProperty):
        return f"vp[{value.label}->{format_value(value.value)}]"
    if isinstance(value, Property):
        return f"p[{value.key}->{format_value(value.value)}]"
    if isinstance(value, Path):
        return "path[" + ", ".join(format_value(item) for item in value.objects) + "]"
    if isinstance(value, Enum | AEnum):
        return value.name.rstrip("_")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{format_value(k)}: {format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple | set):
        return "[" + ", ".join(format_value(item) for item in value) + "]"
    if value is None:
        return "null"
    return str(value)


def show_result(console: Console, result: StatementResult) -> None:
    """Print one statement's values: a table when tabular, else one ``==>value`` line per value."""
    table = tabulate(result.values)
    if table is None:
        for value in result.values:
            console.print(f"==>{format_value(value)}", markup=False, highlight=False, soft_wrap=True)
        return
    rich_table = RichTable(show_edge=False, header_style="bold")
    for column in table.columns:
        rich_table.add_column(Text(column), overflow="fold")
    for row in table.rows:  # Text: values are shown as they are, never read as rich markup
        rich_table.add_row(*(Text("" if cell is None else format_value(cell)) for cell in row))
    console.print(rich_table)


def show_error(console: Console, error: BaseException) -> None:
    """One red line naming the problem (no traceback)."""
    message = str(error) or type(error).__name__
    console.print(f"Error: {message}", style="red", markup=False, highlight=False, soft_wrap=True)


def show_timing(console: Console, result: StatementResult) -> None:
    """A dim line with the statement's wall-clock time and result count."""
    count = len(result.values)
    console.print(
        f"{count} result{'s' if count != 1 else ''} in {result.elapsed * 1000:.1f} ms",
        style="dim",
        highlight=False,
    )
