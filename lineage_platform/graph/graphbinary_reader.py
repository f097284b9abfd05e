"""The driver's GraphBinary reader: JanusGraph's reader with the common types read inline.

gremlinpython 3.7.3's reader finds every value's deserializer through an ``aenum`` constructor call and reads
each value through a lambda and two ``isinstance`` checks on the buffer; a served trace of 100 vertices answers
with ~3,000 values, and reading them took longer than the server took to find them. This reader picks the
deserializer by the type byte from a dict and reads null, int, long, double, boolean, string, list, set, map,
traverser and enum values itself, by offset straight from the message's bytes (one ``struct`` call or slice per
value, no buffer method calls), converting each enum name (``T.id``, ``Direction.OUT``: keys of every element
map) to its member once. It gives the same Python values as the stock reader (map keys go through
``HashableDict.of``, as there); every other type (elements, paths, JanusGraph's relation ids, ...) goes to the
stock deserializers, positioned at that value.

>>> from gremlin_python.statics import long
>>> from gremlin_python.structure.io.graphbinaryV1 import GraphBinaryWriter
>>> data = GraphBinaryWriter().write_object({"a": [1, long(2**40), "x", None], 3: {"b"}})
>>> FastGraphBinaryReader().read_object(data)
{'a': [1, 1099511627776, 'x', None], 3: {'b'}}
"""

from __future__ import annotations

import io
import struct
import threading
from typing import Any

from gremlin_python.process.traversal import Traverser
from gremlin_python.structure.io.graphbinaryV1 import DataType
from gremlin_python.structure.io.util import HashableDict
from janusgraph_python.driver.serializer import JanusGraphBinarySerializersV1
from janusgraph_python.structure.io.graphbinaryV1 import JanusGraphBinaryReader

__all__ = ["FastGraphBinaryReader", "FastGraphBinarySerializer"]

_INT32_AT = struct.Struct(">i").unpack_from
_INT64_AT = struct.Struct(">q").unpack_from
_DOUBLE_AT = struct.Struct(">d").unpack_from
_INT, _LONG, _STRING = DataType.int.value, DataType.long.value, DataType.string.value
_LIST, _SET, _MAP, _NULL = DataType.list.value, DataType.set.value, DataType.map.value, DataType.null.value
_DOUBLE, _BOOLEAN, _TRAVERSER = DataType.double.value, DataType.boolean.value, DataType.traverser.value
_SCALAR_TYPES = (str, int, float, bool)  # map keys HashableDict.of returns unchanged


