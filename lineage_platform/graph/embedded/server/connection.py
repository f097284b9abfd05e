"""One client WebSocket: read request frames, authenticate, run ops, stream responses in batches.

Requests on one connection are answered one after another (gremlinpython sends one at a time per pooled
connection). A failure in one request never closes the connection; a client that stops reading for
longer than the write timeout, or that disconnects, is dropped and its sessions are rolled back.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from lineage_platform.graph.embedded.server.auth import Authenticator
from lineage_platform.graph.embedded.server.graphbinary import GraphBinaryCodec, UnserializableResult
from lineage_platform.graph.embedded.server.messages import (
    MalformedRequest,
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


class ClientGone(Exception):
    """The client disconnected or stopped reading; the connection is abandoned."""


@dataclass(frozen=True)
class ConnectionLimits:
    """Per-connection limits and defaults taken from the server settings."""

    batch_size: int
    evaluation_timeout: float | None
    write_timeout: float


class Connection:
    """Serves the requests of one WebSocket client."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        peer: str,
        operations: Operations,
        sessions: SessionRegistry,
        limits: ConnectionLimits,
        authenticator: Authenticator | None,
    ) -> None:
        self.id = next(_connection_ids)
        self.ws = ws
        self._peer = peer
        self._operations = operations
        self._sessions = sessions
        self._limits = limits
        self._authenticator = authenticator
        self._codec = GraphBinaryCodec()
        self._user: str | None = None
        self._awaiting_auth: RequestMessage | None = None
        self._failed_logins = 0

    async def serve(self) -> None:
        """Answer frames until the client leaves; then roll back the sessions it left open."""
        try:
            async for message in self.ws:
                if message.type == WSMsgType.BINARY:
                    await self._answer(message.data)
                elif message.type == WSMsgType.TEXT:
                    await self._send_error(
                        None, Status.REQUEST_ERROR_MALFORMED_REQUEST, "send requests as binary frames"
                    )
                elif message.type == WSMsgType.ERROR:
                    log.warning("connection %s from %s dropped: %s", self.id, self._peer, self.ws.exception())
                    break
        except ClientGone as exc:
            log.warning("connection %s from %s abandoned: %s", self.id, self._peer, exc)
        finally:
            self._sessions.end_owned_by(self.id, "its client disconnected")
            if not self.ws.closed:
                await self._close_quietly()

    async def _answer(self, frame: bytes) -> None:
        """Answer one frame; a bug in answering it costs that request only, not the connection."""
        try:
            await self._on_frame(frame)
        except ClientGone:
            raise
        except Exception:
            log.exception("connection %s: answering a request failed", self.id)
            await self._send_error(None, Status.SERVER_ERROR, "internal server error (see the server log)")

    async def _close_quietly(self) -> None:
        try:
            async with asyncio.timeout(self._limits.write_timeout):
                await self.ws.close()
        except (TimeoutError, OSError):
            log.info("connection %s: closing handshake did not complete", self.id)

    async def _on_frame(self, frame: bytes) -> None:
        try:
            mime, body = split_mime_header(frame)
            if mime != self._codec.mime_type:
                await self._refuse_serializer(mime)
            request = self._codec.decode_request(body)
        except MalformedRequest as exc:
            log.warning("connection %s: malformed request: %s", self.id, exc)
            await self._send_error(exc.request_id, exc.status, str(exc))
            return
        if self._authenticator is not None and self._user is None:
            request = await self._authenticate(request)
            if request is None:
                return
        elif request.op == "authentication":
            await self._send(ResponseMessage(request.request_id, Status.NO_CONTENT), materialize=False)
            return
        try:
            options = RequestOptions.from_args(
                request.args,
                batch_size=self._limits.batch_size,
                timeout=self._limits.evaluation_timeout,
            )
        except InvalidRequest as exc:
            await self._send_error(
                request.request_id, Status.REQUEST_ERROR_INVALID_REQUEST_ARGUMENTS, str(exc)
            )
            return
        outcome = await self._operations.run(request, options, self.id)
        await self._send_outcome(request, outcome, options)

    async def _refuse_serializer(self, mime: str) -> None:
        """Responses could not be read by a client expecting another format: close with a reason instead."""
        reason = f"{mime} is not served; use {self._codec.mime_type}"
        await self.ws.close(code=WSCloseCode.UNSUPPORTED_DATA, message=reason.encode()[:120])
        raise ClientGone(reason)

    async def _authenticate(self, request: RequestMessage) -> RequestMessage | None:
        """SASL PLAIN: challenge with 407, check the answer; returns the request to run once authenticated."""
        assert self._authenticator is not None
        if request.op != "authentication":
            self._awaiting_auth = request
            await self._send(
                ResponseMessage(request.request_id, Status.AUTHENTICATE, "authentication required"),
                materialize=False,
            )
            return None
        sasl = request.args.get("sasl")
        loop = asyncio.get_running_loop()
        user = (
            None if sasl is None else await loop.run_in_executor(None, self._authenticator.authenticate, sasl)
        )
        if user is None:
            self._failed_logins += 1
            self._awaiting_auth = None
            log.warning("connection %s from %s: failed login", self.id, self._peer)
            await self._send_error(
                request.request_id, Status.UNAUTHORIZED, "Username and/or password are incorrect"
            )
            if self._failed_logins >= MAX_FAILED_LOGINS:
                raise ClientGone(f"{MAX_FAILED_LOGINS} failed logins")
            return None
        self._user = user
        log.info("connection %s from %s: authenticated as %s", self.id, self._peer, user)
        pending, self._awaiting_auth = self._awaiting_auth, None
        if pending is None:
            await self._send(ResponseMessage(request.request_id, Status.NO_CONTENT), materialize=False)
        return pending

    async def _send_outcome(self, request: RequestMessage, outcome: Outcome, options: RequestOptions) -> None:
        if outcome.status not in (Status.SUCCESS, Status.NO_CONTENT):
            attributes = {"exceptions": [outcome.exception]} if outcome.exception else {}
            await self._send_error(request.request_id, outcome.status, outcome.message or "", attributes)
            return
        done = {"host": self._peer}
        if outcome.results is None:
            await self._send(ResponseMessage(request.request_id, Status.NO_CONTENT, attributes=done), False)
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
                frame = self._codec.encode_response(response, materialize=options.materialize)
            except (UnserializableResult, ArithmeticError, ValueError, TypeError) as exc:
                log.warning("connection %s: result not serializable: %s", self.id, exc)
                await self._send_error(
                    request.request_id,
                    Status.SERVER_ERROR_SERIALIZATION,
                    f"a result could not be serialized: {exc}",
                )
                return
            await self._write(frame)

    async def _send_error(
        self,
        request_id: Any,
        status: Status,
        message: str,
        attributes: dict[str, Any] | None = None,
    ) -> None:
        await self._send(ResponseMessage(request_id, status, message, attributes or {}), materialize=False)

    async def _send(self, response: ResponseMessage, materialize: bool) -> None:
        await self._write(self._codec.encode_response(response, materialize=materialize))

    async def _write(self, frame: bytes) -> None:
        """Send one frame, giving up on clients that do not read it within the write timeout."""
        if self.ws.closed:
            raise ClientGone("the client closed the connection")
        try:
            async with asyncio.timeout(self._limits.write_timeout):
                await self.ws.send_bytes(frame)
        except TimeoutError as exc:
            raise ClientGone(
                f"the client did not read a response within {self._limits.write_timeout:g} s"
            ) from exc
        except (ConnectionError, RuntimeError) as exc:
            raise ClientGone(f"sending failed: {exc}") from exc
