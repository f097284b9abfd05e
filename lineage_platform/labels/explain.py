"""Why a table or column has its labels: the path from each label back to where it was declared."""

from __future__ import annotations

from dataclasses import dataclass, field

from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.errors import LineageError
from lineage_platform.graph.dsl import __, lineage_source
from lineage_platform.graph.vocabulary import Key
from lineage_platform.labels.label import Label
from lineage_platform.labels.store import Tagging, read_taggings, vertex_ids


@dataclass
class Step:
    """One link of an explanation: ``name`` has ``label`` because of ``tagging``."""

    name: str
    label: Label
    tagging: Tagging
    operation: str | None = None
    query: str | None = None

    def describe(self) -> str:
        """One line for people."""
        t = self.tagging
        if t.origin == "declared":
            return f"{self.name}: {self.label} declared by {t.declared_by or 'unknown'}"
        via = f"{self.operation or 'process'} {t.via}"
        return f"{self.name}: {self.label} from {t.from_name} ({t.from_label}) via {via} [{t.rule}, round {t.round}]"


@dataclass
class Explanation:
    """Where one label of a vertex came from: steps from the vertex back to the declaration."""

    label: Label
    steps: list[Step] = field(default_factory=list)

    def describe(self) -> str:
        """Indented lines, the vertex first, the declaration last."""
        return "\n".join(("  " * depth) + step.describe() for depth, step in enumerate(self.steps))


def explain(g: GraphTraversalSource, name: str) -> list[Explanation]:
    """Explanations of every label on a table or column, sorted by label."""
    name = name.lower()
    if name not in vertex_ids(g, [name]):
        raise LineageError(f"no table or column named {name!r}", hint="use db.table or db.table.column")
    explanations = []
    for label, tagging in sorted(_taggings(g, name).items()):
        explanation = Explanation(label, [Step(name, label, tagging)])
        seen = {(name, label)}
        while tagging.origin == "propagated":
            source_name, source_label = tagging.from_name, Label.parse(tagging.from_label)
            if (source_name, source_label) in seen:
                break
            seen.add((source_name, source_label))
            source = _taggings(g, source_name).get(source_label)
            if source is None:
                break  # the source lost the label since: the next propagation withdraws this one
            explanation.steps.append(Step(source_name, source_label, source))
            tagging = source
        _describe_processes(g, explanation.steps)
        explanations.append(explanation)
    return explanations


def _taggings(g: GraphTraversalSource, name: str) -> dict[Label, Tagging]:
    ids = vertex_ids(g, [name])
    found: dict[Label, Tagging] = {}
    for _, tagging in read_taggings(g, vertices=list(ids.values())):
        if tagging.label not in found or tagging.origin == "declared":
            found[tagging.label] = tagging
    return found


def _describe_processes(g: GraphTraversalSource, steps: list[Step]) -> None:
    names = {s.tagging.via for s in steps if s.tagging.via}
    if not names:
        return
    rows = (
        lineage_source(g)
        .processes(*names)
        .project("name", "operation", "query")
        .by(__.qualified_name())
        .by(__.values(Key.OPERATION))
        .by(__.values(Key.QUERY_TEXT))
        .to_list()
    )
    by_name = {row["name"]: row for row in rows}
    for step in steps:
        row = by_name.get(step.tagging.via)
        if row:
            step.operation, step.query = row["operation"], row["query"]
