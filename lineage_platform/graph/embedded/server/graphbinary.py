"""GraphBinary v1 codec for the server side of the protocol.

gremlinpython ships readers and writers for GraphBinary values but only the client half of the
envelope: it writes requests and reads responses. This module adds the other half (read a
RequestMessage, write a ResponseMessage) and fills the value gaps a server meets:

* readers for the argument types clients send but gremlinpython cannot read back (P, TextP, Lambda,
  Class, TraversalStrategy), and for enum values whose Python name differs from the wire name
  (``Cardinality.list_`` is sent as ``list``, likewise set_, and_, or_, sum_, any_, global_, all_);
* a writer that materializes element properties (``materializeProperties=all``, the server default),
  picks Int32/Int64/BigInteger by magnitude, writes tuples as lists and frozensets as sets, and refuses values it has no
  serializer for instead of silently writing nothing.

The helper classes are named with a leading underscore on purpose: gremlinpython's metaclass registers
every public type IO class globally, which would change how in-process clients serialize.
"""

from __future__ import annotations

import io
import struct
import uuid
from collections.abc import Callable
from enum import Enum
from typing import Any

from gremlin_python.process.traversal import (
    DT,
    Barrier,
    Cardinality,
    Column,
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
from gremlin_python.structure.graph import Edge, Vertex, VertexProperty
from gremlin_python.structure.io.graphbinaryV1 import (
    BigIntIO,
    DataType,
    GraphBinaryReader,
    GraphBinaryWriter,
    IntIO,
    ListIO,
    LongIO,
    MapIO,
    SetDeserializer,
    StringIO,
    UuidIO,
    _GraphBinaryTypeIO,
    int32_unpack,
)

from lineage_platform.graph.embedded.server.messages import (
    GRAPHBINARY_V1,
    MalformedRequest,
    RequestMessage,
    ResponseMessage,
    Status,
)
from lineage_platform.graph.embedded.server.values import ScriptLambda, enum_member

MIME_TYPE = GRAPHBINARY_V1
VERSION = 0x81
NULL = b"\xfe\x01"
_INT32 = range(-(2**31), 2**31)
_INT64 = range(-(2**63), 2**63)
# the first two bytes of a fully qualified non-null value of each type _ResultWriter writes inline
_PREFIX = {
    kind: bytes([data_type.value, 0])
    for kind, data_type in ((str, DataType.string), (list, DataType.list), (dict, DataType.map))
}
_INT_PREFIX, _LONG_PREFIX = bytes([DataType.int.value, 0]), bytes([DataType.long.value, 0])
_PACK_INT32, _PACK_INT64 = struct.Struct(">i").pack, struct.Struct(">q").pack
_STATUS = struct.Struct(">i")


class UnserializableResult(TypeError):
    """A result value has no GraphBinary representation."""


def _read_predicate(factory: type[P]) -> Callable[[io.BytesIO, GraphBinaryReader], P]:
    def read(buff: io.BytesIO, reader: GraphBinaryReader) -> P:
        operator = reader.to_object(buff, DataType.string, False)
        args = [reader.read_object(buff) for _ in range(int32_unpack(buff.read(4)))]
        if operator in ("within", "without"):
            return factory(operator, args)
        return factory(operator, *args)

    return read


class _PReader(_GraphBinaryTypeIO):
    @classmethod
    def objectify(cls, buff, reader, nullable=True):
        return cls.is_null(buff, reader, _read_predicate(P), nullable)


class _TextPReader(_GraphBinaryTypeIO):
    @classmethod
    def objectify(cls, buff, reader, nullable=True):
        return cls.is_null(buff, reader, _read_predicate(TextP), nullable)


class _LambdaReader(_GraphBinaryTypeIO):
    @classmethod
    def objectify(cls, buff, reader, nullable=True):
        def read(b, r):
            language = r.to_object(b, DataType.string, False)
            script = r.to_object(b, DataType.string, False)
            return ScriptLambda(language, script, int32_unpack(b.read(4)))

        return cls.is_null(buff, reader, read, nullable)


class _ClassReader(_GraphBinaryTypeIO):
    @classmethod
    def objectify(cls, buff, reader, nullable=True):
        return cls.is_null(buff, reader, lambda b, r: r.to_object(b, DataType.string, False), nullable)


class _StrategyReader(_GraphBinaryTypeIO):
    @classmethod
    def objectify(cls, buff, reader, nullable=True):
        def read(b, r):
            fqcn = r.to_object(b, DataType.clazz, False)
            configuration = r.to_object(b, DataType.map, False)
            return TraversalStrategy(fqcn.rsplit(".", 1)[-1], configuration, fqcn)

        return cls.is_null(buff, reader, read, nullable)


def _enum_reader(enum: type[Enum]) -> type[_GraphBinaryTypeIO]:
    """A reader for one enum type, by the value's wire name (see `enum_member`)."""

    def read(buff: io.BytesIO, reader: GraphBinaryReader) -> Enum:
        return enum_member(enum, str(reader.to_object(buff)))

    class _EnumReader(_GraphBinaryTypeIO):
        @classmethod
        def objectify(cls, buff, reader, nullable=True):
            return cls.is_null(buff, reader, read, nullable)

    return _EnumReader


# Direction keeps gremlinpython's reader: its wire names are the Python names (OUT, IN, BOTH).
_ENUMS = {
    DataType.barrier: Barrier,
    DataType.cardinality: Cardinality,
    DataType.column: Column,
    DataType.dt: DT,
    DataType.merge: Merge,
    DataType.operator: Operator,
    DataType.order: Order,
    DataType.pick: Pick,
    DataType.pop: Pop,
    DataType.scope: Scope,
    DataType.t: T,
}


class _IntegerWriter(_GraphBinaryTypeIO):
    """Python ints as Int32 when they fit, else Int64, else BigInteger (gremlinpython only tries Int32)."""

    @classmethod
    def dictify(cls, obj, writer, to_extend, as_value=False, nullable=True):
        if obj in _INT32:
            return IntIO.dictify(obj, writer, to_extend, as_value, nullable)
        if obj in _INT64:
            return LongIO.dictify(obj, writer, to_extend, as_value, nullable)
        return BigIntIO.dictify(obj, writer, to_extend, as_value, nullable)


def _write_properties(properties: Any, writer: GraphBinaryWriter, to_extend: bytearray) -> None:
    if properties:
        ListIO.dictify(list(properties), writer, to_extend)
    else:
        to_extend.extend(NULL)


class _VertexWriter(_GraphBinaryTypeIO):
    @classmethod
    def dictify(cls, obj, writer, to_extend, as_value=False, nullable=True):
        cls.prefix_bytes(DataType.vertex, as_value, nullable, to_extend)
        writer.to_dict(obj.id, to_extend)
        StringIO.dictify(obj.label, writer, to_extend, True, False)
        _write_properties(obj.properties if writer.materialize else None, writer, to_extend)
        return to_extend


class _EdgeWriter(_GraphBinaryTypeIO):
    @classmethod
    def dictify(cls, obj, writer, to_extend, as_value=False, nullable=True):
        cls.prefix_bytes(DataType.edge, as_value, nullable, to_extend)
        writer.to_dict(obj.id, to_extend)
        StringIO.dictify(obj.label, writer, to_extend, True, False)
        writer.to_dict(obj.inV.id, to_extend)
        StringIO.dictify(obj.inV.label, writer, to_extend, True, False)
        writer.to_dict(obj.outV.id, to_extend)
        StringIO.dictify(obj.outV.label, writer, to_extend, True, False)
        to_extend.extend(NULL)  # parent: always null on the wire
        _write_properties(obj.properties if writer.materialize else None, writer, to_extend)
        return to_extend


class _VertexPropertyWriter(_GraphBinaryTypeIO):
    @classmethod
    def dictify(cls, obj, writer, to_extend, as_value=False, nullable=True):
        cls.prefix_bytes(DataType.vertexproperty, as_value, nullable, to_extend)
        writer.to_dict(obj.id, to_extend)
        StringIO.dictify(obj.label, writer, to_extend, True, False)
        writer.to_dict(obj.value, to_extend)
        to_extend.extend(NULL)  # parent vertex: always null on the wire
        _write_properties(obj.properties if writer.materialize else None, writer, to_extend)
        return to_extend


class _ResultWriter(GraphBinaryWriter):
    """A GraphBinary writer that raises on values it cannot write (the stock one writes nothing)."""

    def __init__(self, *, materialize: bool) -> None:
        super().__init__(
            {
                int: _IntegerWriter,
                tuple: ListIO,
                frozenset: SetDeserializer,
                Vertex: _VertexWriter,
                Edge: _EdgeWriter,
                VertexProperty: _VertexPropertyWriter,
            }
        )
        self.materialize = materialize
        self._enums: dict[Enum, bytes] = {}  # an enum member's bytes, written once

    def to_dict(self, obj: Any, to_extend: bytearray | None = None) -> Any:
        """Append ``obj`` fully qualified to ``to_extend``."""
        if to_extend is None:
            to_extend = bytearray()
        kind = type(
            obj
        )  # the common types inline, as gremlinpython's serializers write them (not bool: an int)
        if kind is str:
            data = obj.encode("utf-8")
            to_extend += _PREFIX[str]
            to_extend += _PACK_INT32(len(data))
            to_extend += data
            return to_extend
        if kind is int and obj in _INT64:
            if obj in _INT32:
                to_extend += _INT_PREFIX
                to_extend += _PACK_INT32(obj)
            else:
                to_extend += _LONG_PREFIX
                to_extend += _PACK_INT64(obj)
            return to_extend
        if kind is dict:
            to_extend += _PREFIX[dict]
            to_extend += _PACK_INT32(len(obj))
            for key, value in obj.items():
                self.to_dict(key, to_extend)
                self.to_dict(value, to_extend)
            return to_extend
        if kind is list:
            to_extend += _PREFIX[list]
            to_extend += _PACK_INT32(len(obj))
            for item in obj:
                self.to_dict(item, to_extend)
            return to_extend
        if obj is None:
            to_extend.extend(NULL)
            return to_extend
        if issubclass(
            kind, Enum
        ):  # T.id, T.label, Direction.OUT: keys of every element map, written once each
            written = self._enums.get(obj)
            if written is None:
                written = self._enums[obj] = bytes(self._write(obj, kind, bytearray()))
            to_extend += written
            return to_extend
        return self._write(obj, kind, to_extend)

    def _write(self, obj: Any, kind: type, to_extend: bytearray) -> Any:
        """Append ``obj`` through the serializer registered for its type."""
        serializer = self.serializers.get(kind)
        if serializer is None:
            serializer = next((s for t, s in self.serializers.items() if isinstance(obj, t)), None)
        if serializer is None:
            raise UnserializableResult(f"no GraphBinary type for a value of Python type {type(obj).__name__}")
        return serializer.dictify(obj, self, to_extend)


class GraphBinaryCodec:
    """Reads GraphBinary v1 requests and writes GraphBinary v1 responses."""

    mime_type = MIME_TYPE

    def __init__(self) -> None:
        self._reader = GraphBinaryReader(
            {
                DataType.p: _PReader,
                DataType.textp: _TextPReader,
                DataType.lambda_: _LambdaReader,
                DataType.clazz: _ClassReader,
                DataType.traversalstrategy: _StrategyReader,
                **{data_type: _enum_reader(enum) for data_type, enum in _ENUMS.items()},
            }
        )
        self._writers = {True: _ResultWriter(materialize=True), False: _ResultWriter(materialize=False)}

    def decode_request(self, body: bytes) -> RequestMessage:
        """Parse a request body (after the MIME header). Raises MalformedRequest."""
        buff = io.BytesIO(body)
        if buff.read(1) != bytes([VERSION]):
            raise MalformedRequest("unsupported GraphBinary version byte (expected 0x81)")
        raw_id = buff.read(16)
        if len(raw_id) != 16:
            raise MalformedRequest("the request id is truncated")
        request_id = uuid.UUID(bytes=raw_id)
        # gremlinpython's readers fail in many ways on hostile input, hence the broad excepts
        try:
            op = self._reader.to_object(buff, DataType.string, False)
            processor = self._reader.to_object(buff, DataType.string, False)
        except Exception as exc:
            raise MalformedRequest(f"the op and processor cannot be read: {exc!r}", request_id) from exc
        try:
            args = self._reader.to_object(buff, DataType.map, False)
        except Exception as exc:
            raise MalformedRequest(
                f"the request arguments cannot be deserialized: {exc!r}",
                request_id,
                Status.REQUEST_ERROR_SERIALIZATION,
            ) from exc
        if buff.read(1):
            raise MalformedRequest("trailing bytes after the request arguments", request_id)
        return RequestMessage(request_id, op, processor, args)

    def encode_response(self, response: ResponseMessage, *, materialize: bool = True) -> bytes:
        """Serialize one response frame. Raises UnserializableResult when a data value has no wire type."""
        writer = self._writers[materialize]
        out = bytearray([VERSION])
        if response.request_id is None:
            out.extend(b"\x01")
        else:
            UuidIO.dictify(response.request_id, writer, out, True, True)
        out.extend(_STATUS.pack(int(response.status)))
        if response.message is None:
            out.extend(b"\x01")
        else:
            StringIO.dictify(response.message, writer, out, True, True)
        MapIO.dictify(response.attributes, writer, out, True, False)
        MapIO.dictify({}, writer, out, True, False)
        if response.data is None:
            out.extend(NULL)
        else:
            writer.to_dict(response.data, out)
        return bytes(out)
