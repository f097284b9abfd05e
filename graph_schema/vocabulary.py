"""Generate the Python names of the schema's labels and keys (lineage_platform/graph/vocabulary.py).

The module is generated and checked in, not built at import, so that a misspelt name is an undefined attribute
that ruff, mypy and editors see, and a schema change shows up as a diff (tests/graph/test_dsl.py fails while the
checked-in module is stale).

>>> constant_name("qualifiedName"), constant_name("cdcOutboxCounter"), constant_name("srcIpLo")
('QUALIFIED_NAME', 'CDC_OUTBOX_COUNTER', 'SRC_IP_LO')
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from graph_schema import GraphSchema, load_schema

MODULE_FILE = Path(__file__).resolve().parent.parent / "lineage_platform" / "graph" / "vocabulary.py"
HEADER = "# generated from graph_schema/schema.yaml by `python -m graph_schema.vocabulary` — do not edit\n"


def constant_name(name: str) -> str:
    """The UPPER_SNAKE constant for a camelCase schema name."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def _quoted(name: str) -> str:
    return f'"{name}"'


def _namespace(title: str, doc: str, names: Iterable[str]) -> list[str]:
    body = [f"    {constant_name(name)}: Final = {_quoted(name)}" for name in names]
    return ["", "", f"class {title}:", f'    """{doc}"""', "", *body]


def vocabulary_module(schema: GraphSchema) -> str:
    """The text of the generated module: one constant per vertex label, edge label, property key, label group."""
    groups = [
        f"    {constant_name(name)}: Final = ({', '.join(map(_quoted, labels))}{',' if len(labels) == 1 else ''})"
        for name, labels in schema.label_groups.items()
    ]
    lines = [
        HEADER.rstrip("\n"),
        f'"""The lineage graph\'s label and property key names (schema version {schema.version})."""',
        "",
        "from typing import Final",
        "",
        f"SCHEMA_VERSION: Final = {schema.version}",
        *_namespace("VertexLabel", "Vertex labels.", schema.vertex_labels),
        *_namespace("EdgeLabel", "Edge labels.", schema.edge_labels),
        *_namespace("Key", "Property keys.", schema.property_keys),
        "",
        "",
        "class LabelGroup:",
        '    """Named lists of vertex labels."""',
        "",
        *groups,
        "",
    ]
    return "\n".join(lines)


def write_module(path: Path = MODULE_FILE) -> Path:
    """Regenerate the checked-in module."""
    path.write_text(vocabulary_module(load_schema()))
    return path


if __name__ == "__main__":
    print(write_module())
