"""A Marquez-compatible HTTP front for the collector: ``POST /api/v1/lineage`` with one OpenLineage RunEvent (or
any event the collector reads) as a JSON object, or a batch as a JSON array; ``POST /api/v1/lineage/batch`` (the
OpenLineage API spec's batch path) with a JSON array, answered with the outcome of each event.

The same pipeline as the Kafka collector: ``events.EventDecoder`` decodes each event, ``apply.apply_events``
writes them with keyed upserts (a client sending again changes nothing), and events that cannot be used are kept
in a dead-letter JSON-lines file (``{"time", "reason", "remote", "event"}``, the event as received) and counted.

Answers (JSON bodies): 201 when every event was applied (as Marquez answers); 400 ``{"error", "hint",
"applied", "dead_lettered", "reasons"}`` for a body that is not JSON, not an object or array, or holds events
that were refused (the others are applied); 413 for a body over the size cap; 503 when the graph is locked or
unreachable (nothing was acknowledged: send again). The batch path answers 200 (the spec's answer) instead of 201
and adds ``results``: ``{"index", "status": "applied"}`` or ``{"index", "status": "refused", "reason"}`` per event.
Writes run on one worker thread, one request at a time.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from lineage_platform.errors import ConfigError, IngestError, LineageError
from lineage_platform.ingest.apply import apply_events
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.events import EventDecoder, LineageItems

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gremlin_python.process.graph_traversal import GraphTraversalSource

    from lineage_platform.graph.writer import LineageWriter
    from lineage_platform.sql.function_rules import FunctionRule

LINEAGE_PATH = "/api/v1/lineage"
BATCH_PATH = "/api/v1/lineage/batch"
DEFAULT_DEAD_LETTER_FILE = "lineage-dead-letter.jsonl"
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024


@dataclass
class ReceiverStats:
    """Counts since the receiver started."""

    requests: int = 0
    events: int = 0
    applied: int = 0
    dead_lettered: int = 0
    vertices: int = 0
    edges: int = 0
    runs: int = 0
    reasons: Counter[str] = field(default_factory=Counter)

    def rows(self) -> list[tuple[str, str]]:
        """(name, value) pairs for display."""
        names = ("requests", "events", "applied", "dead_lettered", "vertices", "edges", "runs")
        rows = [(name.replace("_", " "), str(getattr(self, name))) for name in names]
        return rows + [(f"dead letter: {reason}", str(count)) for reason, count in self.reasons.most_common()]


class LineageReceiver:
    """Decodes, writes and dead-letters the events of HTTP requests (see the module docstring)."""

    def __init__(
        self,
        writer: LineageWriter,
        dead_letter_file: Path,
        *,
        schema: dict[str, Any] | None = None,
        function_rules: Mapping[str, FunctionRule] | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.writer = writer
        self.dead_letter_file = dead_letter_file
        self.max_body_bytes = max_body_bytes
        self.decoder = EventDecoder(CatalogIndex(schema), function_rules, max_bytes=max_body_bytes)
        self.stats = ReceiverStats()
        self._sequence = 0
        self._lock = threading.Lock()  # one body at a time: the decoder keeps split Atlas parts
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lineage-http-writer")

    def close(self) -> None:
        """Finish the request in hand and stop the writer thread."""
        self._executor.shutdown(wait=True)

    def app(self) -> web.Application:
        """The aiohttp application serving ``POST /api/v1/lineage`` and ``POST /api/v1/lineage/batch``."""
        app = web.Application(client_max_size=self.max_body_bytes)
        app.router.add_post(LINEAGE_PATH, self._post)
        app.router.add_post(BATCH_PATH, self._post)
        return app

    async def _post(self, request: web.Request) -> web.Response:
        batch = request.path == BATCH_PATH
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _error(
                413,
                f"body larger than {self.max_body_bytes} bytes",
                "send smaller batches or raise the receiver's --max-event-mib",
            )
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self.receive, body, request.remote or "", batch)
        except LineageError as exc:  # transient: the graph is locked or unreachable; nothing was acknowledged
            return _error(503, str(exc), exc.hint or "send the events again later")

    def receive(self, body: bytes, remote: str = "", batch: bool = False) -> web.Response:
        """Handle one request body (blocking): decode, write, dead-letter; the HTTP answer. ``batch``: the body
        must be a JSON array and the answer lists each event's outcome."""
        with self._lock:
            self.stats.requests += 1
            try:
                events = _events(body, batch)
            except IngestError as exc:
                self._dead_letter([(body.decode("utf-8", "replace"), str(exc))], remote)
                return _error(400, str(exc), exc.hint or "send a RunEvent object or an array of them", dead=1)
            decoded: list[tuple[int, LineageItems]] = []
            refused: dict[int, str] = {}
            for index, event in enumerate(events):
                self._sequence += 1
                try:
                    result = self.decoder.decode(json.dumps(event).encode(), ("http", 0, self._sequence))
                except IngestError as exc:
                    refused[index] = str(exc)
                    continue
                decoded.append((index, result.items))
            summary, not_written = apply_events(self.writer, decoded)
            refused.update(not_written)
            dead = [(events[index], f"event {index}: {reason}") for index, reason in sorted(refused.items())]
            self._dead_letter(dead, remote)
            applied = len(events) - len(refused)
            self.stats.events += len(events)
            self.stats.applied += applied
            self.stats.vertices += summary.vertices
            self.stats.edges += summary.edges
            self.stats.runs += summary.runs
            results = {"results": _results(len(events), refused)} if batch else {}
            if dead:
                return _error(
                    400,
                    f"{len(dead)} of {len(events)} events refused; the others were applied",
                    f"the refused events are kept in {self.dead_letter_file} with the reason; fix and resend them",
                    applied=applied,
                    dead=len(dead),
                    reasons=[reason for _, reason in dead],
                    **results,
                )
            return web.json_response({"applied": applied, **results}, status=200 if batch else 201)

    def _dead_letter(self, dead: list[tuple[Any, str]], remote: str) -> None:
        """Append the refused events to the dead-letter file (flushed and synced before the answer)."""
        if not dead:
            return
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with self.dead_letter_file.open("a", encoding="utf-8") as out:
            for event, reason in dead:
                out.write(
                    json.dumps({"time": now, "reason": reason, "remote": remote, "event": event}) + "\n"
                )
                self.stats.dead_lettered += 1
                self.stats.reasons[re.sub(r"^event \d+: ", "", reason).split(":")[0]] += 1
            out.flush()
            os.fsync(out.fileno())


