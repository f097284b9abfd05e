"""Where the CLI writes: results on stdout, progress and logs on stderr, at full width when not on a terminal.

rich falls back to 80 columns when its stream is not a terminal, which cuts tables and long paths (``…``) as soon as
the output is piped or captured; a console here takes the width of its content instead (``COLUMNS``, when set,
still wins).
"""

from __future__ import annotations

import os

from rich.console import Console

PIPED_WIDTH = 10_000  # wide enough for any table row or path; rich sizes tables to their content


def console(*, stderr: bool = False) -> Console:
    """A rich Console on stdout (results) or stderr (progress, logs), full width when not a terminal."""
    probe = Console(stderr=stderr)
    if probe.is_terminal or "COLUMNS" in os.environ:
        return probe
    return Console(stderr=stderr, width=PIPED_WIDTH)
