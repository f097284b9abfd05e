"""The in-memory property graph the embedded engine executes against.

Elements are small ``__slots__`` records kept compact, because a warehouse's graph holds millions of them (see the
package README's "Memory" section for the measurements behind each choice): a vertex or edge keeps its property
keys as one tuple shared by every element with the same keys, beside its values; a vertex's single-valued property
is its ``VertexPropRec`` itself (a list only once a key holds several values); a vertex without edges in a
direction shares one empty read-only mapping, and each edge label's adjacency is a list; an exact-value index
entry holding one vertex is that vertex; labels and keys are interned strings. The graph
keeps a label index and exact-value indexes for the configured keys. Every write is recorded twice while a change
set is open: an undo closure (so a rollback restores the graph) and a redo op tuple (handed to the durable log on
commit; the op shapes are documented in ``apply``).
"""

from __future__ import annotations

import datetime
import decimal
import sys
import uuid
from array import array
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from itertools import compress, repeat
from operator import add, itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from lineage_platform.errors import ConstraintViolation, TraversalError

if TYPE_CHECKING:
    from lineage_platform.graph.embedded.strict import SchemaRules

Op = tuple
_SUPPORTED_SCALARS = (str, int, float, bool, bytes)
_SUPPORTED_OBJECTS = (datetime.datetime, datetime.date, datetime.timedelta, decimal.Decimal, uuid.UUID)
NOTHING: Any = MappingProxyType({})  # the shared, read-only "no edges" of a vertex
NO_VALUES: Any = ()  # the shared "no property values" of a vertex
MISSING = object()  # EdgeRec.prop()'s default: tells an absent key from any stored value


def _nothing_to_undo() -> None:
    """The undo of a write another write's undo already reverts."""


class VertexRec:
    """A stored vertex: id, label, properties and adjacency (edge label -> list of EdgeRec, out and in; ``NOTHING``
    while empty). Property keys are ``keys`` (a tuple shared by the vertices with the same keys), and ``vals`` holds
    per key its VertexPropRec, or a list of them when the key holds several values."""

    __slots__ = ("id", "label", "keys", "vals", "out_e", "in_e")

    def __init__(self, vid: Any, label: str) -> None:
        self.id = vid
        self.label = label
        self.keys: tuple[str, ...] = ()
        self.vals: list[VertexPropRec | list[VertexPropRec]] = NO_VALUES
        self.out_e: dict[str, list[EdgeRec]] = NOTHING
        self.in_e: dict[str, list[EdgeRec]] = NOTHING

    def props_of(self, key: str) -> Sequence[VertexPropRec]:
        """The values of one property key, in insertion order (empty when the key is absent)."""
        keys = self.keys
        if key not in keys:
            return ()
        found = self.vals[keys.index(key)]
        return (found,) if type(found) is VertexPropRec else found

    def all_props(self) -> Iterator[VertexPropRec]:
        """Every vertex property, grouped by key in the order the keys were first set."""
        for found in self.vals:
            if type(found) is VertexPropRec:
                yield found
            else:
                yield from found

    def __repr__(self) -> str:
        return f"v[{self.id}]"


class EdgeRec:
    """A stored edge from ``out_v`` to ``in_v`` with single-valued properties: ``keys`` (a tuple shared by the
    edges with the same keys) and ``vals`` (their values, same order)."""

    __slots__ = ("id", "label", "out_v", "in_v", "keys", "vals")

    def __init__(
        self,
        eid: Any,
        label: str,
        out_v: VertexRec,
        in_v: VertexRec,
        keys: tuple[str, ...] = (),
        vals: tuple[Any, ...] = (),
    ) -> None:
        self.id = eid
        self.label = label
        self.out_v = out_v
        self.in_v = in_v
        self.keys = keys
        self.vals = vals

    def prop(self, key: str, default: Any = MISSING) -> Any:
        """The value of property ``key``, or ``default`` when the edge has none."""
        keys = self.keys
        return self.vals[keys.index(key)] if key in keys else default

    @property
    def props(self) -> dict[str, Any]:
        """The properties as a new dict (key -> value)."""
        return dict(zip(self.keys, self.vals))

    def __repr__(self) -> str:
        return f"e[{self.id}][{self.out_v.id}-{self.label}->{self.in_v.id}]"


class VertexPropRec:
    """One value of a vertex property, with its own id and optional meta-properties."""

    __slots__ = ("id", "key", "value", "vertex", "meta")

    def __init__(self, vpid: Any, key: str, value: Any, vertex: VertexRec) -> None:
        self.id = vpid
        self.key = key
        self.value = value
        self.vertex = vertex
        self.meta: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        """A vertex property's label is its key."""
        return self.key

    def __repr__(self) -> str:
        return f"vp[{self.key}->{self.value!r}]"


