"""Writing decoded events into the graph, the one way every collector front (Kafka, HTTP) does it.

All events' lineage goes out in one transaction (``LineageWriter.write_together``: one durable commit for the
whole batch, where the graph has transactions; keyed upserts, so writing again changes nothing). If the graph refuses that write for a reason that will not pass, the
transaction is rolled back, each event is written on its own (in a transaction of its own) and the ones still
refused are returned with the reason, for the caller's dead letters. A transient refusal (the store locked or
unreachable) is retried a few times, then raised: the caller must not acknowledge the events.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from lineage_platform.errors import LineageError
from lineage_platform.graph.writer import WriteSummary

if TYPE_CHECKING:
    from lineage_platform.graph.writer import LineageWriter
    from lineage_platform.ingest.events import LineageItems

Origin = TypeVar("Origin")
"""Where an event came from (a Kafka record, an HTTP body's index): handed back with its refusal."""


def apply_events(
    writer: LineageWriter, events: Sequence[tuple[Origin, LineageItems]]
) -> tuple[WriteSummary, list[tuple[Origin, str]]]:
    """Write the events' lineage; returns what was written and the events the graph refused, with the reason."""
    summary = WriteSummary()
    try:
        summary.add(writer.write_together(item for _, items in events for item in items))
        return summary, []
    except LineageError as exc:
        if exc.transient:
            raise
    refused = []
    for origin, items in events:  # find the event(s) the graph refuses; writing the others again is harmless
        try:
            summary.add(writer.write_together(items))
        except LineageError as exc:
            if exc.transient:
                raise
            refused.append((origin, f"graph refused the lineage: {exc}"))
    return summary, refused
