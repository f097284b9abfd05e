"""The two things a log reader yields: a query that ran, or a piece of input it could not read."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime

from lineage_platform.model import RunInfo

SUCCEEDED = "SUCCEEDED"
FAILED = "FAILED"
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
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def iso_from_millis(millis: float) -> str:
    """:func:`iso_time` of a Unix time in milliseconds."""
    return iso_time(datetime.fromtimestamp(millis / 1000, tz=UTC))