class PropRec:
    """A key/value property of an edge or a meta-property of a vertex property (made on demand).

    As in TinkerPop, two properties are equal when key and value are, whatever element holds them."""

    __slots__ = ("key", "value", "element")

    def __init__(self, key: str, value: Any, element: EdgeRec | VertexPropRec) -> None:
        self.key = key
        self.value = value
        self.element = element

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, PropRec)
            and self.key == other.key
            and type(self.value) is type(other.value)
            and self.value == other.value
        )

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"p[{self.key}->{self.value!r}]"


def index_key(value: Any) -> Hashable:
    """A hashable key for exact-value indexes; candidates found through it are re-checked with the real predicate."""
    if isinstance(value, bool):
        return ("bool", value)
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return value


def check_value(key: str, value: Any) -> None:
    """Reject property values the store cannot hold."""
    if value is None:
        raise TraversalError(
            f"property '{key}' cannot be set to null",
            hint="drop the property instead (properties('key').drop()) or omit it",
        )
    if isinstance(value, _SUPPORTED_SCALARS):
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            check_value(key, item)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            check_value(key, k)
            check_value(key, v)
        return
    if isinstance(value, _SUPPORTED_OBJECTS):
        return
    raise TraversalError(
        f"property '{key}' has a value of unsupported type {type(value).__name__}",
        hint="use str, int, float, bool, bytes, datetime, Decimal, UUID or lists/sets/maps of them",
    )