class FastGraphBinaryReader(JanusGraphBinaryReader):
    """JanusGraph's GraphBinary reader, dispatching on the type byte and reading the common types inline."""

    def __init__(self) -> None:
        super().__init__()
        self._by_code = {data_type.value: reader for data_type, reader in self.deserializers.items()}
        self._enums = {
            code: reader for code, reader in self._by_code.items() if hasattr(reader, "_read_enumval")
        }
        self._members: dict[tuple[int, Any], Any] = {}  # (type byte, wire name) -> enum member (T.id, ...)
        self._reading = threading.local()  # per thread: (the buffer being read, its bytes)

    def read_object(self, b: Any) -> Any:
        """A fully qualified value from a buffer (or from bytes)."""
        return self.to_object(io.BytesIO(b) if isinstance(b, bytes | bytearray) else b)

    def to_object(self, buff: Any, data_type: DataType | None = None, nullable: bool = True) -> Any:
        """The next value: fully qualified when ``data_type`` is None, else a value of that type."""
        if data_type is not None:
            return self.deserializers[data_type].objectify(buff, self, nullable)
        if not nullable or not isinstance(buff, io.BytesIO):  # (a value without its null flag: the stock way)
            return self._stock(buff, nullable)
        outer = getattr(self._reading, "buffer", None)
        if outer is not None and outer[0] is buff:  # a stock deserializer reading a value inside the message
            value, end = self._read(outer[1], buff.tell(), buff)
        else:  # the message's bytes, copied once per message: bytes index and slice faster than a memoryview
            self._reading.buffer = (buff, buff.getvalue())
            try:
                value, end = self._read(self._reading.buffer[1], buff.tell(), buff)
            finally:
                self._reading.buffer = outer
        buff.seek(end)
        return value

    def _read(self, data: Any, pos: int, buff: Any) -> tuple[Any, int]:
        """The fully qualified value at ``pos`` of ``data`` (the bytes of ``buff``) and the position after it."""
        # the most common type is tested first; a map reads its most common keys and values (strings, enum keys,
        # longs) itself, not by a call each
        code = data[pos]
        if code == _NULL:
            return None, pos + 2
        if data[pos + 1] == 0x01:  # the value flag: 1 is a typed null
            return None, pos + 2
        start = pos + 2
        if code == _STRING:
            end = start + 4 + _INT32_AT(data, start)[0]
            return data[start + 4 : end].decode(), end
        if code == _LONG:
            return _INT64_AT(data, start)[0], start + 8
        if code == _INT:
            return _INT32_AT(data, start)[0], start + 4
        if code == _MAP:
            size, pos = _INT32_AT(data, start)[0], start + 4
            result = {}
            read, members, enums = self._read, self._members, self._enums
            for _ in range(size):
                code = data[pos]
                if code == _STRING and data[pos + 1] == 0:
                    end = pos + 6 + _INT32_AT(data, pos + 2)[0]
                    key, pos = data[pos + 6 : end].decode(), end
                elif code in enums and data[pos + 1] == 0 and data[pos + 2] == _STRING and data[pos + 3] == 0:
                    end = pos + 8 + _INT32_AT(data, pos + 4)[0]  # an enum (T.id, ...): its name, a string
                    name = data[pos + 8 : end].decode()
                    key = members.get((code, name))
                    if key is None:
                        key = self._member(code, name)
                    pos = end
                else:
                    key, pos = read(data, pos, buff)
                    if not isinstance(key, _SCALAR_TYPES):
                        key = HashableDict.of(key)
                code = data[pos]
                if code == _STRING and data[pos + 1] == 0:
                    end = pos + 6 + _INT32_AT(data, pos + 2)[0]
                    result[key], pos = data[pos + 6 : end].decode(), end
                elif code == _LONG and data[pos + 1] == 0:
                    result[key], pos = _INT64_AT(data, pos + 2)[0], pos + 10
                else:
                    result[key], pos = read(data, pos, buff)
            return result, pos
        if code in (_LIST, _SET):
            size, pos = _INT32_AT(data, start)[0], start + 4
            items = []
            append, read = items.append, self._read
            for _ in range(size):
                item, pos = read(data, pos, buff)
                append(item)
            return (set(items) if code == _SET else items), pos
        if code == _TRAVERSER:  # the bulk (a long, not qualified), then the value
            value, end = self._read(data, start + 8, buff)
            return Traverser(value, _INT64_AT(data, start)[0]), end
        if code == _DOUBLE:
            return _DOUBLE_AT(data, start)[0], start + 8
        if code == _BOOLEAN:
            return data[start] == 0x01, start + 1
        if code in self._enums:
            name, end = self._read(data, start, buff)
            return self._member(code, name), end
        buff.seek(pos)  # any other type: its stock deserializer, from its type byte
        value = self._stock(buff, True)
        return value, buff.tell()

    def _stock(self, buff: Any, nullable: bool) -> Any:
        """The value at ``buff``'s position (its type byte), read by the stock deserializer of its type."""
        code = buff.read(1)[0]
        if code == _NULL:
            if nullable:
                buff.read(1)
            return None
        return self._by_code[code].objectify(buff, self, nullable)

    def _member(self, code: int, name: str) -> Any:
        """The enum member (T.id, Direction.OUT, ...) of a wire name, converted once per name."""
        member = self._members.get((code, name))
        if member is None:  # the stock conversion, on the name written out again
            data = name.encode("utf-8")
            written = io.BytesIO(bytes([_STRING, 0]) + struct.pack(">i", len(data)) + data)
            member = self._members[code, name] = self._enums[code]._read_enumval(written, self)
        return member


class FastGraphBinarySerializer(JanusGraphBinarySerializersV1):
    """JanusGraph's GraphBinary message serializer reading answers with :class:`FastGraphBinaryReader`."""

    def __init__(self) -> None:
        super().__init__()
        self._graphbinary_reader = FastGraphBinaryReader()
