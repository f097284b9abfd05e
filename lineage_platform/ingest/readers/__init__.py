"""Log readers, one module per format, all of one shape: ``read(lines, path) -> Iterator[QueryRecord | BadRecord]``.

Readers are plain functions over an iterable of lines, so they run the same in a Python loop and inside
Spark executors. :func:`read_text` picks the reader for a whole file's text, detecting the format when
asked to (``auto``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from lineage_platform.errors import IngestError
from lineage_platform.ingest.readers import hive_log, jsonl, spark_events
from lineage_platform.ingest.records import BadRecord, QueryRecord

Reader = Callable[[Iterable[str], str], Iterator[QueryRecord | BadRecord]]
READERS: dict[str, Reader] = {
    "jsonl": jsonl.read,
    "spark-events": spark_events.read,
    "hive-log": hive_log.read,
}
AUTO = "auto"
FORMATS = (*READERS, AUTO)


def detect_format(lines: Iterable[str], probe: int = 10) -> str | None:
    """The format of a log from its first ``probe`` non-blank lines, or None when it looks like none of them."""
    probed = 0
    for line in lines:
        text = line.strip()
        if not text:
            continue
        if text.startswith("{") and text.endswith("}"):
            return "spark-events" if '"Event"' in text[:200] else "jsonl"
        if hive_log.LOG_LINE.match(text):
            return "hive-log"
        probed += 1
        if probed == probe:
            break
    return None


def reader_for(fmt: str) -> Reader:
    """The reader of a named format."""
    try:
        return READERS[fmt]
    except KeyError:
        raise IngestError(f"unknown log format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}") from None


def split_lines(text: str) -> list[str]:
    r"""The lines of a log's text, split on ``\n`` only (a trailing ``\r`` is dropped): other characters
    ``str.splitlines`` breaks on (``\x0b``, ``\x1c``, ``\u2028`` ...) stay inside their line, so line
    numbers match what editors and ``wc -l`` count.

    >>> split_lines("a\r\nb\u2028c\n")
    ['a', 'b\u2028c']
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_text(text: str, path: str, fmt: str = AUTO) -> Iterator[QueryRecord | BadRecord]:
    """Records of one log file's whole text; with ``auto`` an unrecognisable file is one BadRecord."""
    lines = split_lines(text)
    if fmt == AUTO:
        detected = detect_format(lines)
        if detected is None:
            head = next((line for line in lines if line.strip()), "")
            yield BadRecord(
                path, 1, head[:500], f"not a known log format (expected one of: {', '.join(READERS)})"
            )
            return
        fmt = detected
    yield from reader_for(fmt)(lines, path)
