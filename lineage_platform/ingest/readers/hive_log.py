"""Reader of HiveServer2 operation logs (the layout is described in ``lineage_platform/ingest/README.md``).

Every log line starts ``yyyy-mm-dd HH:MM:SS,mmm LEVEL [thread] logger: message``. A command starts with
``ql.Driver: Executing command(queryId=ID): user=... host=... cluster=... job=... queue=...``; the lines
after it that are not log lines are its SQL. It ends with ``ql.Driver: Completed executing
command(queryId=ID); Time taken: ...`` or ``ql.Driver: FAILED: command(queryId=ID): <error>``. Other log
lines (other threads, other loggers) may come in between and are ignored, as are non-log lines outside
a command (continuations of other messages, e.g. stack traces). A log line whose time is impossible (month 41)
is a BadRecord.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from lineage_platform.ingest.records import FAILED, SUCCEEDED, BadRecord, QueryRecord, iso_time, source_of

LOG_LINE = re.compile(
    r"^(?P<time>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) +(?P<level>[A-Z]+) +\[(?P<thread>[^\]]*)\] "
    r"(?P<logger>[\w.$]+): (?P<message>.*)$"
)
STARTED = re.compile(r"^Executing command\(queryId=(?P<id>[^)]+)\):(?P<attributes>.*)$")
COMPLETED = re.compile(r"^Completed executing command\(queryId=(?P<id>[^)]+)\)")
FAILED_COMMAND = re.compile(r"^FAILED: command\(queryId=(?P<id>[^)]+)\)")
ATTRIBUTE = re.compile(r"(\w+)=(\S+)")
ATTRIBUTE_NAMES = ("user", "host", "cluster", "job", "queue")


@dataclass
class _Command:
    """A command whose start was seen: where it starts, its attributes and the SQL lines so far."""

    line: int
    header: str
    start_time: str
    attributes: dict[str, str]
    sql: list[str] = field(default_factory=list)


def _time(text: str) -> str:
    return iso_time(datetime.strptime(text, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=UTC))


def _record(command: _Command, status: str, end_time: str, path: str) -> QueryRecord:
    return QueryRecord(
        sql="\n".join(command.sql),
        status=status,
        source=source_of(path, command.line),
        start_time=command.start_time,
        end_time=end_time,
        engine="hive",
        **{name: command.attributes.get(name) for name in ATTRIBUTE_NAMES},
    )


def read(lines: Iterable[str], path: str) -> Iterator[QueryRecord | BadRecord]:
    """Commands of a HiveServer2 log; a command that never completes (a cut log) comes back as BadRecord."""
    open_commands: dict[str, _Command] = {}
    collecting: _Command | None = None  # the command whose SQL lines are being read
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\r\n")
        log = LOG_LINE.match(text)
        if log is None:
            if collecting is not None:
                collecting.sql.append(text)
            continue
        collecting = None
        try:
            moment = _time(log.group("time"))
        except ValueError:
            yield BadRecord(path, number, text, f"log line with an impossible time {log.group('time')!r}")
            continue
        message = log.group("message")
        if started := STARTED.match(message):
            attributes = dict(ATTRIBUTE.findall(started.group("attributes")))
            collecting = _Command(number, text, moment, attributes)
            open_commands[started.group("id")] = collecting
        elif ended := COMPLETED.match(message) or FAILED_COMMAND.match(message):
            command = open_commands.pop(ended.group("id"), None)
            if command is None:
                continue
            status = SUCCEEDED if ended.re is COMPLETED else FAILED
            if not "".join(command.sql).strip():
                yield BadRecord(path, command.line, command.header, "command has no SQL text")
            else:
                yield _record(command, status, moment, path)
    for command in open_commands.values():
        raw = "\n".join([command.header, *command.sql])
        yield BadRecord(
            path, command.line, raw, "command never completed (no 'Completed executing' or 'FAILED' line)"
        )
