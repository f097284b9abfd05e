"""Hook event formats the collector understands, one module per format, and the one entry point that tells them
apart: :class:`EventDecoder`.

| format | module | recognised by |
| --- | --- | --- |
| the platform's own event (SQL text + run provenance, or pre-parsed lineage) | ``native.py`` | ``"format": "lineage-platform"`` |
| Apache Atlas HookNotification (``ATLAS_HOOK`` topic, Hive hook) | ``atlas.py`` | ``msgCompressionKind`` / ``message.type`` |
| OpenLineage RunEvent, JobEvent, DatasetEvent | ``openlineage.py`` | ``job`` (with ``run``: a RunEvent), or ``dataset`` + ``eventTime`` |

Every decoder turns one event into :data:`LineageItems` — ``(StatementLineage, RunInfo | None)`` pairs, the
shape ``LineageWriter.write_runs`` takes — or raises :class:`~lineage_platform.errors.IngestError` whose message
is the dead-letter reason.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lineage_platform.errors import IngestError
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.events import atlas, native, openlineage
from lineage_platform.ingest.events.items import LineageItems

if TYPE_CHECKING:
    from lineage_platform.sql.function_rules import FunctionRule

__all__ = ["Decoded", "EventDecoder", "LineageItems"]


@dataclass(frozen=True)
class Decoded:
    """What one Kafka record turned into: lineage to write (possibly none), or nothing yet (``pending``: a part of
    a split Atlas message whose other parts have not arrived)."""

    format: str
    items: LineageItems
    pending: bool = False


class EventDecoder:
    """Decodes Kafka record values of any supported format; keeps the parts of split Atlas messages meanwhile."""

    def __init__(
        self,
        catalog: CatalogIndex | None = None,
        function_rules: Mapping[str, FunctionRule] | None = None,
        *,
        max_bytes: int = atlas.DEFAULT_MAX_BYTES,
    ) -> None:
        """catalog: table schemas for parsing SQL events; function_rules: lineage rules of user UDFs;
        max_bytes: the largest event accepted once decompressed."""
        self.catalog = catalog or CatalogIndex(None)
        self.function_rules = function_rules
        self.atlas_parts = atlas.SplitAssembler(max_bytes)

    def decode(self, value: bytes | None, position: tuple[str, int, int]) -> Decoded:
        """The lineage in the value of the record at ``position`` (topic, partition, offset); the runs' source is
        ``topic:partition:offset``.

        Raises IngestError (the dead-letter reason) for garbage, truncated JSON, JSON nested too deep, compressed
        messages inflating past ``max_bytes``, unknown event types, references to tables or columns the event
        does not describe, and SQL that does not parse.
        """
        event = _json_object(value)
        try:
            return self._decode(event, position)
        except RecursionError as exc:
            raise IngestError("event nested too deep to read", hint="flatten the event") from exc
        except (
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
            OverflowError,
            OSError,
        ) as exc:  # unforeseen shapes
            raise IngestError(
                f"malformed event: {type(exc).__name__}: {exc}",
                hint="check the event against its format's spec",
            ) from exc

    def _decode(self, event: dict[str, Any], position: tuple[str, int, int]) -> Decoded:
        source = ":".join(map(str, position))
        if native.is_native(event):
            return Decoded("native", native.lineage_items(event, source, self.catalog, self.function_rules))
        if atlas.is_atlas(event):
            notification = self.atlas_parts.add(event, position)
            if notification is None:
                return Decoded("atlas", [], pending=True)
            return Decoded("atlas", atlas.lineage_items(notification, source))
        if openlineage.is_openlineage(event):
            return Decoded("openlineage", openlineage.lineage_items(event, source, self.catalog))
        raise IngestError(
            f"unknown event type (keys: {', '.join(sorted(event)[:8]) or 'none'})",
            hint="send a lineage-platform event, an Atlas HookNotification or an OpenLineage event",
        )


def _json_object(value: bytes | None) -> dict[str, Any]:
    if not value:
        raise IngestError("empty record value", hint="the producer sent a record without a payload")
    try:
        event = json.loads(value)
    except UnicodeDecodeError as exc:
        raise IngestError(f"not UTF-8 text: {exc}", hint="events are JSON documents in UTF-8") from exc
    except RecursionError as exc:
        raise IngestError("JSON nested too deep to read", hint="flatten the event") from exc
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            hint="the record is garbage or truncated; fix the producer",
        ) from exc
    if not isinstance(event, dict):
        raise IngestError(f"JSON {type(event).__name__} instead of an object", hint="events are JSON objects")
    return event
