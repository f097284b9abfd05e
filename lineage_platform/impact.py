"""Impact analysis: what breaks downstream if a table or column changes, and who would notice.

Read-only consumers count: plain SELECTs (reports, exports, ad-hoc queries of a named job) appear as their
temporary results (kind ``result``), and their jobs and users are among those of the table they read.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.graph.vocabulary import Key
from lineage_platform.trace import trace


@dataclass
class ImpactedDataset:
    """A downstream table, file, column or SELECT result (kind ``result``), with the jobs and users of the
    processes that read or write it."""

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


def impact(
    g: GraphTraversalSource,
    name: str,
    *,
    depth: int | None = None,
    include_selects: bool = True,
    **options: Any,
) -> ImpactReport:
    """Downstream datasets of ``name`` ordered by distance, each with the jobs and users that feed or read it;
    ``include_selects`` (default) counts plain SELECTs as consumers."""
    lineage = trace(g, name, direction="down", depth=depth, include_selects=include_selects, **options)
    touching: dict[Any, list[str]] = defaultdict(list)  # vertex -> processes writing it or reading it
    for edge in lineage.edges:
        touching[edge.target].append(edge.process)
        touching[edge.source].append(edge.process)
    impacted = []
    for node in sorted(lineage.nodes.values(), key=lambda n: (abs(n.depth), n.qualified_name)):
        if node.id == lineage.root:
            continue
        kind = "result" if node.properties.get(Key.DATASET_KIND) == "result" else node.label
        entry = ImpactedDataset(node.qualified_name, kind, abs(node.depth))
        for key in touching[node.id]:
            process = lineage.processes.get(key)
            for run in process.runs if process else []:
                entry.jobs.update([run[Key.JOB]] if run.get(Key.JOB) else [])
                entry.users.update([run[Key.USER]] if run.get(Key.USER) else [])
                start = run.get(Key.START_TIME)
                if start and (entry.last_run is None or start > entry.last_run):
                    entry.last_run = start
        impacted.append(entry)
    return ImpactReport(lineage.nodes[lineage.root].qualified_name, impacted, lineage.notes)
