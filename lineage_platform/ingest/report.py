"""Showing a bulk load to a person: a rich progress display while it runs and a table of counts at the end."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from lineage_platform.ingest.bulk_load import LoadSummary


class RichLoadProgress:
    """A :class:`~lineage_platform.ingest.bulk_load.LoadProgress` drawn with rich; use it as a context manager."""

    def __init__(self, console: Console | None = None) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            transient=False,
        )
        self._task: int | None = None

    def __enter__(self) -> RichLoadProgress:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._progress.stop()

    def phase(self, name: str, total: int | None = None) -> None:
        """Show the previous phase as finished and start a line for ``name``."""
        if self._task is not None:
            finished = self._progress.tasks[-1]
            steps = finished.total or finished.completed or 1
            self._progress.update(self._task, total=steps, completed=steps)
        self._task = self._progress.add_task(name, total=total)

    def advance(self, steps: int = 1) -> None:
        """Move the current phase forward."""
        if self._task is not None:
            self._progress.advance(self._task, steps)


def summary_table(summary: LoadSummary) -> Table:
    """The load's counts as a two-column table."""
    table = Table(title="ingest summary", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    for name, value in summary.rows():
        table.add_row(name, value)
    return table
