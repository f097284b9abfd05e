"""Reader of JSONL query logs: one JSON object per line with the query's SQL and the run's provenance.

Fields: ``sql`` (required), ``status`` (SUCCEEDED/FAILED or a synonym such as success/error/killed; missing
means SUCCEEDED), ``user``, ``start_time``, ``end_time`` (ISO-8601 text or Unix milliseconds), ``host``,
``cluster``, ``engine``, ``job``, ``queue``. Other fields are ignored. A time that is no time (a boolean,
NaN, a year past 9999, text such as ``not-a-time``) or JSON nested too deep to read makes the line a
BadRecord with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from lineage_platform.ingest.records import (
    SUCCEEDED,
    BadRecord,
    QueryRecord,
    iso_from_value,
    source_of,
    status_of,
)

_TEXT_FIELDS = ("user", "host", "cluster", "engine", "job", "queue")


def _time(data: dict[str, object], name: str) -> str | None:
    value = data.get(name)
    if value is None or value == "":
        return None
    try:
        return iso_from_value(value)
    except ValueError as exc:
        raise ValueError(f"bad {name}: {exc}") from None


def _text(data: dict[str, object], name: str) -> str | None:
    value = data.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, dict | list):
        raise ValueError(f"bad {name}: expected text, found {type(value).__name__}")
    return str(value)


def _record(line: str, source: str) -> QueryRecord | str:
    """The query on one line, or the reason it is not one."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at column {exc.colno}); the line may be cut short"
    except RecursionError:
        return "JSON nested too deep to read"
    if not isinstance(data, dict):
        return f"expected a JSON object, found {type(data).__name__}"
    sql = data.get("sql")
    if not isinstance(sql, str) or not sql.strip():
        return "no 'sql' text in the record"
    status = status_of(data.get("status", SUCCEEDED))
    if status is None:
        return f"unknown status {data.get('status')!r}; expected SUCCEEDED or FAILED (or a synonym)"
    try:
        start_time, end_time = _time(data, "start_time"), _time(data, "end_time")
        texts = {name: _text(data, name) for name in _TEXT_FIELDS}
    except ValueError as exc:
        return str(exc)
    return QueryRecord(
        sql=sql, status=status, source=source, start_time=start_time, end_time=end_time, **texts
    )


def read(lines: Iterable[str], path: str) -> Iterator[QueryRecord | BadRecord]:
    """Queries of a JSONL query log; blank lines are skipped, unreadable lines come back as BadRecord."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = _record(line, source_of(path, number))
        yield BadRecord(path, number, line, record) if isinstance(record, str) else record
