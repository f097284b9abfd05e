"""One client WebSocket: read request frames, authenticate, run ops concurrently, stream their responses.

The reader keeps reading while requests run: each request becomes a task, at most ``max_in_flight`` per
connection (beyond that the reader waits, so the client's frames wait in the socket: backpressure). Responses of
different requests may interleave, matched by requestId as in Gremlin Server; the frames of one response stay in
order, and one frame is written at a time. Requests of one session still run in arrival order (each is handed
to the session's worker thread before the next frame is read). Authentication and malformed frames are
handled by the reader itself, so no request starts before the SASL exchange has completed.

A failure in one request never closes the connection. When the client disconnects, or stops reading for longer
than the write timeout, the requests still running are cancelled (their engine traversals stop at the next
check) and its sessions are rolled back.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import itertools
import logging
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import aiohttp
from aiohttp import WSCloseCode, WSMsgType, web
from gremlin_python.process.traversal import Traverser

from lineage_platform.graph.embedded.server.auth import Authenticator
from lineage_platform.graph.embedded.server.graphbinary import GraphBinaryCodec, UnserializableResult
from lineage_platform.graph.embedded.server.graphson_wire import GRAPHSON_V2, GRAPHSON_V3, GraphSONCodec
from lineage_platform.graph.embedded.server.limits import ConnectionLimits, LoginThrottle
from lineage_platform.graph.embedded.server.messages import (
    GRAPHBINARY_V1,
    MalformedRequest,
    Reply,
    RequestMessage,
    ResponseMessage,
    Status,
    split_mime_header,
)
from lineage_platform.graph.embedded.server.operations import (
    InvalidRequest,
    Operations,
    Outcome,
    RequestOptions,
)
from lineage_platform.graph.embedded.server.sessions import SessionRegistry

log = logging.getLogger(__name__)
_connection_ids = itertools.count(1)
MAX_FAILED_LOGINS = 3
SLOT_WAIT_CHECK_SECONDS = 0.1  # how often a reader waiting for a free slot looks for a lost connection
DECODE_ON_LOOP_BYTES = 64 * 1024  # larger frames are decoded on a worker thread, not the event loop
# response batches holding more values than this (nested ones counted) are encoded on a worker thread
ENCODE_ON_LOOP_ITEMS = 4096
T = TypeVar("T")
_DEFAULT_REPLY = (
    Reply()
)  # frames of an unknown serializer are answered in GraphBinary, as Gremlin Server does


class ClientGone(Exception):
    """The client disconnected or stopped reading; the connection is abandoned."""


class Connection:
    """Serves the requests of one WebSocket client."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        transport: asyncio.BaseTransport | None,
        address: tuple[str, int] | None,
        operations: Operations,
        sessions: SessionRegistry,
        limits: ConnectionLimits,
        authenticator: Authenticator | None,
        throttle: LoginThrottle | None = None,
    ) -> None:
        self.id = next(_connection_ids)
        self.ws = ws
        self._transport = transport
        self._address = address[0] if address else "unknown"
        self._peer = f"/{address[0]}:{address[1]}" if address else "/unknown"
        self._throttle = throttle
        self._opened = self._last_active = time.monotonic()
        self._operations = operations
        self._sessions = sessions
        self._limits = limits
        self._authenticator = authenticator
        graphson_v3 = GraphSONCodec(3)
        self._codecs: dict[str, GraphBinaryCodec | GraphSONCodec] = {
            GRAPHBINARY_V1: GraphBinaryCodec(),
            GRAPHSON_V3: graphson_v3,
            GRAPHSON_V2: GraphSONCodec(2),
            "application/json": graphson_v3,  # Gremlin Server's alias for its GraphSON 3.0 serializer
        }
        self._user: str | None = None
        self._awaiting_auth: RequestMessage | None = None
        self._failed_logins = 0
        self._slots = asyncio.Semaphore(limits.max_in_flight)
        self._requests: set[asyncio.Task[None]] = set()
        self._writing = asyncio.Lock()

    async def serve(self) -> None:
        """Read frames until the client leaves (or overstays a login or idle timeout), running requests as
        tasks; then cancel those still running and roll back the sessions the client left open."""
        try:
            while (message := await self._receive()) is not None:
                self._last_active = time.monotonic()
                if message.type in (WSMsgType.BINARY, WSMsgType.TEXT):
                    request = await self._guarded(self._admit(message.data), None, _DEFAULT_REPLY)
                    if request is not None:
                        await self._start(request)
                elif message.type == WSMsgType.ERROR:
                    log.warning("connection %s from %s dropped: %s", self.id, self._peer, self.ws.exception())
                    break
                else:  # CLOSE, CLOSING, CLOSED
                    break
        except ClientGone as exc:
            log.warning("connection %s from %s abandoned: %s", self.id, self._peer, exc)
        finally:
            await self._cancel_requests()
            self._sessions.end_owned_by(self.id, "its client disconnected")
            if not self.ws.closed:
                await self._close_quietly()

    @property
    def authenticated(self) -> bool:
        """True once the client has logged in (always, when the server needs no login)."""
        return self._authenticator is None or self._user is not None

    async def _receive(self) -> aiohttp.WSMessage | None:
        """The next frame; None once the client has stayed silent past its login or idle timeout (the
        connection is then closed with 1008 and a reason)."""
        while True:
            now = time.monotonic()
            if self._requests:  # a running request is activity: its client waits for the answer
                self._last_active = now
            if self.authenticated:
                since, limit, what = self._last_active, self._limits.idle_timeout, "send a request"
            else:
                since, limit, what = self._opened, self._limits.login_timeout, "log in"
            remaining = since + limit - now
            if remaining <= 0:
                await self._close_for_policy(f"did not {what} within {limit:g} s")
                return None
            try:
                return await self.ws.receive(timeout=remaining)
            except TimeoutError:
                continue

    async def _close_for_policy(self, reason: str) -> None:
        log.info("connection %s from %s closed: %s", self.id, self._peer, reason)
        with contextlib.suppress(TimeoutError, OSError):
            async with asyncio.timeout(self._limits.write_timeout):
                await self.ws.close(code=WSCloseCode.POLICY_VIOLATION, message=reason.encode()[:120])

    async def _start(self, request: RequestMessage) -> None:
        """Run ``request`` as a task once a slot is free. The task reaches its worker queue (a session's
        ordered thread included) before the reader takes the next frame: tasks start in creation order and
        nothing before the hand-over awaits."""
        await self._wait_for_slot()
        task = asyncio.create_task(self._answer(request), name=f"gremlin-request-{request.request_id}")
        self._requests.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._requests.discard(task)
        self._last_active = time.monotonic()
        self._slots.release()

    async def _wait_for_slot(self) -> None:
        """Backpressure: wait, reading nothing more, until fewer than ``max_in_flight`` requests run. Frames are
        not read meanwhile, so a lost connection is noticed from the transport instead."""
        while self._slots.locked():
            try:
                async with asyncio.timeout(SLOT_WAIT_CHECK_SECONDS):
                    await self._slots.acquire()
                return
            except TimeoutError:
                if self._transport is None or self._transport.is_closing():
                    raise ClientGone("the client disconnected while its requests ran") from None
        await self._slots.acquire()  # a slot is free: no wait, and no timer to arm

    async def _cancel_requests(self) -> None:
        """Cancel the requests still running: their engine traversals stop and free their workers."""
        running = list(self._requests)
        if not running:
            return
        log.warning(
            "connection %s from %s closed with %d request(s) running; cancelling them",
            self.id,
            self._peer,
            len(running),
        )
        for task in running:
            task.cancel()
        await asyncio.wait(running)

    async def _answer(self, request: RequestMessage) -> None:
        """Run one request and stream its response (a task of its own); abandons the connection if the
        client is gone."""
        try:
            await self._guarded(self._respond(request), request.request_id, request.reply)
        except ClientGone as exc:
            if self._transport is not None and not self._transport.is_closing():  # else already ending
                log.warning("connection %s from %s abandoned: %s", self.id, self._peer, exc)
                self._transport.abort()  # ends the reader, which cancels the other requests

    async def _guarded(self, work: Awaitable[T], request_id: Any, reply: Reply) -> T | None:
        """Await ``work``; a bug in it costs that request only: it is logged and answered with 500."""
        try:
            return await work
        except ClientGone:
            raise
        except Exception:
            log.exception("connection %s: answering a request failed", self.id)
            await self._send_error(
                request_id, Status.SERVER_ERROR, "internal server error (see the server log)", reply=reply
            )
            return None

    async def _close_quietly(self) -> None:
        try:
            async with asyncio.timeout(self._limits.write_timeout):
                await self.ws.close()
        except (TimeoutError, OSError):
            log.info("connection %s: closing handshake did not complete", self.id)

    async def _admit(self, frame: bytes | str) -> RequestMessage | None:
        """Check a frame's size and serializer, decode it and pass it through authentication; returns the
        request to run, if any. A binary frame names its serializer in its MIME header, a text frame is
        GraphSON 3.0; the request is answered in the same serializer and kind of frame. Before the login only
        small frames are decoded; big ones are decoded on a worker thread so that the event loop keeps serving
        everyone else. Malformed frames and the SASL exchange are answered here."""
        size = len(frame) if isinstance(frame, bytes) else len(frame.encode())
        if not self.authenticated and size > self._limits.login_frame_bytes:
            reason = (
                f"log in first: frames before the login are limited to {self._limits.login_frame_bytes} bytes"
            )
            await self.ws.close(code=WSCloseCode.MESSAGE_TOO_BIG, message=reason.encode()[:120])
            raise ClientGone(f"a frame of {size} bytes before the login")
        reply = _DEFAULT_REPLY
        try:
            if isinstance(frame, str):
                reply, body = Reply(GRAPHSON_V3, text=True), frame
            else:
                mime, body = split_mime_header(frame)
                if mime not in self._codecs:
                    raise MalformedRequest(
                        f"the serializer {mime} is not served; use one of {', '.join(self._codecs)}",
                        status=Status.REQUEST_ERROR_INVALID_REQUEST_ARGUMENTS,
                    )
                reply = Reply(mime)
            decode = self._codecs[reply.mime_type].decode_request
            if size > DECODE_ON_LOOP_BYTES:
                request = await asyncio.get_running_loop().run_in_executor(None, decode, body)
            else:
                request = decode(body)
        except MalformedRequest as exc:
            log.warning("connection %s: malformed request: %s", self.id, exc)
            await self._send_error(exc.request_id, exc.status, str(exc), reply=reply)
            return None
        request = dataclasses.replace(request, reply=reply)
        if not self.authenticated:
            return await self._authenticate(request)
        if request.op == "authentication":
            await self._send(ResponseMessage(request.request_id, Status.NO_CONTENT), False, request.reply)
            return None
        return request

    async def _respond(self, request: RequestMessage) -> None:
        try:
            options = RequestOptions.from_args(
                request.args,
                batch_size=self._limits.batch_size,
                timeout=self._limits.evaluation_timeout,
            )
        except InvalidRequest as exc:
            await self._send_error(
                request.request_id,
                Status.REQUEST_ERROR_INVALID_REQUEST_ARGUMENTS,
                str(exc),
                reply=request.reply,
            )
            return
        outcome = await self._operations.run(request, options, self.id)
        await self._send_outcome(request, outcome, options)

    async def _authenticate(self, request: RequestMessage) -> RequestMessage | None:
        """SASL PLAIN: challenge with 407, check the answer; returns the request to run once authenticated.

        Only one request waits for the login: another one sent before the SASL answer is refused with 401
        without running (as Gremlin Server does), and does not count as a failed login."""
        assert self._authenticator is not None
        if request.op != "authentication":
            if self._awaiting_auth is not None:
                await self._send_error(
                    request.request_id,
                    Status.UNAUTHORIZED,
                    f"authenticate first: request {self._awaiting_auth.request_id} is waiting for the SASL "
                    "answer",
                    reply=request.reply,
                )
                return None
            self._awaiting_auth = request
            await self._send(
                ResponseMessage(request.request_id, Status.AUTHENTICATE, "authentication required"),
                False,
                request.reply,
            )
            return None
        wait = self._throttle.retry_after(self._address) if self._throttle is not None else 0.0
        if wait > 0:
            message = f"too many failed logins from {self._address}; retry in {wait:.0f} s"
            log.warning("connection %s from %s: login refused, %s", self.id, self._peer, message)
            await self._send_error(request.request_id, Status.UNAUTHORIZED, message, reply=request.reply)
            raise ClientGone(message)
        sasl = request.args.get("sasl")
        loop = asyncio.get_running_loop()
        user = (
            None if sasl is None else await loop.run_in_executor(None, self._authenticator.authenticate, sasl)
        )
        if user is None:
            self._failed_logins += 1
            self._awaiting_auth = None
            if self._throttle is not None:
                self._throttle.failed(self._address)
            log.warning("connection %s from %s: failed login", self.id, self._peer)
            await self._send_error(
                request.request_id,
                Status.UNAUTHORIZED,
                "Username and/or password are incorrect",
                reply=request.reply,
            )
            if self._failed_logins >= MAX_FAILED_LOGINS:
                raise ClientGone(f"{MAX_FAILED_LOGINS} failed logins")
            return None
        self._user = user
        log.info("connection %s from %s: authenticated as %s", self.id, self._peer, user)
        pending, self._awaiting_auth = self._awaiting_auth, None
        if pending is None:
            await self._send(ResponseMessage(request.request_id, Status.NO_CONTENT), False, request.reply)
        return pending

    async def _send_outcome(self, request: RequestMessage, outcome: Outcome, options: RequestOptions) -> None:
        if outcome.status not in (Status.SUCCESS, Status.NO_CONTENT):
            attributes = {"exceptions": [outcome.exception]} if outcome.exception else {}
            await self._send_error(
                request.request_id, outcome.status, outcome.message or "", attributes, reply=request.reply
            )
            return
        done = {"host": self._peer}
        if outcome.results is None:
            await self._send(
                ResponseMessage(request.request_id, Status.NO_CONTENT, attributes=done), False, request.reply
            )
            return
        results, size = outcome.results, options.batch_size
        for start in range(0, len(results), size):
            last = start + size >= len(results)
            response = ResponseMessage(
                request.request_id,
                Status.SUCCESS if last else Status.PARTIAL_CONTENT,
                attributes=done if last else {},
                data=results[start : start + size],
            )
            try:
                frame = await self._encode(response, options.materialize, request.reply)
            except (UnserializableResult, ArithmeticError, ValueError, TypeError) as exc:
                log.warning("connection %s: result not serializable: %s", self.id, exc)
                await self._send_error(
                    request.request_id,
                    Status.SERVER_ERROR_SERIALIZATION,
                    f"a result could not be serialized: {exc}",
                    reply=request.reply,
                )
                return
            await self._write(frame, request.reply)

    async def _encode(self, response: ResponseMessage, materialize: bool, reply: Reply) -> bytes:
        """Serialize a response in the request's serializer; a big one (e.g. a fold() of a million values) on a
        worker thread, so that the event loop keeps serving everyone else meanwhile."""
        codec = self._codecs[reply.mime_type]
        if not _holds_more_than(response.data or (), ENCODE_ON_LOOP_ITEMS):
            return codec.encode_response(response, materialize=materialize)
        encode = functools.partial(codec.encode_response, response, materialize=materialize)
        return await asyncio.get_running_loop().run_in_executor(None, encode)

    async def _send_error(
        self,
        request_id: Any,
        status: Status,
        message: str,
        attributes: dict[str, Any] | None = None,
        *,
        reply: Reply,
    ) -> None:
        await self._send(ResponseMessage(request_id, status, message, attributes or {}), False, reply)

    async def _send(self, response: ResponseMessage, materialize: bool, reply: Reply) -> None:
        await self._write(
            self._codecs[reply.mime_type].encode_response(response, materialize=materialize), reply
        )

    async def _write(self, frame: bytes, reply: Reply) -> None:
        """Send one frame once no other is being sent, giving up on clients that do not read it within the
        write timeout."""
        try:
            async with self._writing:  # one frame at a time; the timeout starts once it is this frame's turn
                if self.ws.closed:
                    raise ClientGone("the client closed the connection")
                async with asyncio.timeout(self._limits.write_timeout):
                    if reply.text:
                        await self.ws.send_str(frame.decode())
                    else:
                        await self.ws.send_bytes(frame)
        except TimeoutError as exc:
            raise ClientGone(
                f"the client did not read a response within {self._limits.write_timeout:g} s"
            ) from exc
        except (ConnectionError, RuntimeError) as exc:
            raise ClientGone(f"sending failed: {exc}") from exc


def _holds_more_than(values: list[Any] | tuple[()], limit: int) -> bool:
    """True when ``values`` (Traversers or plain values) hold more than ``limit`` values, nested collections
    included; stops counting at the limit, so the check itself stays cheap."""
    pending: list[Any] = list(values)
    seen = 0
    while pending:
        value = pending.pop()
        value = value.object if isinstance(value, Traverser) else value
        seen += 1
        if isinstance(value, dict):
            seen += len(value)
            if seen > limit:
                return True
            pending.extend(value.values())
        elif isinstance(value, list | set | tuple | frozenset):
            if seen + len(value) > limit:
                return True
            pending.extend(value)
        if seen > limit:
            return True
    return False
