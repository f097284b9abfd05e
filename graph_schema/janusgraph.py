"""Generate JanusGraph's management script (Groovy) from the schema definition.

The script is idempotent: it creates only what is missing, so it can be applied to a new or an existing graph.
"""

from __future__ import annotations

from pathlib import Path

from graph_schema import GraphSchema, load_schema, unique_index_name

SCRIPT_FILE = Path(__file__).parent / "janusgraph" / "schema.groovy"
HEADER = (
    "// generated from graph_schema/schema.yaml by `lineage graph init --print-janusgraph` — do not edit\n"
)


def _java_type(name: str) -> str:
    return {"Date": "java.util.Date"}.get(name, name) + ".class"


def _keys(keys: tuple[str, ...]) -> str:
    return ", ".join(f"mgmt.getPropertyKey('{key}')" for key in keys)


def janusgraph_script(schema: GraphSchema) -> str:
    """The Groovy management script that creates the schema's keys, labels and indexes on JanusGraph."""
    lines = [HEADER, "mgmt = graph.openManagement()"]
    for key in schema.property_keys.values():
        lines.append(
            f"if (!mgmt.containsPropertyKey('{key.name}')) mgmt.makePropertyKey('{key.name}')"
            f".dataType({_java_type(key.type)}).cardinality(org.janusgraph.core.Cardinality.{key.cardinality}).make()"
        )
    for label in schema.vertex_labels:
        lines.append(f"if (!mgmt.containsVertexLabel('{label}')) mgmt.makeVertexLabel('{label}').make()")
    for label, multiplicity in schema.edge_labels.items():
        lines.append(
            f"if (!mgmt.containsEdgeLabel('{label}')) mgmt.makeEdgeLabel('{label}')"
            f".multiplicity(org.janusgraph.core.Multiplicity.{multiplicity}).make()"
        )
    for label, keys in schema.vertex_keys.items():
        lines.append(f"mgmt.addProperties(mgmt.getVertexLabel('{label}'), {_keys(keys)})")
    for label, keys in schema.edge_keys.items():
        if keys:
            lines.append(f"mgmt.addProperties(mgmt.getEdgeLabel('{label}'), {_keys(keys)})")
    for label, pairs in schema.connections.items():
        lines += [
            f"mgmt.addConnection(mgmt.getEdgeLabel('{label}'), mgmt.getVertexLabel('{out}'), "
            f"mgmt.getVertexLabel('{in_}'))"
            for out, in_ in pairs
        ]
    for label, keys in schema.vertex_labels.items():
        for key in keys:
            name = unique_index_name(label, key)
            lines += [
                f"if (!mgmt.containsGraphIndex('{name}')) {{",
                f"  idx = mgmt.buildIndex('{name}', Vertex.class).addKey(mgmt.getPropertyKey('{key}'))"
                f".indexOnly(mgmt.getVertexLabel('{label}')).unique().buildCompositeIndex()",
                "  mgmt.setConsistency(idx, org.janusgraph.core.schema.ConsistencyModifier.LOCK)",
                "}",
            ]
    for name, keys in schema.composite_indexes.items():
        adds = "".join(f".addKey(mgmt.getPropertyKey('{key}'))" for key in keys)
        lines.append(
            f"if (!mgmt.containsGraphIndex('{name}')) mgmt.buildIndex('{name}', Vertex.class){adds}.buildCompositeIndex()"
        )
    for name, spec in schema.mixed_indexes.items():
        adds = "".join(
            f".addKey(mgmt.getPropertyKey('{key}'), org.janusgraph.core.schema.Mapping.TEXTSTRING.asParameter())"
            for key in spec["keys"]
        )
        lines.append(
            f"if (!mgmt.containsGraphIndex('{name}')) "
            f"mgmt.buildIndex('{name}', Vertex.class){adds}.buildMixedIndex('{spec['backend']}')"
        )
    for name, spec in schema.edge_indexes.items():
        keys = _keys(spec["keys"])
        lines.append(
            f"if (!mgmt.containsRelationIndex(mgmt.getEdgeLabel('{spec['label']}'), '{name}')) "
            f"mgmt.buildEdgeIndex(mgmt.getEdgeLabel('{spec['label']}'), '{name}', Direction.{spec['direction']}, {keys})"
        )
    lines += ["mgmt.commit()", f"'lineage schema version {schema.version} applied'", ""]
    return "\n".join(lines)


def write_script(path: Path = SCRIPT_FILE) -> Path:
    """Regenerate the checked-in script."""
    path.write_text(janusgraph_script(load_schema()))
    return path
