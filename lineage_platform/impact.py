"""Impact analysis: what breaks downstream if a table or column changes, and who would notice."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.trace import trace


@dataclass
class ImpactedDataset:
    """A downstream table, file or column, with the jobs and users of the processes that read or write it."""

    qualified_name: str
    kind: str
    hops: int
    jobs: set[str] = field(default_factory=set)
    users: set[str] = field(default_factory=set)
    last_run: str | None = None


@dataclass
class ImpactReport:
    """Everything downstream of one vertex."""

    root: str
    impacted: list[ImpactedDataset]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (sets become sorted lists)."""
        return {
            "root": self.root,
            "notes": self.notes,
            "impacted": [
                {**d.__dict__, "jobs": sorted(d.jobs), "users": sorted(d.users)} for d in self.impacted
            ],
        }


def impact(g: GraphTraversalSource, name: str, *, depth: int | None = None, **options: Any) -> ImpactReport:
    """Downstream datasets of ``name`` ordered by distance, each with the jobs and users that feed or read it."""
    lineage = trace(g, name, direction="down", depth=depth, **options)
    touching: dict[Any, list[str]] = defaultdict(list)  # vertex -> processes writing it or reading it
    for edge in lineage.edges:
        touching[edge.target].append(edge.process)
        touching[edge.source].append(edge.process)
    impacted = []
    for node in sorted(lineage.nodes.values(), key=lambda n: (abs(n.depth), n.qualified_name)):
        if node.id == lineage.root:
            continue
        entry = ImpactedDataset(node.qualified_name, node.label, abs(node.depth))
        for key in touching[node.id]:
            process = lineage.processes.get(key)
            for run in process.runs if process else []:
                entry.jobs.update([run["job"]] if run.get("job") else [])
                entry.users.update([run["user"]] if run.get("user") else [])
                if run.get("startTime") and (entry.last_run is None or run["startTime"] > entry.last_run):
                    entry.last_run = run["startTime"]
        impacted.append(entry)
    return ImpactReport(lineage.nodes[lineage.root].qualified_name, impacted, lineage.notes)