class MemGraph:
    """The graph state plus the change log of the transaction that is open on it (at most one)."""

    def __init__(
        self,
        *,
        unique: Iterable[tuple[str, str]] = (),
        indexed: Iterable[str] = (),
        rules: SchemaRules | None = None,
    ) -> None:
        """rules: strict-schema mode (JanusGraph's write rules); None accepts any label, key and value."""
        self.rules = rules
        self._replaying = False
        self.vertices: dict[Any, VertexRec] = {}
        self.edges: dict[Any, EdgeRec] = {}
        self.vertices_by_label: dict[str, dict[Any, VertexRec]] = {}
        self.unique: frozenset[tuple[str, str]] = frozenset(unique)
        self.indexed_keys: frozenset[str] = frozenset(indexed) | {key for _, key in self.unique}
        # value -> the one vertex holding it, or {vertex id: vertex} when several do
        self.indexes: dict[str, dict[Hashable, VertexRec | dict[Any, VertexRec]]] = {
            k: {} for k in self.indexed_keys
        }
        self._key_tuples: dict[tuple[str, ...], tuple[str, ...]] = {(): ()}  # element key tuples, shared
        # (id of a shared key tuple, key) -> the shared tuple with that key added; ids stay valid because
        # _key_tuples keeps every shared tuple alive (one per distinct key set, not per element)
        self._key_added: dict[tuple[int, str], tuple[str, ...]] = {}
        self.next_id = 0
        self._undo: list[Callable[[], None]] = []
        self._redo: list[Op] = []
        self._logging = False

    # ---------------------------------------------------------------- change sets
    def begin_changes(self) -> None:
        """Start recording undo closures and redo ops."""
        self._undo.clear()
        self._redo.clear()
        self._logging = True

    def commit_changes(self) -> list[Op]:
        """Stop recording; return the redo ops of the change set."""
        ops = list(self._redo)
        self._undo.clear()
        self._redo.clear()
        self._logging = False
        return ops

    def pending_ops(self) -> list[Op]:
        """The redo ops written so far in the open change set."""
        return list(self._redo)

    def rollback_changes(self) -> None:
        """Undo every write of the open change set, newest first."""
        self._logging = False
        try:
            while self._undo:
                self._undo.pop()()
        finally:
            self._redo.clear()

    def savepoint(self) -> int:
        """A marker for :meth:`rollback_to` (statement-level atomicity inside a transaction)."""
        return len(self._undo)

    def rollback_to(self, mark: int) -> None:
        """Undo the writes made since ``mark``; the change set stays open."""
        logging, self._logging = self._logging, False
        try:
            while len(self._undo) > mark:
                self._undo.pop()()
            del self._redo[mark:]
        finally:
            self._logging = logging

    @property
    def has_changes(self) -> bool:
        """True when the open change set has written something."""
        return bool(self._redo)

    def _log(self, redo: Op, undo: Callable[[], None]) -> None:
        if self._logging:
            self._redo.append(redo)
            self._undo.append(undo)

    # ---------------------------------------------------------------- ids
    def new_id(self) -> int:
        """A fresh integer id (one counter for vertices, edges and vertex properties, as TinkerGraph does)."""
        nid = self.next_id
        while nid in self.vertices or nid in self.edges:
            nid += 1
        self.next_id = nid + 1
        return nid

    def _see_id(self, given: Any) -> None:
        if isinstance(given, int) and not isinstance(given, bool) and given >= self.next_id:
            self.next_id = given + 1

    # ---------------------------------------------------------------- vertices
    def add_vertex(self, label: str, vid: Any = None) -> VertexRec:
        """Create a vertex; ``vid`` None generates an id."""
        if self.rules is not None and not self._replaying:
            self.rules.check_vertex(label)
        if vid is None:
            vid = self.new_id()
        elif vid in self.vertices:
            raise TraversalError(
                f"Vertex with id already exists: {vid}", hint="use a different T.id or mergeV() to upsert"
            )
        else:
            self._see_id(vid)
        v = VertexRec(vid, sys.intern(label))
        self._relink_vertex(v)
        self._log(("addV", vid, label), lambda: self._unlink_vertex(v))
        return v

    def _unlink_vertex(self, v: VertexRec) -> None:
        del self.vertices[v.id]
        by_label = self.vertices_by_label[v.label]
        del by_label[v.id]
        if not by_label:
            del self.vertices_by_label[v.label]

    def _relink_vertex(self, v: VertexRec) -> None:
        self.vertices[v.id] = v
        bucket = self.vertices_by_label.get(v.label)
        if bucket is None:
            bucket = self.vertices_by_label[v.label] = {}
        bucket[v.id] = v

    def drop_vertex(self, v: VertexRec) -> None:
        """Remove a vertex with its edges and properties."""
        if self.vertices.get(v.id) is not v:
            return
        for adjacency in (v.out_e, v.in_e):
            for e in [e for bucket in adjacency.values() for e in bucket]:
                self.drop_edge(e)
        for vp in list(v.all_props()):
            self.drop_vertex_property(vp)
        self._unlink_vertex(v)
        self._log(("dropV", v.id), lambda: self._relink_vertex(v))

    # ---------------------------------------------------------------- edges
    def add_edge(self, label: str, out_v: VertexRec, in_v: VertexRec, eid: Any = None) -> EdgeRec:
        """Create an edge ``out_v -label-> in_v``."""
        if self.rules is not None and not self._replaying:
            self.rules.check_edge(label, out_v, in_v)
        if eid is None:
            eid = self.new_id()
        elif eid in self.edges:
            raise TraversalError(f"Edge with id already exists: {eid}", hint="use a different T.id")
        else:
            self._see_id(eid)
        e = EdgeRec(eid, sys.intern(label), out_v, in_v)
        self._link_edge(e)
        self._log(("addE", eid, label, out_v.id, in_v.id), lambda: self._unlink_edge(e))
        return e

    def _link_edge(self, e: EdgeRec) -> None:
        self.edges[e.id] = e
        out_v, in_v = e.out_v, e.in_v
        if out_v.out_e is NOTHING:
            out_v.out_e = {}
        bucket = out_v.out_e.get(e.label)
        if bucket is None:
            out_v.out_e[e.label] = [e]
        else:
            bucket.append(e)
        if in_v.in_e is NOTHING:
            in_v.in_e = {}
        bucket = in_v.in_e.get(e.label)
        if bucket is None:
            in_v.in_e[e.label] = [e]
        else:
            bucket.append(e)

    def _unlink_edge(self, e: EdgeRec) -> None:
        del self.edges[e.id]
        for v, attribute in ((e.out_v, "out_e"), (e.in_v, "in_e")):
            adjacency = getattr(v, attribute)
            bucket = adjacency[e.label]
            bucket.remove(e)
            if not bucket:
                del adjacency[e.label]
                if not adjacency:
                    setattr(v, attribute, NOTHING)

    def drop_edge(self, e: EdgeRec) -> None:
        """Remove an edge."""
        if self.edges.get(e.id) is not e:
            return
        self._unlink_edge(e)
        self._log(("dropE", e.id), lambda: self._link_edge(e))

    def shared_keys(self, keys: tuple[str, ...]) -> tuple[str, ...]:
        """The one tuple of these (interned) keys that every element with exactly these keys holds."""
        shared = self._key_tuples.get(keys)
        if shared is None:
            shared = self._key_tuples[keys] = tuple(sys.intern(key) for key in keys)
        return shared

    def _keys_plus(self, keys: tuple[str, ...], key: str) -> tuple[str, ...]:
        """The shared tuple of the shared tuple ``keys`` plus ``key`` (cached: the hot path of adding properties)."""
        step = (id(keys), key)
        added = self._key_added.get(step)
        if added is None:
            added = self._key_added[step] = self.shared_keys((*keys, key))
        return added

    def _set_edge_props(self, e: EdgeRec, keys: tuple[str, ...], vals: tuple[Any, ...]) -> Callable[[], None]:
        """Give ``e`` these keys (a shared tuple) and values; return the undo."""
        old_keys, old_vals = e.keys, e.vals
        e.keys, e.vals = keys, vals

        def undo() -> None:
            e.keys, e.vals = old_keys, old_vals

        return undo

    def set_edge_property(self, e: EdgeRec, key: str, value: Any) -> None:
        """Set (replace) an edge property."""
        check_value(key, value)
        if self.rules is not None and not self._replaying:
            value = self.rules.edge_property(e, key, value)
        keys, vals = e.keys, e.vals
        try:
            at = keys.index(key)
        except ValueError:
            undo = self._set_edge_props(e, self._keys_plus(keys, key), (*vals, value))
        else:
            undo = self._set_edge_props(e, keys, (*vals[:at], value, *vals[at + 1 :]))
        self._log(("setEP", e.id, key, value), undo)

    def drop_edge_property(self, e: EdgeRec, key: str) -> None:
        """Remove an edge property if present."""
        if key not in e.keys:
            return
        at = e.keys.index(key)
        keys = self.shared_keys(e.keys[:at] + e.keys[at + 1 :])
        undo = self._set_edge_props(e, keys, e.vals[:at] + e.vals[at + 1 :])
        self._log(("dropEP", e.id, key), undo)

    # ---------------------------------------------------------------- vertex properties
    def add_vertex_property(self, v: VertexRec, key: str, value: Any, vpid: Any = None) -> VertexPropRec:
        """Append one value to a vertex's (multi-)property, enforcing unique constraints."""
        check_value(key, value)
        if self.rules is not None and not self._replaying:
            value = self.rules.vertex_property(v, key, value)
        if (v.label, key) in self.unique:
            self._check_unique(v, key, value)
        if vpid is None:
            vpid = self.new_id()
        else:
            self._see_id(vpid)
        vp = VertexPropRec(vpid, sys.intern(key), value, v)
        self._link_vp(vp)
        self._log(("addVP", v.id, vpid, key, value), lambda: self._unlink_vp(vp))
        return vp

    def _check_unique(self, v: VertexRec, key: str, value: Any) -> None:
        for other in self.vertices_with(key, value) or ():
            if (
                other is not v
                and other.label == v.label
                and any(type(vp.value) is type(value) and vp.value == value for vp in other.props_of(key))
            ):
                if self.rules is not None:
                    raise self.rules.unique_violation(key, value, v.label)
                raise ConstraintViolation(
                    f"a '{v.label}' vertex with {key}={value!r} already exists (id {other.id})",
                    hint="use mergeV() to upsert, or pick another value",
                )

    def _link_vp(self, vp: VertexPropRec, position: int = -1) -> None:
        """Add ``vp`` to its vertex (at ``position`` among its key's values; -1 = last) and to the index."""
        v, key = vp.vertex, vp.key
        keys = v.keys
        if key not in keys:
            v.keys = self._keys_plus(keys, key)
            if keys:
                v.vals.append(vp)
            else:
                v.vals = [vp]
        else:
            at = keys.index(key)
            found = v.vals[at]
            values = [found] if type(found) is VertexPropRec else found
            if position < 0:
                values.append(vp)
            else:
                values.insert(position, vp)
            v.vals[at] = values
        if key in self.indexed_keys:
            self._index(key, vp.value, v)

    def _index(self, key: str, value: Any, v: VertexRec) -> None:
        index = self.indexes[key]
        ikey = index_key(value)
        bucket = index.get(ikey)
        if bucket is None:
            index[ikey] = v
        elif type(bucket) is VertexRec:
            if bucket is not v:
                index[ikey] = {bucket.id: bucket, v.id: v}
        else:
            bucket[v.id] = v

    def _unlink_vp(self, vp: VertexPropRec) -> None:
        v, key = vp.vertex, vp.key
        at = v.keys.index(key)
        found = v.vals[at]
        if found is vp:
            v.keys = self.shared_keys(v.keys[:at] + v.keys[at + 1 :])
            del v.vals[at]
            if not v.keys:
                v.vals = NO_VALUES
        else:
            found.remove(vp)  # type: ignore[union-attr]
            if len(found) == 1:  # type: ignore[arg-type]
                v.vals[at] = found[0]  # type: ignore[index]
        if key in self.indexed_keys:
            ikey = index_key(vp.value)
            if any(index_key(other.value) == ikey for other in v.props_of(key)):
                return
            index = self.indexes[key]
            bucket = index[ikey]
            if type(bucket) is VertexRec:
                del index[ikey]
                return
            bucket.pop(v.id, None)
            if len(bucket) == 1:
                index[ikey] = next(iter(bucket.values()))

    def add_properties(self, element: VertexRec | EdgeRec, items: Sequence[tuple[str, Any]]) -> None:
        """Give an element without properties these (key, value) pairs of distinct keys: what
        ``add_vertex_property`` / ``set_edge_property`` do for each in turn (the same checks, ids, redo ops and
        undo), with the element's key tuple and values made once instead of grown a property at a time (a merge
        step creating elements). An element that already has properties takes them one at a time."""
        if element.keys:
            add = self.add_vertex_property if type(element) is VertexRec else self.set_edge_property
            for key, value in items:
                add(element, key, value)  # type: ignore[arg-type]
            return
        rules = None if self._replaying else self.rules
        if type(element) is VertexRec:
            self._add_vertex_properties(element, items, rules)
            return
        keys, values = [], []
        for key, value in items:
            check_value(key, value)
            keys.append(key)
            values.append(value if rules is None else rules.edge_property(element, key, value))
        undo = self._set_edge_props(element, self.shared_keys(tuple(keys)), tuple(values))
        self._log_many([("setEP", element.id, key, value) for key, value in zip(keys, values)], undo)

    def _add_vertex_properties(
        self, v: VertexRec, items: Sequence[tuple[str, Any]], rules: SchemaRules | None
    ) -> None:
        unique = self.unique
        props: list[VertexPropRec] = []
        for key, value in items:
            check_value(key, value)
            if rules is not None:
                value = rules.vertex_property(v, key, value)
            if (v.label, key) in unique:
                self._check_unique(v, key, value)
            props.append(VertexPropRec(self.new_id(), sys.intern(key), value, v))
        if not props:
            return
        v.keys = self.shared_keys(tuple(vp.key for vp in props))
        v.vals = props  # type: ignore[assignment]
        indexed = self.indexed_keys
        for vp in props:
            if vp.key in indexed:
                self._index(vp.key, vp.value, v)

        def undo() -> None:
            for vp in reversed(props):
                self._unlink_vp(vp)

        self._log_many([("addVP", v.id, vp.id, vp.key, vp.value) for vp in props], undo)

    def _log_many(self, redo: list[Op], undo: Callable[[], None]) -> None:
        """Record several redo ops undone together by ``undo``: it is the last op's undo (a rollback runs it first),
        the others have none, so the undo and redo lists stay aligned for ``rollback_to``."""
        if self._logging and redo:
            self._redo.extend(redo)
            self._undo.extend([_nothing_to_undo] * (len(redo) - 1))
            self._undo.append(undo)

    def drop_vertex_property(self, vp: VertexPropRec) -> None:
        """Remove one vertex property value (with its meta-properties)."""
        values = vp.vertex.props_of(vp.key)
        if vp not in values:
            return
        position = values.index(vp)
        self._unlink_vp(vp)
        self._log(("dropVP", vp.vertex.id, vp.id), lambda: self._link_vp(vp, position))

    def set_meta(self, vp: VertexPropRec, key: str, value: Any) -> None:
        """Set a meta-property on a vertex property."""
        check_value(key, value)
        if self.rules is not None and not self._replaying:
            value = self.rules.meta_property(key, value)
        meta = vp.meta if vp.meta is not None else {}
        vp.meta = meta
        had, old = key in meta, meta.get(key)
        meta[sys.intern(key)] = value

        def undo() -> None:
            if had:
                meta[key] = old
            else:
                del meta[key]

        self._log(("setMeta", vp.vertex.id, vp.id, key, value), undo)

    def drop_meta(self, vp: VertexPropRec, key: str) -> None:
        """Remove a meta-property if present."""
        if not vp.meta or key not in vp.meta:
            return
        meta, old = vp.meta, vp.meta.pop(key)
        self._log(("dropMeta", vp.vertex.id, vp.id, key), lambda: meta.__setitem__(key, old))

    # ---------------------------------------------------------------- lookups
    def vertices_with(self, key: str, value: Any) -> Iterable[VertexRec] | None:
        """Index candidates for ``has(key, value)``, or None when ``key`` is not indexed."""
        if key not in self.indexed_keys:
            return None
        found = self.indexes[key].get(index_key(value))
        if found is None:
            return ()
        return (found,) if type(found) is VertexRec else found.values()

    # ---------------------------------------------------------------- replay and snapshots
    def apply(self, ops: Iterable[Op]) -> None:
        """Replay redo ops (from the durable log) without recording them.

        Ops: ("addV", vid, label) ("dropV", vid) ("addE", eid, label, out_vid, in_vid) ("dropE", eid)
        ("addVP", vid, vpid, key, value) ("dropVP", vid, vpid) ("setMeta", vid, vpid, key, value)
        ("dropMeta", vid, vpid, key) ("setEP", eid, key, value) ("dropEP", eid, key).
        """
        logging, self._logging = self._logging, False
        self._replaying = True
        try:
            for op in ops:
                self._apply_one(op)
        finally:
            self._logging = logging
            self._replaying = False

    def _find_vp(self, vid: Any, vpid: Any) -> VertexPropRec:
        for vp in self.vertices[vid].all_props():
            if vp.id == vpid:
                return vp
        raise KeyError(vpid)

    def _apply_one(self, op: Op) -> None:
        kind = op[0]
        if kind == "addV":
            self.add_vertex(op[2], op[1])
        elif kind == "dropV":
            self.drop_vertex(self.vertices[op[1]])
        elif kind == "addE":
            self.add_edge(op[2], self.vertices[op[3]], self.vertices[op[4]], op[1])
        elif kind == "dropE":
            self.drop_edge(self.edges[op[1]])
        elif kind == "addVP":
            vp = VertexPropRec(op[2], sys.intern(op[3]), op[4], self.vertices[op[1]])
            self._see_id(op[2])
            self._link_vp(vp)
        elif kind == "dropVP":
            self.drop_vertex_property(self._find_vp(op[1], op[2]))
        elif kind == "setMeta":
            self.set_meta(self._find_vp(op[1], op[2]), op[3], op[4])
        elif kind == "dropMeta":
            self.drop_meta(self._find_vp(op[1], op[2]), op[3])
        elif kind == "setEP":
            self.set_edge_property(self.edges[op[1]], op[2], op[3])
        elif kind == "dropEP":
            self.drop_edge_property(self.edges[op[1]], op[2])
        else:
            raise ValueError(f"unknown graph op {kind!r}")

    def export_state(self) -> tuple:
        """A compact, picklable snapshot: flat tuples of vertices, vertex properties and edges (the store's format
        version 1: an edge's properties are a dict, or None)."""
        vertices = [(v.id, v.label) for v in self.vertices.values()]
        vprops = [
            (v.id, vp.id, vp.key, vp.value, vp.meta) for v in self.vertices.values() for vp in v.all_props()
        ]
        edges = [
            (e.id, e.label, e.out_v.id, e.in_v.id, e.props if e.keys else None) for e in self.edges.values()
        ]
        return (1, self.next_id, vertices, vprops, edges)

    def export_columns(self) -> tuple:
        """The graph laid out by column, as the store's snapshots hold it (state version 2; opening a store
        builds records by mapping over these lists rather than row by row)::

            (2, next_id,
             (vertex ids, label table, label codes),                  # every vertex, in insertion order
             [(key set code, vertex ids, value columns, id columns)],  # vertices whose properties are plain
             vertex property rows (vid, vpid, key, value, meta),      # the others' (as in version 1)
             (edge ids, label table, label codes, out ids, in ids, key set table, key set codes,
              [(key set code, edge positions, value columns)]),     # edges with properties, by key set
             vertex key set table)

        A plain vertex holds one value per key and no meta-properties; such vertices are grouped by their key
        set, with one column of values per key, and one column of property ids per key, or None where every id
        is the vertex id plus the key's position (1-based), as the engine numbers a new vertex's properties.
        Codes and positions are ``array('I')``; columns of vertex ids in groups and of edge end ids are
        ``array('q')`` when they hold only ints that fit (they are looked up, not kept). Equal strings of a column that repeats its values are one
        object, so the snapshot stores each once and the graph opened from it shares them."""
        vertices = list(self.vertices.values())
        vertex_key_sets: dict[tuple[str, ...], int] = {}
        members: dict[int, list[VertexRec]] = {}
        rows: list[tuple] = []
        for v in vertices:
            if not v.keys:
                continue
            if all(type(found) is VertexPropRec and found.meta is None for found in v.vals):
                code = vertex_key_sets.setdefault(v.keys, len(vertex_key_sets))
                members.setdefault(code, []).append(v)
            else:
                rows.extend((v.id, vp.id, vp.key, vp.value, vp.meta) for vp in v.all_props())
        groups = [(code, *_property_columns(group)) for code, group in members.items()]
        edges = list(self.edges.values())
        edge_key_sets, edge_key_codes = _coded([e.keys for e in edges])
        edge_values = [e.vals for e in edges]
        edge_groups = []
        for code, keys in enumerate(edge_key_sets):
            if keys:
                positions = array("I", compress(range(len(edges)), map(code.__eq__, edge_key_codes)))
                tuples = list(map(edge_values.__getitem__, positions))
                columns = [_shared(list(map(itemgetter(at), tuples))) for at in range(len(keys))]
                edge_groups.append((code, positions, columns))
        return (
            2,
            self.next_id,
            ([v.id for v in vertices], *_coded([v.label for v in vertices])),
            groups,
            rows,
            (
                [e.id for e in edges],
                *_coded([e.label for e in edges]),
                _ints([e.out_v.id for e in edges]),
                _ints([e.in_v.id for e in edges]),
                edge_key_sets,
                edge_key_codes,
                edge_groups,
            ),
            list(vertex_key_sets),
        )

    def import_state(self, state: tuple) -> None:
        """Load a snapshot made by :meth:`export_state` (version 1, rows) or :meth:`export_columns` (version 2)
        into this (empty) graph: the hot path of opening a store, so the general link methods are inlined."""
        if state[0] == 2:
            self._import_columns(state)
        else:
            self._import_rows(state)

    def _import_columns(self, state: tuple) -> None:
        _version, next_id, (vids, label_table, label_codes), groups, rows, edges, key_table = state
        intern = sys.intern
        labels = [intern(label) for label in label_table]
        records = list(map(VertexRec, vids, map(labels.__getitem__, label_codes)))
        by_id = self.vertices
        by_id.update(zip(vids, records))
        buckets = [self.vertices_by_label.setdefault(label, {}) for label in labels]
        for vid, v, code in zip(vids, records, label_codes):
            buckets[code][vid] = v
        key_sets = [self.shared_keys(keys) for keys in key_table]
        for code, group_ids, value_columns, id_columns in groups:
            keys = key_sets[code]
            group = list(map(by_id.__getitem__, group_ids))
            props = []
            for position, (key, values, ids) in enumerate(zip(keys, value_columns, id_columns), 1):
                if ids is None:
                    ids = map(add, group_ids, repeat(position))
                props.append(map(VertexPropRec, ids, repeat(key), values, group))
                if key in self.indexed_keys:
                    self._index_all(key, values, group)
            _set_each(group, "keys", repeat(keys))
            _set_each(group, "vals", map(list, zip(*props)))
        self._import_vertex_props(rows)
        eids, label_table, label_codes, out_ids, in_ids, key_table, key_codes, edge_groups = edges
        values: list[tuple[Any, ...]] = [()] * len(eids)
        for _code, positions, columns in edge_groups:
            _consume(map(values.__setitem__, positions, zip(*columns)))
        labels = [intern(label) for label in label_table]
        key_sets = [self.shared_keys(keys) for keys in key_table]
        vertex = by_id.__getitem__
        self._link_edges(
            eids,
            list(
                map(
                    EdgeRec,
                    eids,
                    map(labels.__getitem__, label_codes),
                    map(vertex, out_ids),
                    map(vertex, in_ids),
                    map(key_sets.__getitem__, key_codes),
                    values,
                )
            ),
        )
        self.next_id = max(self.next_id, next_id)

    def _index_all(self, key: str, values: list[Any], group: list[VertexRec]) -> None:
        """Index ``key`` = ``values[i]`` for ``group[i]``: in one update when the values are new and distinct."""
        index = self.indexes[key]
        found = dict(zip(values if set(map(type, values)) == {str} else map(index_key, values), group))
        if len(found) == len(group) and index.keys().isdisjoint(found):
            index.update(found)
            return
        for value, v in zip(values, group):
            self._index(key, value, v)

    def _link_edges(self, ids: list[Any], edges: list[EdgeRec]) -> None:
        """Add new edges (``ids`` are theirs) to the edge map and their ends' adjacency, in order (the inlined
        ``_link_edge``)."""
        self.edges.update(zip(ids, edges))
        for e in edges:
            label = e.label
            out_v = e.out_v
            adjacency = out_v.out_e
            if adjacency is NOTHING:
                out_v.out_e = {label: [e]}
            elif (bucket := adjacency.get(label)) is None:
                adjacency[label] = [e]
            else:
                bucket.append(e)
            in_v = e.in_v
            adjacency = in_v.in_e
            if adjacency is NOTHING:
                in_v.in_e = {label: [e]}
            elif (bucket := adjacency.get(label)) is None:
                adjacency[label] = [e]
            else:
                bucket.append(e)

    def _import_rows(self, state: tuple) -> None:
        _version, next_id, vertices, vprops, edges = state
        intern = sys.intern
        by_id = self.vertices
        by_label = self.vertices_by_label
        for vid, label in vertices:
            v = by_id[vid] = VertexRec(vid, intern(label))
            bucket = by_label.get(v.label)
            if bucket is None:
                bucket = by_label[v.label] = {}
            bucket[vid] = v
        self._import_vertex_props(vprops)
        key_tuples, shared_keys = self._key_tuples, self.shared_keys
        new_edges = []
        for eid, label, out_id, in_id, props in edges:
            label = intern(label)
            if props:
                keys = tuple(props)
                keys = key_tuples.get(keys) or shared_keys(keys)
                new_edges.append(
                    EdgeRec(eid, label, by_id[out_id], by_id[in_id], keys, tuple(props.values()))
                )
            else:
                new_edges.append(EdgeRec(eid, label, by_id[out_id], by_id[in_id]))
        self._link_edges([e.id for e in new_edges], new_edges)
        self.next_id = max(self.next_id, next_id)

    def _import_vertex_props(self, vprops: Iterable[tuple]) -> None:
        """Add vertex property rows ``(vid, vpid, key, value, meta)`` of a snapshot, in order."""
        intern = sys.intern
        by_id = self.vertices
        indexed = self.indexed_keys
        keys_plus, key_added = self._keys_plus, self._key_added
        for vid, vpid, key, value, meta in vprops:
            v = by_id[vid]
            vp = VertexPropRec(vpid, intern(key), value, v)
            if meta is not None:
                vp.meta = meta
            keys = v.keys
            if key not in keys:
                added = key_added.get((id(keys), key)) or keys_plus(keys, key)
                if keys:
                    v.keys = added
                    v.vals.append(vp)
                else:
                    v.keys, v.vals = added, [vp]
            else:
                self._link_vp(vp)  # a second value of the key
                continue
            if key in indexed:
                self._index(key, value, v)


