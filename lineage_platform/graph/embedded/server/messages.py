"""The Gremlin Server request/response envelope, independent of the wire format.

A binary request frame starts with a one-byte MIME-type length and the MIME type naming the serializer
(``application/vnd.graphbinary-v1.0``, ``application/vnd.gremlin-v3.0+json``, ...); the rest is the serialized
RequestMessage. A text frame is GraphSON 3.0 JSON without that header. Responses carry no MIME header.
:func:`split_mime_header` separates the two parts; the codecs (``graphbinary.py``, ``graphson_wire.py``) turn
the body into a :class:`RequestMessage` and a :class:`ResponseMessage` into bytes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any


class Status(IntEnum):
    """Response status codes of the Gremlin Server protocol (TinkerPop ``ResponseStatusCode``)."""

    SUCCESS = 200
    NO_CONTENT = 204
    PARTIAL_CONTENT = 206
    UNAUTHORIZED = 401
    AUTHENTICATE = 407
    REQUEST_ERROR_SERIALIZATION = 497
    REQUEST_ERROR_MALFORMED_REQUEST = 498
    REQUEST_ERROR_INVALID_REQUEST_ARGUMENTS = 499
    SERVER_ERROR = 500
    SERVER_ERROR_FAIL_STEP = 595
    SERVER_ERROR_TEMPORARY = 596
    SERVER_ERROR_EVALUATION = 597
    SERVER_ERROR_TIMEOUT = 598
    SERVER_ERROR_SERIALIZATION = 599


class MalformedRequest(Exception):
    """A frame that cannot be read as a request; ``request_id`` is set when the header was readable.

    ``status`` is 498 for a frame that cannot be parsed at all, 497 for arguments holding values that cannot
    be deserialized (Gremlin Server's distinction)."""

    def __init__(
        self,
        message: str,
        request_id: uuid.UUID | None = None,
        status: Status = Status.REQUEST_ERROR_MALFORMED_REQUEST,
    ) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.status = status


GRAPHBINARY_V1 = "application/vnd.graphbinary-v1.0"


@dataclass(frozen=True)
class Reply:
    """How a request is answered: in the serializer its MIME header named, in frames of the kind it came in
    (text frames carry GraphSON 3.0 without a header, as Gremlin Server reads them)."""

    mime_type: str = GRAPHBINARY_V1
    text: bool = False


@dataclass(frozen=True)
class RequestMessage:
    """One client request: which op of which processor, with its arguments, and how to answer it."""

    request_id: uuid.UUID
    op: str
    processor: str
    args: dict[Any, Any]
    reply: Reply = Reply()


@dataclass(frozen=True)
class ResponseMessage:
    """One response frame. ``data`` is a list for 200/206 and None otherwise."""

    request_id: uuid.UUID | None
    status: Status
    message: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    data: list[Any] | None = None


def split_mime_header(frame: bytes) -> tuple[str, bytes]:
    """Return the MIME type named by a request frame's header and the serialized body after it."""
    if not frame:
        raise MalformedRequest("empty frame")
    mime_length = frame[0]
    if mime_length == 0 or len(frame) < 1 + mime_length:
        raise MalformedRequest("the frame does not start with a MIME-type header")
    try:
        mime = frame[1 : 1 + mime_length].decode("ascii")
    except UnicodeDecodeError as exc:
        raise MalformedRequest("the MIME-type header is not ASCII") from exc
    return mime, frame[1 + mime_length :]
