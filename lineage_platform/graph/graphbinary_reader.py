"""The driver's GraphBinary reader: JanusGraph's reader with the common types read inline.

gremlinpython 3.7.3's reader finds every value's deserializer through an ``aenum`` constructor call and reads
each value through a lambda and two ``isinstance`` checks on the buffer; a served trace of 100 vertices answers
with ~3,000 values, and reading them took longer than the server took to find them. This reader picks the
deserializer by the type byte from a dict, reads null, int, long, string, list, set and map values itself, and
converts each enum name (``T.id``, ``Direction.OUT``: keys of every element map) to its member once. It gives
the same Python values as the stock reader (map keys go through ``HashableDict.of``, as there); every other type
(elements, paths, JanusGraph's relation ids, ...) goes to the stock deserializers.

>>> from gremlin_python.statics import long
>>> from gremlin_python.structure.io.graphbinaryV1 import GraphBinaryWriter
>>> data = GraphBinaryWriter().write_object({"a": [1, long(2**40), "x", None], 3: {"b"}})
>>> FastGraphBinaryReader().read_object(data)
{'a': [1, 1099511627776, 'x', None], 3: {'b'}}
"""

from __future__ import annotations

import io
import struct
from typing import Any

from gremlin_python.structure.io.graphbinaryV1 import DataType
from gremlin_python.structure.io.util import HashableDict
from janusgraph_python.driver.serializer import JanusGraphBinarySerializersV1
from janusgraph_python.structure.io.graphbinaryV1 import JanusGraphBinaryReader

__all__ = ["FastGraphBinaryReader", "FastGraphBinarySerializer"]

_INT32 = struct.Struct(">i").unpack
_INT64 = struct.Struct(">q").unpack
_INT, _LONG, _STRING = DataType.int.value, DataType.long.value, DataType.string.value
_LIST, _SET, _MAP, _NULL = DataType.list.value, DataType.set.value, DataType.map.value, DataType.null.value
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

    def read_object(self, b: Any) -> Any:
        """A fully qualified value from a buffer (or from bytes)."""
        return self.to_object(io.BytesIO(b) if isinstance(b, bytes | bytearray) else b)

    def to_object(self, buff: Any, data_type: DataType | None = None, nullable: bool = True) -> Any:
        """The next value: fully qualified when ``data_type`` is None, else a value of that type."""
        if data_type is not None:
            return self.deserializers[data_type].objectify(buff, self, nullable)
        read = buff.read
        code = read(1)[0]
        if code == _NULL:
            if nullable:
                read(1)
            return None
        if code not in (_INT, _LONG, _STRING, _LIST, _SET, _MAP):
            if code in self._enums:
                return self._enum(code, buff, nullable)
            return self._by_code[code].objectify(buff, self, nullable)
        if nullable and read(1)[0] == 0x01:  # the value flag: 1 is a typed null
            return None
        if code == _STRING:
            return read(_INT32(read(4))[0]).decode("utf-8")
        if code == _LONG:
            return _INT64(read(8))[0]
        if code == _INT:
            return _INT32(read(4))[0]
        size = _INT32(read(4))[0]
        to_object = self.to_object
        if code == _MAP:
            result = {}
            for _ in range(size):
                key = to_object(buff)
                result[key if isinstance(key, _SCALAR_TYPES) else HashableDict.of(key)] = to_object(buff)
            return result
        items = [to_object(buff) for _ in range(size)]
        return set(items) if code == _SET else items

    def _enum(self, code: int, buff: Any, nullable: bool) -> Any:
        """An enum value (T.id, Direction.OUT, ...): its wire name read, the member converted once per name."""
        if nullable and buff.read(1)[0] == 0x01:
            return None
        name = self.to_object(buff)
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
