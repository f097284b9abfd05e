"""The parse budget of one statement: a size and a time past which the bulk load rejects the statement.

sqlglot's work grows faster than linearly with very wide statements (a SELECT of 10k columns takes about
a minute and a half), so one hostile or generated statement could hold a whole load. A statement longer
than ``max_bytes`` (UTF-8) is rejected before parsing; one whose lineage takes longer than ``max_seconds``
is stopped by a ``SIGALRM`` timer and rejected. The timer needs the main thread of its process (where
Spark's Python workers and the CLI run a parse); elsewhere only the size limit applies.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

from lineage_platform.errors import SqlError

DEFAULT_MAX_BYTES = 256 * 1024
DEFAULT_MAX_SECONDS = 10.0
_REPEAT_SECONDS = 0.05  # the timer fires again until the parse gives up, in case a handler swallows it


class ParseBudgetExceeded(SqlError):
    """A statement is larger, or takes longer to parse, than the load allows."""


@dataclass(frozen=True)
class ParseBudget:
    """How large a statement may be and how long its parse may take."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_seconds: float = DEFAULT_MAX_SECONDS

    def check_size(self, sql: str) -> None:
        """Raise ParseBudgetExceeded when ``sql`` is over ``max_bytes``."""
        size = len(sql.encode("utf-8", "surrogatepass"))
        if size > self.max_bytes:
            raise ParseBudgetExceeded(
                f"statement of {size} bytes is over the parse budget of {self.max_bytes} bytes",
                hint="raise --parse-max-bytes to load it",
            )

    @contextmanager
    def timer(self) -> Iterator[None]:
        """Run the body under the time limit; raise ParseBudgetExceeded when it runs over (also when the body
        caught the timer's exception and carried on)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        fired = False

        def expired(signum: int, frame: FrameType | None) -> None:
            nonlocal fired
            fired = True
            raise self._overrun()

        previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, self.max_seconds, _REPEAT_SECONDS)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        if fired:
            raise self._overrun()

    def _overrun(self) -> ParseBudgetExceeded:
        return ParseBudgetExceeded(
            f"parsing took longer than the parse budget of {self.max_seconds:g} s",
            hint="raise --parse-max-seconds to load it",
        )
