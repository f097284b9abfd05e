"""GraphSON 3.0 and 2.0 codecs for the server side of the protocol (what gremlin-javascript, graph-notebook and
gremlinpython's ``GraphSONSerializersV3d0``/``V2d0`` send).

Values are read and written by the project's GraphSON value codec (`lineage_platform.graph.graphson`: Java
integer ranges checked, ``g:Float`` kept apart from ``g:Double``); this module adds what only requests carry
(``g:Bytecode``, ``g:P``, ``g:TextP``, ``g:Lambda``, ``g:Binding``, enum values, ``g:Class`` and traversal
strategies such as ``g:OptionsStrategy``) and the JSON envelope:
``{"requestId", "op", "processor", "args"}`` in, ``{"requestId", "status": {...}, "result": {...}}`` out.
A type tag it does not know is refused (497), as is JSON nested deeper than the reader can follow (498).
"""

from __future__ import annotations

import inspect
import json
import uuid
from enum import Enum
from typing import Any

from gremlin_python.process import strategies
from gremlin_python.process.traversal import (
    DT,
    Barrier,
    Binding,
    Bytecode,
    Cardinality,
    Column,
    Direction,
    Merge,
    Operator,
    Order,
    P,
    Pick,
    Pop,
    Scope,
    T,
    TextP,
    TraversalStrategy,
)

from lineage_platform.graph.embedded.server.messages import (
    MalformedRequest,
    RequestMessage,
    ResponseMessage,
    Status,
)
from lineage_platform.graph.embedded.server.values import ScriptLambda, enum_member
from lineage_platform.graph.graphson import check_tags, value_reader, value_writer

GRAPHSON_V3 = "application/vnd.gremlin-v3.0+json"
GRAPHSON_V2 = "application/vnd.gremlin-v2.0+json"
_CONNECTIVES = ("and", "or")
_RANGES = ("between", "inside", "outside")
_COLLECTIONS = ("within", "without")


class _Reading:
    """Base of the request-value readers (``objectify(value, reader)``, as gremlinpython's readers)."""


def _predicate(factory: type[P]) -> type[_Reading]:
    class _PredicateReader(_Reading):
        @classmethod
        def objectify(cls, value: dict[str, Any], reader: Any) -> P:
            operator, operand = value["predicate"], reader.to_object(value.get("value"))
            if operator in _COLLECTIONS:
                return factory(operator, operand if isinstance(operand, list) else [operand])
            if operator in _CONNECTIVES + _RANGES and isinstance(operand, list) and len(operand) == 2:
                return factory(operator, *operand)
            return factory(operator, operand)

    return _PredicateReader


def _enum(enum: type[Enum]) -> type[_Reading]:
    class _EnumReader(_Reading):
        @classmethod
        def objectify(cls, value: str, reader: Any) -> Enum:
            return enum_member(enum, str(value))

    return _EnumReader


class _BytecodeReader(_Reading):
    @classmethod
    def objectify(cls, value: dict[str, Any], reader: Any) -> Bytecode:
        bytecode = Bytecode()
        for key, instructions in (
            ("source", bytecode.source_instructions),
            ("step", bytecode.step_instructions),
        ):
            for name, *args in value.get(key, []):
                if not isinstance(name, str):
                    raise ValueError(f"instruction name {name!r} is not text")
                instructions.append([name, *(reader.to_object(arg) for arg in args)])
        return bytecode


class _LambdaReader(_Reading):
    @classmethod
    def objectify(cls, value: dict[str, Any], reader: Any) -> ScriptLambda:
        return ScriptLambda(
            value.get("language", "gremlin-lang"), value["script"], int(value.get("arguments", 1))
        )


class _BindingReader(_Reading):
    @classmethod
    def objectify(cls, value: dict[str, Any], reader: Any) -> Binding:
        return Binding(value["key"], reader.to_object(value["value"]))


class _ClassReader(_Reading):
    @classmethod
    def objectify(cls, value: str, reader: Any) -> str:
        return str(value)


def _strategy(name: str, fqcn: str) -> type[_Reading]:
    class _StrategyReader(_Reading):
        @classmethod
        def objectify(cls, value: dict[str, Any], reader: Any) -> TraversalStrategy:
            configuration = {key: reader.to_object(item) for key, item in (value or {}).items()}
            return TraversalStrategy(name, configuration, fqcn)

    return _StrategyReader


