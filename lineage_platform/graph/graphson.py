"""GraphSON 3.0 export and import, one vertex per line, through Gremlin traversals only.

The format is the one TinkerPop's ``io()`` step reads and writes (``GraphSONWriter`` with
``wrapAdjacencyList=false``): every line is one ``g:Vertex`` holding its label, its vertex properties
(with ids and meta-properties) and its ``outE``/``inE`` adjacency. Values carry GraphSON type tags
(``g:Int32``, ``g:Int64``, ``g:Double``, ``g:Date``, ``g:UUID``, ``g:List``, ``g:Set``, ``g:Map``, ...).

Both directions talk to the graph only through a ``GraphTraversalSource``, so they work the same on the
embedded engine and on JanusGraph Server. Import is idempotent, so a run killed half-way is completed by
running it again: each vertex and edge is written only when the graph does not hold it yet (matched by the
file's id when ids are kept; with generated ids a vertex by label and ``qualifiedName`` when it has one, an
edge by its ends, label and properties). Lines that are not GraphSON, numbers that do not fit their type
(a ``g:Int64`` of 2^70) and, when a schema is given, labels and property values the schema does not allow
are refused with their line number and reason. Memory stays bounded by the vertex count, not the file: export
holds the list of vertex ids and reads vertices in batches; import streams the file twice (vertices
first, then the edges of each ``outE``), holding only the old-to-new vertex id map.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource, __
from gremlin_python.process.traversal import Cardinality, T
from gremlin_python.statics import long
from gremlin_python.structure.graph import Vertex
from gremlin_python.structure.io import graphsonV2d0
from gremlin_python.structure.io.graphsonV3d0 import FloatIO, GraphSONReader, GraphSONWriter
from janusgraph_python.structure.io.graphsonV3d0 import JanusGraphSONReader, JanusGraphSONWriter

from graph_schema import GraphSchema
from lineage_platform.errors import GraphError, TraversalInterrupted
from lineage_platform.graph.connect import IdStrategy
from lineage_platform.graph.vocabulary import Key
from lineage_platform.private_files import open_private

# progress(phase, done, total): phase "vertices"/"edges"; done and total in the phase's own unit
# (bytes of the file for import, vertices for export)
ProgressCallback = Callable[[str, int, int], None]


class GraphSONFormatError(GraphError):
    """A GraphSON line that cannot be read; carries the 1-based line number."""

    def __init__(self, message: str, *, line: int, hint: str | None = None) -> None:
        super().__init__(f"line {line}: {message}", hint=hint)
        self.line = line
        self.reason = message


@dataclass(frozen=True)
class PropertyRecord:
    """One vertex property: its id, key, value and meta-properties."""

    id: Any
    key: str
    value: Any
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EdgeRecord:
    """One edge as seen from one end: ``other`` is the far vertex's id."""

    id: Any
    label: str
    other: Any
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class VertexRecord:
    """One GraphSON line: a vertex with its properties and adjacent edges."""

    id: Any
    label: str
    properties: list[PropertyRecord] = field(default_factory=list)
    out_edges: list[EdgeRecord] = field(default_factory=list)
    in_edges: list[EdgeRecord] = field(default_factory=list)


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote."""

    vertices: int
    edges: int
    seconds: float


@dataclass(frozen=True)
class ImportSummary:
    """What an import wrote and what it kept aside."""

    vertices: int
    edges: int
    skipped: int
    seconds: float
    bad_lines_file: Path | None = None


# ---------------------------------------------------------------------------------------------- format


class Float32(float):
    """A float read from a GraphSON ``g:Float`` (a Java float); written back as ``g:Float``, where a plain
    Python float is written as ``g:Double``."""


class _Float32IO:
    """Reads ``g:Float`` as `Float32` and writes `Float32` as ``g:Float`` (registered on this module's
    reader and writer only, not in gremlinpython's global tables)."""

    @classmethod
    def objectify(cls, value: Any, reader: Any) -> Float32:
        return Float32(FloatIO.objectify(value, reader))

    @classmethod
    def dictify(cls, value: Float32, writer: Any) -> Any:
        return FloatIO.dictify(value, writer)


class _BoundedInt:
    """Reads ``g:Int64`` (``g:Int32`` in the subclass) refusing values outside the Java type's range (Python ints
    have none); the value keeps the type the library gives it, so it is written back with the same tag."""

    bits = 64
    kind: type[int] = long

    @classmethod
    def objectify(cls, value: Any, reader: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{value!r} is not an integer")
        if not -(2 ** (cls.bits - 1)) <= value < 2 ** (cls.bits - 1):
            raise ValueError(f"{value} does not fit the {cls.bits}-bit integer its type tag says")
        return cls.kind(value)


class _Int32(_BoundedInt):
    bits = 32
    kind = int


def value_reader(version: int = 3, deserializers: dict[str, Any] | None = None) -> GraphSONReader:
    """A GraphSON ``version`` (3 or 2) value reader that keeps ``g:Float`` as `Float32` and refuses integers
    outside their tag's Java range; ``deserializers`` (type tag -> reader) add to or replace its readers."""
    reader = JanusGraphSONReader() if version == 3 else graphsonV2d0.GraphSONReader()
    reader.deserializers.update({"g:Float": _Float32IO, "g:Int32": _Int32, "g:Int64": _BoundedInt})
    reader.deserializers.update(deserializers or {})
    return reader


def value_writer(version: int = 3, serializers: dict[type, Any] | None = None) -> GraphSONWriter:
    """A GraphSON ``version`` (3 or 2) value writer that writes `Float32` as ``g:Float``; ``serializers``
    (Python type -> writer) add to or replace its writers."""
    writer = JanusGraphSONWriter() if version == 3 else graphsonV2d0.GraphSONWriter()
    writer.serializers[Float32] = _Float32IO
    writer.serializers.update(serializers or {})
    return writer


_READER = value_reader()
_WRITER = value_writer()


def check_tags(value: Any, reader: GraphSONReader = _READER) -> None:
    """Refuse type tags ``reader`` does not know (the library reader would keep them as plain dicts)."""
    if isinstance(value, dict):
        tag = value.get("@type")
        if tag is None:
            for item in value.values():
                check_tags(item, reader)
        elif tag not in reader.deserializers:
            raise ValueError(f"unknown GraphSON type {tag!r}")
        elif isinstance(value.get("@value"), dict | list):
            check_tags(value["@value"], reader)
    elif isinstance(value, list):
        for item in value:
            check_tags(item, reader)


def _typed(value: Any) -> Any:
    """Decode one type-tagged GraphSON value."""
    check_tags(value)
    return _READER.to_object(value)


def _edges(adjacency: dict[str, Any], far_end: str) -> list[EdgeRecord]:
    return [
        EdgeRecord(
            id=_typed(edge["id"]),
            label=label,
            other=_typed(edge[far_end]),
            properties={key: _typed(value) for key, value in edge.get("properties", {}).items()},
        )
        for label, edges in adjacency.items()
        for edge in edges
    ]


_ID_TYPES = (int, str, uuid.UUID)


def _check_ids(vertex: VertexRecord) -> None:
    """Raise ValueError unless every element id is a number, text or UUID (what graphs take as ids)."""
    edges = (*vertex.out_edges, *vertex.in_edges)
    ids = [vertex.id, *(e.id for e in edges), *(e.other for e in edges)]
    ids += [p.id for p in vertex.properties if p.id is not None]
    for value in ids:
        if isinstance(value, bool) or not isinstance(value, _ID_TYPES):
            raise ValueError(f"element id {value!r} is not a number, text or UUID")
    for edge in edges:
        if not isinstance(edge.label, str) or not edge.label:
            raise ValueError(f"edge label {edge.label!r} is not text")


def parse_vertex_line(text: str, line: int = 1) -> VertexRecord:
    """Read one GraphSON 3.0 vertex line.

    >>> parse_vertex_line('{"id":{"@type":"g:Int32","@value":1},"label":"person"}').label
    'person'

    Raises:
        GraphSONFormatError: the line is not JSON or not a vertex; ``line`` is put into the message.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GraphSONFormatError(
            f"not JSON ({exc.msg} at column {exc.colno})", line=line, hint="each line must be one JSON vertex"
        ) from exc
    except RecursionError as exc:
        raise GraphSONFormatError("JSON nested too deep to read", line=line, hint="flatten the line") from exc
    if (
        not isinstance(doc, dict)
        or "id" not in doc
        or not isinstance(doc.get("label"), str)
        or not doc["label"]
    ):
        raise GraphSONFormatError(
            "not a vertex: an object with 'id' and a text 'label' is expected",
            line=line,
            hint="is this a one-vertex-per-line GraphSON 3.0 file (wrapAdjacencyList=false)?",
        )
    try:
        properties = [
            PropertyRecord(
                id=_typed(prop.get("id")),
                key=key,
                value=_typed(prop["value"]),
                meta={meta_key: _typed(v) for meta_key, v in prop.get("properties", {}).items()},
            )
            for key, props in doc.get("properties", {}).items()
            for prop in props
        ]
        vertex = VertexRecord(
            id=_typed(doc["id"]),
            label=doc["label"],
            properties=properties,
            out_edges=_edges(doc.get("outE", {}), "inV"),
            in_edges=_edges(doc.get("inE", {}), "outV"),
        )
        _check_ids(vertex)
        return vertex
    except (LookupError, TypeError, AttributeError, ValueError, ArithmeticError, RecursionError) as exc:
        raise GraphSONFormatError(
            f"malformed vertex: {type(exc).__name__}: {exc}",
            line=line,
            hint="compare the line with the GraphSON 3.0 vertex layout (properties, outE, inE)",
        ) from exc


def _adjacency(edges: list[EdgeRecord], far_end: str) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for edge in edges:
        entry: dict[str, Any] = {"id": _WRITER.to_dict(edge.id), far_end: _WRITER.to_dict(edge.other)}
        if edge.properties:
            entry["properties"] = {k: _WRITER.to_dict(v) for k, v in edge.properties.items()}
        grouped.setdefault(edge.label, []).append(entry)
    return grouped


def format_vertex_line(vertex: VertexRecord) -> str:
    """Write one vertex as a GraphSON 3.0 line (no trailing newline); the inverse of `parse_vertex_line`."""
    doc: dict[str, Any] = {"id": _WRITER.to_dict(vertex.id), "label": vertex.label}
    if vertex.in_edges:
        doc["inE"] = _adjacency(vertex.in_edges, "outV")
    if vertex.out_edges:
        doc["outE"] = _adjacency(vertex.out_edges, "inV")
    properties: dict[str, list[dict[str, Any]]] = {}
    for prop in vertex.properties:
        entry: dict[str, Any] = {"id": _WRITER.to_dict(prop.id), "value": _WRITER.to_dict(prop.value)}
        if prop.meta:
            entry["properties"] = {k: _WRITER.to_dict(v) for k, v in prop.meta.items()}
        properties.setdefault(prop.key, []).append(entry)
    if properties:
        doc["properties"] = properties
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- export


def _project_edges(edges: GraphTraversal, far_vertex: GraphTraversal) -> GraphTraversal:
    """Each edge as {id, label, other (far vertex id), properties}, folded into one list."""
    return (
        edges.project("id", "label", "other", "properties")
        .by(__.id_())
        .by(__.label())
        .by(far_vertex.id_())
        .by(__.value_map())
        .fold()
    )


def _project_vertices(vertices: GraphTraversal) -> GraphTraversal:
    """Each vertex as {id, label, properties (with ids and meta-properties), outE, inE}."""
    return (
        vertices.project("id", "label", "properties", "outE", "inE")
        .by(__.id_())
        .by(__.label())
        .by(
            __.properties()
            .project("id", "key", "value", "meta")
            .by(__.id_())
            .by(__.key())
            .by(__.value())
            .by(__.value_map())
            .fold()
        )
        .by(_project_edges(__.out_e(), __.in_v()))
        .by(_project_edges(__.in_e(), __.out_v()))
    )


def _vertex_record(row: dict[str, Any]) -> VertexRecord:
    return VertexRecord(
        id=row["id"],
        label=row["label"],
        properties=[
            PropertyRecord(p["id"], p["key"], p["value"], dict(p["meta"])) for p in row["properties"]
        ],
        out_edges=[EdgeRecord(e["id"], e["label"], e["other"], dict(e["properties"])) for e in row["outE"]],
        in_edges=[EdgeRecord(e["id"], e["label"], e["other"], dict(e["properties"])) for e in row["inE"]],
    )


def read_vertices(g: GraphTraversalSource, batch_size: int = 200) -> Iterator[VertexRecord]:
    """Yield every vertex of the graph with its properties and edges, `batch_size` vertices per traversal."""
    ids = g.V().id_().to_list()
    for start in range(0, len(ids), batch_size):
        for row in _project_vertices(g.V(*ids[start : start + batch_size])).to_list():
            yield _vertex_record(row)


def export_graph(
    g: GraphTraversalSource,
    path_or_file: str | Path | IO[str],
    progress: ProgressCallback | None = None,
    batch_size: int = 200,
) -> ExportSummary:
    """Write the whole graph as GraphSON 3.0, one vertex per line, to a path or an open text file."""
    started = time.perf_counter()
    total = g.V().count().next()
    vertices = edges = 0
    with _open_for_writing(path_or_file) as out:
        for vertex in read_vertices(g, batch_size):
            out.write(format_vertex_line(vertex) + "\n")
            vertices += 1
            edges += len(vertex.out_edges)
            if progress:
                progress("vertices", vertices, total)
    return ExportSummary(vertices=vertices, edges=edges, seconds=time.perf_counter() - started)


class _open_for_writing:
    """Context manager that opens a path, or borrows an already open file without closing it."""

    def __init__(self, path_or_file: str | Path | IO[str]) -> None:
        self._target = path_or_file
        self._owned: IO[str] | None = None

    def __enter__(self) -> IO[str]:
        if isinstance(self._target, str | Path):
            self._owned = open(self._target, "w", encoding="utf-8")
            return self._owned
        return self._target

    def __exit__(self, *exc: object) -> None:
        if self._owned is not None:
            self._owned.close()


# ---------------------------------------------------------------------------------------------- import


def _numbered_lines(path: Path) -> Iterator[tuple[int, int, str]]:
    """Yield (line number, bytes read so far, text) for every non-blank line."""
    done = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            done += len(raw)
            text = raw.decode("utf-8", errors="replace").strip()
            if text:
                yield number, done, text


class _BadLines:
    """The side file where skipped lines wait, each with its line number and reason."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.count = 0
        self._handle: IO[str] | None = None

    def keep(self, line: int, reason: str, text: str) -> None:
        """Record one bad line, or raise when no side file was asked for."""
        if self.path is None:
            raise GraphSONFormatError(
                reason, line=line, hint="fix the line, or pass --skip-bad to keep bad lines aside and go on"
            )
        if self._handle is None:
            self._handle = open_private(self.path, "w", encoding="utf-8")  # closed in close()
        self._handle.write(json.dumps({"line": line, "reason": reason, "text": text}) + "\n")
        self.count += 1

    def close(self) -> None:
        """Flush and close the side file, if one was opened."""
        if self._handle is not None:
            self._handle.close()


def _fits_integer(bits: int) -> Callable[[Any], bool]:
    return lambda v: (
        isinstance(v, int) and not isinstance(v, bool) and -(2 ** (bits - 1)) <= v < 2 ** (bits - 1)
    )


_FITS: dict[str, Callable[[Any], bool]] = {
    "String": lambda v: isinstance(v, str),
    "Long": _fits_integer(64),
    "Integer": _fits_integer(32),
    "Boolean": lambda v: isinstance(v, bool),
    "Double": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "Date": lambda v: isinstance(v, datetime),
}


def check_schema(vertex: VertexRecord, schema: GraphSchema) -> None:
    """Raise ValueError saying what of ``vertex`` the schema does not allow: an undeclared vertex or edge label,
    or a value of a declared property key that does not fit the key's type (a Long of 2^70, text for a Long)."""
    if vertex.label not in schema.vertex_labels:
        raise ValueError(f"unknown vertex label {vertex.label!r}")
    for edge in (*vertex.out_edges, *vertex.in_edges):
        if edge.label not in schema.edge_labels:
            raise ValueError(f"unknown edge label {edge.label!r}")
    values = [(p.key, p.value) for p in vertex.properties] + [
        item for edge in vertex.out_edges for item in edge.properties.items()
    ]
    for key, value in values:
        declared = schema.property_keys.get(key)
        if declared is not None and not _FITS[declared.type](value):
            raise ValueError(f"property {key!r} is {value!r}, which is not a {declared.type}")


def _single_value(vertex: VertexRecord, key: str) -> Any:
    values = [prop.value for prop in vertex.properties if prop.key == key]
    return values[0] if len(values) == 1 else None


def _add_vertex(vertex: VertexRecord, keep_ids: bool) -> GraphTraversal:
    """An anonymous traversal returning the id of `vertex` in the graph, creating it with its properties
    unless the graph holds it already (the same id, or with generated ids the same label and qualifiedName)."""
    step = __.add_v(vertex.label)
    if keep_ids:
        step = step.property(T.id, vertex.id)
    counts: dict[str, int] = {}
    for prop in vertex.properties:
        counts[prop.key] = counts.get(prop.key, 0) + 1
    for prop in vertex.properties:
        meta = [item for pair in prop.meta.items() for item in pair]
        if keep_ids and prop.id is not None:
            meta += [T.id, prop.id]
        if counts[prop.key] > 1:
            step = step.property(Cardinality.list_, prop.key, prop.value, *meta)
        else:
            step = step.property(prop.key, prop.value, *meta)
    qualified_name = _single_value(vertex, Key.QUALIFIED_NAME)
    if keep_ids:
        existing = __.V(vertex.id)
    elif isinstance(qualified_name, str):
        existing = __.V().has(vertex.label, Key.QUALIFIED_NAME, qualified_name)
    else:
        return step.id_()
    return existing.fold().coalesce(__.unfold().id_(), step.id_())


def _add_edge(out_id: Any, edge: EdgeRecord, keep_ids: bool) -> GraphTraversal:
    """An anonymous traversal returning the id of `edge` in the graph, creating it (ends as vertex references,
    which every Gremlin server resolves by id) unless the out vertex has it already: the same id, or with
    generated ids the same label, far end and properties."""
    step = __.add_e(edge.label).from_(Vertex(out_id)).to(Vertex(edge.other))
    existing = __.V(out_id).out_e(edge.label).where(__.in_v().has_id(edge.other))
    if keep_ids:
        step = step.property(T.id, edge.id)
        existing = existing.has_id(edge.id)
    for key, value in edge.properties.items():
        step = step.property(key, value)
        if not keep_ids:
            existing = existing.has(key, value)
    return existing.fold().coalesce(__.unfold().id_(), step.id_())


def _run_side_by_side(g: GraphTraversalSource, writes: list[GraphTraversal]) -> list[Any]:
    """Run several element-creating traversals in one request, as the ``by()`` branches of one
    ``project()``; this stays flat however many there are (chaining ``addV().addV()...`` nests one step
    per element, which deep batches cannot afford). Returns each traversal's result, in order."""
    keys = [str(index) for index in range(len(writes))]
    traversal = g.inject(0).project(*keys)
    for write in writes:
        traversal = traversal.by(write)
    row = traversal.next()
    return [row[key] for key in keys]


def _write_vertices(
    g: GraphTraversalSource, batch: list[tuple[int, str, VertexRecord]], keep_ids: bool
) -> dict[Any, Any]:
    """Create a batch of vertices in one request; return old id -> new id."""
    new_ids = _run_side_by_side(g, [_add_vertex(vertex, keep_ids) for _, _, vertex in batch])
    return {vertex.id: new_id for (_, _, vertex), new_id in zip(batch, new_ids)}


def _write_edges(
    g: GraphTraversalSource, batch: list[tuple[int, str, Any, EdgeRecord]], keep_ids: bool
) -> None:
    """Create a batch of edges, each given as (line, text, new out-vertex id, edge), in one request."""
    _run_side_by_side(g, [_add_edge(out_id, edge, keep_ids) for _, _, out_id, edge in batch])


# what a graph raises when it refuses a write: the embedded engine's errors, or a Gremlin Server's reply
_REJECTED = (GraphError, GremlinServerError)
# Gremlin Server statuses that are about the server's state, not the request: temporary (596), timeout (598)
_SERVER_STATE_STATUSES = frozenset({596, 598})


def _is_about_the_lines(exc: Exception) -> bool:
    """Whether a rejected write is the lines' fault; a busy or timed-out graph is not, and must not put good
    lines in the side file."""
    if getattr(exc, "transient", False) or isinstance(exc, TraversalInterrupted):
        return False
    return getattr(exc, "status_code", None) not in _SERVER_STATE_STATUSES


def _flush(write: Callable[[list[Any]], None], batch: list[Any], bad: _BadLines) -> None:
    """Write a batch; when bad lines are kept aside and the batch fails, retry item by item so only the
    rejected items (each one is ``(line, text, ...)``) go to the side file. A graph that is busy or timed out
    stops the import with its error instead."""
    try:
        write(batch)
        return
    except _REJECTED as exc:
        if bad.path is None or not _is_about_the_lines(exc):
            raise
    for item in batch:
        try:
            write([item])
        except _REJECTED as exc:
            if not _is_about_the_lines(exc):
                raise
            bad.keep(item[0], f"rejected by the graph: {exc}", item[1])


@dataclass
class _ImportRun:
    """One import: the graph, the file, the settings, and what has been written so far."""

    g: GraphTraversalSource
    path: Path
    batch_size: int
    keep_ids: bool
    bad: _BadLines
    progress: ProgressCallback | None
    schema: GraphSchema | None = None
    id_map: dict[Any, Any] = field(default_factory=dict)  # file vertex id -> graph vertex id
    unreadable: set[int] = field(default_factory=set)  # line numbers kept aside in the first pass
    edges_written: int = 0

    def _report(self, phase: str, done: int) -> None:
        if self.progress:
            self.progress(phase, done, self.path.stat().st_size)

    def _write_vertices(self, batch: list[tuple[int, str, VertexRecord]]) -> None:
        self.id_map.update(_write_vertices(self.g, batch, self.keep_ids))

    def _write_edges(self, batch: list[tuple[int, str, Any, EdgeRecord]]) -> None:
        _write_edges(self.g, batch, self.keep_ids)
        self.edges_written += len(batch)

    def _vertex(self, text: str, number: int) -> VertexRecord:
        vertex = parse_vertex_line(text, number)
        if self.schema is not None:
            try:
                check_schema(vertex, self.schema)
            except ValueError as exc:
                raise GraphSONFormatError(
                    str(exc),
                    line=number,
                    hint="the lineage schema (graph_schema/schema.yaml) does not allow it",
                ) from exc
        return vertex

    def vertex_pass(self) -> None:
        """First pass: every readable line becomes a vertex, `batch_size` per traversal."""
        batch: list[tuple[int, str, VertexRecord]] = []
        for number, done, text in _numbered_lines(self.path):
            try:
                batch.append((number, text, self._vertex(text, number)))
            except GraphSONFormatError as exc:
                if self.bad.path is None:
                    raise
                self.bad.keep(number, exc.reason, text)
                self.unreadable.add(number)
            if len(batch) >= self.batch_size:
                _flush(self._write_vertices, batch, self.bad)
                batch = []
                self._report("vertices", done)
        if batch:
            _flush(self._write_vertices, batch, self.bad)
        self._report("vertices", self.path.stat().st_size)

    def edge_pass(self) -> None:
        """Second pass: the ``outE`` edges of every imported vertex, to ends that were imported too."""
        batch: list[tuple[int, str, Any, EdgeRecord]] = []
        for number, done, text in _numbered_lines(self.path):
            if number in self.unreadable:
                continue
            vertex = parse_vertex_line(text, number)
            if vertex.id not in self.id_map:
                continue  # the graph rejected this vertex; its line is already kept aside
            for edge in vertex.out_edges:
                if edge.other not in self.id_map:
                    reason = f"edge {edge.id!r} goes to vertex {edge.other!r}, which was not imported"
                    self.bad.keep(number, reason, text)
                    continue
                batch.append(
                    (number, text, self.id_map[vertex.id], replace(edge, other=self.id_map[edge.other]))
                )
            if len(batch) >= self.batch_size:
                _flush(self._write_edges, batch, self.bad)
                batch = []
                self._report("edges", done)
        if batch:
            _flush(self._write_edges, batch, self.bad)
        self._report("edges", self.path.stat().st_size)


def import_graph(
    g: GraphTraversalSource,
    path: str | Path,
    batch_size: int = 100,
    id_strategy: IdStrategy | str = IdStrategy.KEEP,
    bad_lines_file: str | Path | None = None,
    progress: ProgressCallback | None = None,
    schema: GraphSchema | None = None,
) -> ImportSummary:
    """Load a GraphSON 3.0 file (one vertex per line) into the graph behind `g`.

    Vertices are written first, `batch_size` per traversal; the edges follow in a second pass over the
    file, taken from each vertex's ``outE`` so every edge is written once. Vertex-property ids are always
    chosen by the graph (JanusGraph cannot take them). With ``bad_lines_file`` a line that cannot be read
    or written is recorded there (line number, reason, text) and the import goes on; without it the first
    bad line raises `GraphSONFormatError`. With ``schema`` a line whose labels or property values the schema
    does not allow is a bad line too. Elements the graph holds already are left as they are, so running the
    import again after a kill, or after fixing the bad lines, completes the graph.
    """
    started = time.perf_counter()
    path = Path(path)
    if not path.is_file():
        raise GraphError(f"no such file: {path}", hint="pass the path of a GraphSON 3.0 file")
    if id_strategy not in {s.value for s in IdStrategy}:
        raise GraphError(f"unknown id strategy {id_strategy!r}", hint="use 'keep' or 'generate'")
    if batch_size < 1:
        raise GraphError(f"batch size must be at least 1, got {batch_size}", hint="pass --batch-size 100")
    bad = _BadLines(Path(bad_lines_file) if bad_lines_file else None)
    run = _ImportRun(g, path, batch_size, IdStrategy(id_strategy) is IdStrategy.KEEP, bad, progress, schema)
    try:
        run.vertex_pass()
        run.edge_pass()
    finally:
        bad.close()
    return ImportSummary(
        vertices=len(run.id_map),
        edges=run.edges_written,
        skipped=bad.count,
        seconds=time.perf_counter() - started,
        bad_lines_file=bad.path if bad.count else None,
    )
