"""Reader of JSONL query logs: one JSON object per line with the query's SQL and the run's provenance.

Fields: ``sql`` (required), ``status`` (SUCCEEDED/FAILED or a synonym such as success/error/killed; missing
means SUCCEEDED), ``user``, ``start_time``, ``end_time`` (ISO-8601 text or Unix milliseconds), ``host``,
``cluster``, ``engine``, ``job``, ``queue``. Other fields are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from lineage_platform.ingest.records import (
    SUCCEEDED,
    BadRecord,
    QueryRecord,
    iso_from_millis,
    source_of,
    status_of,
)

_TEXT_FIELDS = ("user", "host", "cluster", "engine", "job", "queue")


def _time(value: object) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return iso_from_millis(value)
    return str(value) if value not in (None, "") else None


def _text(value: object) -> str | None:
    return None if value in (None, "") else str(value)


def _record(line: str, source: str) -> QueryRecord | str:
    """The query on one line, or the reason it is not one."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at column {exc.colno}); the line may be cut short"
    if not isinstance(data, dict):
        return f"expected a JSON object, found {type(data).__name__}"
    sql = data.get("sql")
    if not isinstance(sql, str) or not sql.strip():
        return "no 'sql' text in the record"
    status = status_of(data.get("status", SUCCEEDED))
    if status is None:
        return f"unknown status {data.get('status')!r}; expected SUCCEEDED or FAILED (or a synonym)"
    return QueryRecord(
        sql=sql,
        status=status,
        source=source,
        start_time=_time(data.get("start_time")),
        end_time=_time(data.get("end_time")),
        **{name: _text(data.get(name)) for name in _TEXT_FIELDS},
    )


def read(lines: Iterable[str], path: str) -> Iterator[QueryRecord | BadRecord]:
    """Queries of a JSONL query log; blank lines are skipped, unreadable lines come back as BadRecord."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = _record(line, source_of(path, number))
        yield BadRecord(path, number, line, record) if isinstance(record, str) else record