def _results(count: int, refused: dict[int, str]) -> list[dict[str, Any]]:
    """The outcome of each of ``count`` events, in order."""
    return [
        {"index": n, "status": "refused", "reason": refused[n]}
        if n in refused
        else {"index": n, "status": "applied"}
        for n in range(count)
    ]


def _events(body: bytes, batch: bool = False) -> list[Any]:
    """The events of a body: one JSON object (not on the batch path), or the items of a JSON array."""
    if not body:
        raise IngestError("empty request body", hint="send a RunEvent as JSON")
    try:
        document = json.loads(body)
    except UnicodeDecodeError as exc:
        raise IngestError(f"body is not UTF-8 text: {exc}", hint="send JSON in UTF-8") from exc
    except RecursionError as exc:
        raise IngestError("JSON nested too deep to read", hint="flatten the event") from exc
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"body is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            hint="send a RunEvent object or an array of them",
        ) from exc
    if isinstance(document, dict) and batch:
        raise IngestError(
            f"{BATCH_PATH} takes a JSON array of events, not one object",
            hint=f"send [event, ...] here, or post the single event to {LINEAGE_PATH}",
        )
    if isinstance(document, dict):
        return [document]
    if isinstance(document, list) and document:
        return document
    raise IngestError(
        f"body is a JSON {type(document).__name__}{' (empty)' if document == [] else ''}, not an event",
        hint="send a RunEvent object or a non-empty array of them",
    )


def _error(status: int, message: str, hint: str, **counts: Any) -> web.Response:
    body = {"error": message, "hint": hint}
    if counts:
        body |= {"applied": counts.get("applied", 0), "dead_lettered": counts.get("dead", 0)}
        body |= {key: counts[key] for key in ("reasons", "results") if key in counts}
    return web.json_response(body, status=status)


def parse_address(address: str) -> tuple[str, int]:
    """(host, port) of ``HOST:PORT``; ConfigError saying what to write otherwise.

    >>> parse_address("127.0.0.1:5000")
    ('127.0.0.1', 5000)
    """
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--http {address!r} is not HOST:PORT", hint="e.g. --http 0.0.0.0:5000")
    return host.strip("[]"), int(port)


def serve(
    address: str,
    g: GraphTraversalSource,
    dead_letter_file: Path,
    *,
    schema: dict[str, Any] | None = None,
    function_rules: Mapping[str, FunctionRule] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    batch_size: int = 500,
    on_ready: Any = None,
) -> ReceiverStats:
    """Serve ``POST /api/v1/lineage`` (and ``/batch``) on ``address`` (HOST:PORT) until SIGINT/SIGTERM; the counts.
    ``on_ready(port)`` is called once the socket listens (port 0 picks a free one)."""
    from lineage_platform.graph.writer import LineageWriter

    host, port = parse_address(address)
    receiver = LineageReceiver(
        LineageWriter(g, batch_size=batch_size),
        dead_letter_file,
        schema=schema,
        function_rules=function_rules,
        max_body_bytes=max_body_bytes,
    )
    asyncio.run(_serve(receiver, host, port, on_ready))
    return receiver.stats


async def _serve(receiver: LineageReceiver, host: str, port: int, on_ready: Any) -> None:
    import signal

    runner = web.AppRunner(receiver.app(), handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}", hint="pick a free port") from exc
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    if on_ready is not None:
        on_ready(runner.addresses[0][1])
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        receiver.close()
