"""Reader of Spark event logs (one JSON event per line, as written by ``spark.eventLog.enabled``).

A query is a ``SparkListenerSQLExecutionStart`` event (``description`` holds the SQL text, ``time`` the
start in Unix milliseconds) joined by ``executionId`` to its ``SparkListenerSQLExecutionEnd`` (``time``,
and ``errorMessage`` when it failed). The run's provenance comes from the application: ``User`` of
``SparkListenerApplicationStart``; ``spark.driver.host`` and ``spark.yarn.queue`` of the Spark properties
and ``yarn.resourcemanager.cluster-id`` of the Hadoop properties in ``SparkListenerEnvironmentUpdate``;
the job is the ``spark.jobGroup.id`` of the execution's jobs (``SparkListenerJobStart`` properties,
``spark.sql.execution.id``), else the application's name.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from lineage_platform.ingest.records import (
    FAILED,
    SUCCEEDED,
    BadRecord,
    QueryRecord,
    iso_from_value,
    source_of,
)

EXECUTION_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
EXECUTION_END = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd"


@dataclass
class _Application:
    """What the application-level events told so far, and the executions still waiting for their end."""

    user: str | None = None
    name: str | None = None
    host: str | None = None
    queue: str | None = None
    cluster: str | None = None
    started: dict[int, tuple[int, str, dict[str, Any]]] = field(
        default_factory=dict
    )  # id -> (line, raw, event)
    job_groups: dict[int, str] = field(default_factory=dict)

    def observe(self, event: dict[str, Any]) -> None:
        """Take the provenance an application-level event carries."""
        kind = event.get("Event")
        if kind == "SparkListenerApplicationStart":
            self.user, self.name = event.get("User"), event.get("App Name")
        elif kind == "SparkListenerEnvironmentUpdate":
            spark = event.get("Spark Properties") or {}
            hadoop = event.get("Hadoop Properties") or {}
            self.host, self.queue = spark.get("spark.driver.host"), spark.get("spark.yarn.queue")
            self.cluster = hadoop.get("yarn.resourcemanager.cluster-id")
            self.name = self.name or spark.get("spark.app.name")
        elif kind == "SparkListenerJobStart":
            properties = event.get("Properties") or {}
            execution, group = properties.get("spark.sql.execution.id"), properties.get("spark.jobGroup.id")
            if execution is not None and group:
                self.job_groups[int(execution)] = group

    def finish(self, end: dict[str, Any], path: str) -> QueryRecord | None:
        """The query an execution-end event completes (None when its start was never seen)."""
        execution = int(end["executionId"])
        if execution not in self.started:
            return None
        number, _, start = self.started.pop(execution)
        return QueryRecord(
            sql=start["description"],
            status=FAILED if end.get("errorMessage") else SUCCEEDED,
            source=source_of(path, number),
            user=self.user,
            start_time=start.get("time"),
            end_time=end.get("time"),
            host=self.host,
            cluster=self.cluster,
            engine="spark",
            job=self.job_groups.get(execution, self.name),
            queue=self.queue,
        )


def _event(line: str) -> dict[str, Any] | str:
    """The event on one line (its ``time``, when given, turned into ISO text), or the reason it is not one."""
    try:
        event = json.loads(line)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at column {exc.colno}); the event log may be cut short"
    except RecursionError:
        return "JSON nested too deep to read"
    if not isinstance(event, dict) or "Event" not in event:
        return "not a Spark listener event (no 'Event' field)"
    if event["Event"] in (EXECUTION_START, EXECUTION_END) and not isinstance(event.get("executionId"), int):
        return f"{event['Event'].rsplit('.', 1)[-1]} without an integer executionId"
    if event["Event"] == EXECUTION_START and not isinstance(event.get("description"), str):
        return "SparkListenerSQLExecutionStart without a 'description' holding the SQL"
    if event["Event"] in (EXECUTION_START, EXECUTION_END) and event.get("time") is not None:
        if not isinstance(event["time"], int | float) or isinstance(event["time"], bool):
            return f"{event['Event'].rsplit('.', 1)[-1]} with a 'time' that is not Unix milliseconds"
        try:
            event["time"] = iso_from_value(event["time"])
        except ValueError as exc:
            return f"{event['Event'].rsplit('.', 1)[-1]} with a bad 'time': {exc}"
    return event


def read(lines: Iterable[str], path: str) -> Iterator[QueryRecord | BadRecord]:
    """Queries of one application's event log, in the order they ended; damaged events come back as BadRecord."""
    app = _Application()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        event = _event(line)
        if isinstance(event, str):
            yield BadRecord(path, number, line, event)
        elif event["Event"] == EXECUTION_START:
            app.started[event["executionId"]] = (number, line, event)
        elif event["Event"] == EXECUTION_END:
            record = app.finish(event, path)
            if record is not None:
                yield record
        else:
            try:
                app.observe(event)
            except (AttributeError, TypeError, ValueError, OverflowError):
                yield BadRecord(
                    path, number, line, f"malformed {event['Event']} event (fields of the wrong type)"
                )
    for number, line, _ in app.started.values():
        yield BadRecord(
            path, number, line, "SQL execution never ended (no SparkListenerSQLExecutionEnd in the log)"
        )