def state_labels(state: tuple) -> tuple[Iterable[tuple[Any, str]], Iterable[tuple[Any, str]]]:
    """``(vertex id, label)`` and ``(edge id, label)`` pairs of a snapshot state (version 1 or 2)."""
    if state[0] != 2:
        _version, _next_id, vertices, _vprops, edges = state
        return vertices, ((eid, label) for eid, label, *_ in edges)
    vids, vertex_labels, vertex_codes = state[2]
    eids, edge_labels, edge_codes = state[5][:3]
    return (
        zip(vids, map(vertex_labels.__getitem__, vertex_codes)),
        zip(eids, map(edge_labels.__getitem__, edge_codes)),
    )


def _coded(items: list[Hashable]) -> tuple[list[Hashable], array]:
    """``items`` as a table of the distinct ones and each item's position in it (an unsigned int array)."""
    table: dict[Hashable, int] = {}
    codes = array("I", [table.setdefault(item, len(table)) for item in items])
    return list(table), codes


def _property_columns(group: list[VertexRec]) -> tuple[list[Any], list[list[Any]], list[list[Any] | None]]:
    """Vertex ids, value columns and property id columns (None where implied) of plain vertices sharing a key
    set (see :meth:`MemGraph.export_columns`)."""
    ids = [v.id for v in group]
    values, prop_ids = [], []
    for position in range(len(group[0].keys)):
        props = [v.vals[position] for v in group]
        values.append(_shared([vp.value for vp in props]))
        column = [vp.id for vp in props]
        prop_ids.append(None if _implied(column, ids, position + 1) else column)
    return _ints(ids), values, prop_ids


