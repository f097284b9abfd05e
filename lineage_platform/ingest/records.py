"""The two things a log reader yields: a query that ran, or a piece of input it could not read."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime

from lineage_platform.model import RunInfo

SUCCEEDED = "SUCCEEDED"
FAILED = "FAILED"
RUNNING = "RUNNING"  # a run that started and has not ended (OpenLineage START/RUNNING)
ABORTED = "ABORTED"  # a run stopped before it ended (OpenLineage ABORT)
_STATUS_WORDS = {
    SUCCEEDED: ("succeeded", "success", "successful", "finished", "ok", "completed", "done"),
    FAILED: ("failed", "failure", "error", "killed", "cancelled", "canceled", "aborted"),
}
STATUSES = {word: status for status, words in _STATUS_WORDS.items() for word in words}


@dataclass(frozen=True)
class QueryRecord(RunInfo):
    """One query as a log reports it: the provenance of the run (who, when, where, why) and its SQL text."""

    sql: str = field(kw_only=True)
    source: str = field(kw_only=True)

    def to_dict(self) -> dict[str, str | None]:
        """The record as a plain dict (the JSONL query-log layout plus ``source``)."""
        return asdict(self)

    def run_info(self) -> RunInfo:
        """The provenance of this run, as the graph stores it."""
        return RunInfo(**{run_field.name: getattr(self, run_field.name) for run_field in fields(RunInfo)})


@dataclass(frozen=True)
class BadRecord:
    """Input a reader could not turn into a query, kept aside with the reason instead of being dropped."""

    source: str
    line: int
    raw: str
    reason: str

    def to_dict(self) -> dict[str, str | int]:
        """The record as a plain dict, the layout of the side file."""
        return asdict(self)


def source_of(path: str, line: int) -> str:
    """The ``file:line`` label a record carries back to where it came from."""
    return f"{path}:{line}"


def status_of(value: object) -> str | None:
    """SUCCEEDED or FAILED for the status words logs use (``success``, ``ERROR``, ``killed`` ...), else None."""
    return STATUSES.get(str(value).strip().lower())


def iso_time(moment: datetime) -> str:
    """ISO-8601 in UTC with milliseconds, the one timestamp spelling every reader produces."""
    utc = moment.astimezone(UTC)
    return f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def iso_from_millis(millis: float) -> str:
    """:func:`iso_time` of a Unix time in milliseconds."""
    return iso_time(datetime.fromtimestamp(millis / 1000, tz=UTC))


def iso_from_value(value: object) -> str:
    """:func:`iso_time` of a log's time value: Unix milliseconds (int or float) or ISO-8601 text (UTC when it
    names no zone). Raises ValueError saying what is wrong with anything else (booleans, NaN, infinities,
    years past 9999, text that is no time), so no such value is ever stored as a run time.

    >>> iso_from_value(1767225600000), iso_from_value("2026-01-01 08:00:00+08:00")
    ('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"expected Unix milliseconds or ISO-8601 text, found {type(value).__name__}")
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
            return iso_time(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
        except (ValueError, OverflowError):
            raise ValueError(f"{value[:40]!r} is not an ISO-8601 time in the years 1-9999") from None
    if not math.isfinite(value):
        raise ValueError(f"{value} is not a time")
    try:
        return iso_from_millis(value)
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"{value} milliseconds is outside the years 1-9999") from None
