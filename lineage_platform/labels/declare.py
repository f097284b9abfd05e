"""Declared labels: from the CLI, the API or a YAML file, validated as a whole, written in one transaction.

YAML form (line numbers are kept for error messages)::

    labels:
      - name: ods.app_events          # a table, file or column qualifiedName
        labels: [APP=douyin, event=click]
      - name: ods.users.phone
        labels: [PII, SENSITIVITY=high]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.errors import LineageError
from lineage_platform.labels.label import Label
from lineage_platform.labels.rules import RuleSet
from lineage_platform.labels.store import Tagging, drop_edges, read_taggings, vertex_ids, write_taggings


@dataclass(frozen=True)
class Declaration:
    """Labels declared on one table or column; ``line`` is where the declaration came from (0 if not a file)."""

    name: str
    labels: tuple[Label, ...]
    line: int = 0

    def where(self) -> str:
        return f"line {self.line}: " if self.line else ""


def load_declarations(path: str | Path) -> list[Declaration]:
    """Parse a YAML declarations file; errors name the line."""
    text = Path(path).read_text()
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise LineageError(
            f"{path}: not valid YAML: {exc}", hint="fix the file; nothing was written"
        ) from exc
    entries = _entries(root, path)
    declarations = []
    for node in entries:
        line = node.start_mark.line + 1
        fields = (
            {key.value: value for key, value in node.value} if isinstance(node, yaml.MappingNode) else None
        )
        if not fields or "name" not in fields or "labels" not in fields:
            raise LineageError(
                f"{path}: line {line}: each entry needs `name` and `labels`",
                hint="see `lineage labels --help`",
            )
        labels_node = fields["labels"]
        if not isinstance(labels_node, yaml.SequenceNode):
            raise LineageError(
                f"{path}: line {line}: `labels` must be a list", hint="e.g. labels: [PII, APP=douyin]"
            )
        try:
            labels = tuple(Label.parse(str(item.value)) for item in labels_node.value)
        except LineageError as exc:
            raise LineageError(f"{path}: line {line}: {exc.message}", hint=exc.hint) from exc
        declarations.append(Declaration(str(fields["name"].value).lower(), labels, line))
    return declarations


def _entries(root: yaml.Node | None, path: str | Path) -> list[yaml.Node]:
    if root is None:
        return []
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if key.value == "labels" and isinstance(value, yaml.SequenceNode):
                return value.value
    raise LineageError(
        f"{path}: expected a top-level `labels:` list", hint="see the format in `lineage labels --help`"
    )


def declare(
    g: GraphTraversalSource,
    declarations: Iterable[Declaration],
    *,
    rules: RuleSet | None = None,
    declared_by: str = "lineage",
) -> int:
    """Validate all declarations (names exist, no conflicts), then write them in one transaction.

    Returns the number of labels written. Any error leaves the graph unchanged.
    """
    rules = rules or RuleSet()
    declarations = list(declarations)
    ids = vertex_ids(g, (d.name for d in declarations))
    unknown = [d for d in declarations if d.name not in ids]
    if unknown:
        first = unknown[0]
        raise LineageError(
            f"{first.where()}no table or column named {first.name!r} in the graph"
            + (f" (and {len(unknown) - 1} more unknown names)" if len(unknown) > 1 else ""),
            hint="check the names (db.table or db.table.column) or load the lineage first; nothing was written",
        )
    existing = defaultdict(set)
    for _, tagging in read_taggings(g, origin="declared", vertices=list(ids.values())):
        existing[tagging.vertex].add(tagging.label)
    seen: dict[tuple[str, str], tuple[str, Declaration | None]] = {}
    for vertex_name, vertex in ids.items():
        for label in existing[vertex]:
            seen[(vertex_name, label.key)] = (label.value, None)
    taggings = []
    for declaration in declarations:
        for label in declaration.labels:
            if rules.rule(label.key).single:
                previous = seen.setdefault((declaration.name, label.key), (label.value, declaration))
                if previous[0] != label.value:
                    origin = f"line {previous[1].line}" if previous[1] and previous[1].line else "the graph"
                    raise LineageError(
                        f"{declaration.where()}{declaration.name}: {label} conflicts with "
                        f"{label.key}={previous[0]} declared in {origin}",
                        hint=f"{label.key} takes one value; remove one of them; nothing was written",
                    )
            taggings.append(Tagging(ids[declaration.name], label, "declared", declared_by=declared_by))
    return write_taggings(g, taggings)  # one transaction


def undeclare(g: GraphTraversalSource, name: str, labels: Iterable[Label]) -> int:
    """Remove declared labels from a table or column; run ``propagate`` afterwards to withdraw what they spread."""
    ids = vertex_ids(g, [name.lower()])
    if not ids:
        raise LineageError(
            f"no table or column named {name!r} in the graph", hint="use db.table or db.table.column"
        )
    wanted = set(labels)
    edges = [
        e for e, t in read_taggings(g, origin="declared", vertices=list(ids.values())) if t.label in wanted
    ]
    drop_edges(g, edges)
    return len(edges)