def _strategy_readers() -> dict[str, type[_Reading]]:
    """A reader per strategy gremlinpython knows, tagged ``g:<Name>`` as clients write them."""
    readers = {}
    for name, kind in vars(strategies).items():
        if inspect.isclass(kind) and issubclass(kind, TraversalStrategy) and kind is not TraversalStrategy:
            try:
                fqcn = kind().fqcn
            except TypeError:  # needs constructor arguments: no client sends it without them either
                continue
            if fqcn:
                readers[f"g:{name}"] = _strategy(name, fqcn)
    return readers


_ENUMS = {
    "g:Barrier": Barrier,
    "g:Cardinality": Cardinality,
    "g:Column": Column,
    "g:Direction": Direction,
    "g:DT": DT,
    "g:Merge": Merge,
    "g:Operator": Operator,
    "g:Order": Order,
    "g:Pick": Pick,
    "g:Pop": Pop,
    "g:Scope": Scope,
    "g:T": T,
}
_REQUEST_READERS: dict[str, Any] = {
    "g:Bytecode": _BytecodeReader,
    "g:P": _predicate(P),
    "g:TextP": _predicate(TextP),
    "g:Lambda": _LambdaReader,
    "g:Binding": _BindingReader,
    "g:Class": _ClassReader,
    **{tag: _enum(enum) for tag, enum in _ENUMS.items()},
    **_strategy_readers(),
}


class _AsList:
    """Writes tuples as lists (the engine returns some collections as tuples)."""

    @classmethod
    def dictify(cls, value: tuple[Any, ...], writer: Any) -> Any:
        return writer.to_dict(list(value))


class _AsSet:
    """Writes frozensets as sets."""

    @classmethod
    def dictify(cls, value: frozenset[Any], writer: Any) -> Any:
        return writer.to_dict(set(value))


class GraphSONCodec:
    """Reads GraphSON ``version`` (3 or 2) requests and writes responses in the same version."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.mime_type = GRAPHSON_V3 if version == 3 else GRAPHSON_V2
        self._reader = value_reader(version, _REQUEST_READERS)
        self._writer = value_writer(version, {tuple: _AsList, frozenset: _AsSet})

    def decode_request(self, body: bytes | str) -> RequestMessage:
        """Parse one request (the JSON after the MIME header). Raises MalformedRequest."""
        try:
            doc = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise MalformedRequest(f"the request is not JSON: {exc}") from exc
        if not isinstance(doc, dict):
            raise MalformedRequest("the request is not a JSON object with requestId, op, processor and args")
        try:
            raw_id = doc.get("requestId")
            request_id = uuid.UUID(str(raw_id["@value"] if isinstance(raw_id, dict) else raw_id))
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedRequest("the request has no requestId UUID") from exc
        op, processor, args = doc.get("op"), doc.get("processor", ""), doc.get("args", {})
        if not isinstance(op, str) or not isinstance(processor, str):
            raise MalformedRequest("op and processor must be text", request_id)
        try:
            check_tags(args, self._reader)
            args = self._reader.to_object(args)
            if not isinstance(args, dict):
                raise ValueError("args is not a map")
        except RecursionError as exc:
            raise MalformedRequest("the request arguments are nested too deeply", request_id) from exc
        except (LookupError, TypeError, ValueError, ArithmeticError, AttributeError) as exc:
            raise MalformedRequest(
                f"the request arguments cannot be deserialized: {exc!r}",
                request_id,
                Status.REQUEST_ERROR_SERIALIZATION,
            ) from exc
        return RequestMessage(request_id, op, processor, args)

    def encode_response(self, response: ResponseMessage, *, materialize: bool = True) -> bytes:
        """Serialize one response as UTF-8 JSON. Raises TypeError when a data value has no GraphSON type.
        Elements are written as references (id and label) whatever ``materialize`` says."""
        writer = self._writer
        doc = {
            "requestId": None if response.request_id is None else str(response.request_id),
            "status": {
                "message": response.message or "",
                "code": int(response.status),
                "attributes": writer.to_dict(response.attributes),
            },
            "result": {
                "data": None if response.data is None else writer.to_dict(response.data),
                "meta": writer.to_dict({}),
            },
        }
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