def _implied(prop_ids: list[Any], vertex_ids: list[Any], position: int) -> bool:
    """True when every property id is an integer: its vertex's integer id plus ``position``."""
    if set(map(type, prop_ids)) != {int} or set(map(type, vertex_ids)) != {int}:
        return False
    return prop_ids == list(map(add, vertex_ids, repeat(position)))


def _ints(column: list[Any]) -> list[Any] | array:
    """``column`` as an ``array('q')`` when it holds only ints that fit (stored as bytes: nothing to decode when
    a snapshot is read); otherwise ``column`` itself."""
    if set(map(type, column)) - {int}:
        return column
    try:
        return array("q", column)
    except OverflowError:
        return column


def _shared(column: list[Any]) -> list[Any]:
    """``column`` with equal strings made one object, when it holds only strings and repeats them (at least
    half of its values); otherwise ``column`` itself."""
    if set(map(type, column)) != {str} or len(set(column)) * 2 > len(column):
        return column
    first: dict[str, str] = {}
    return list(map(first.setdefault, column, column))


def _consume(iterator: Iterator[Any]) -> None:
    """Run ``iterator`` to its end (a loop in C), for its side effects."""
    deque(iterator, maxlen=0)


def _set_each(records: list[Any], attribute: str, values: Iterable[Any]) -> None:
    """Set ``attribute`` of each record to the next of ``values``."""
    _consume(map(setattr, records, repeat(attribute), values))
