"""Human-readable rendering of lineage records for ``lineage sql lineage --format text``."""

from __future__ import annotations

from collections.abc import Iterable

from lineage_platform.model import StatementLineage


def format_text(records: Iterable[StatementLineage]) -> str:
    """One block per statement: operation, inputs, outputs, edges, predicates and errors.

    >>> from lineage_platform.sql import extract_lineage
    >>> print(format_text(extract_lineage("INSERT INTO db.o SELECT a FROM db.t")))
    [0] INSERT
      inputs:  db.t
      outputs: db.o
      db.t.a -> db.o.a  strong IDENTITY
    """
    blocks = []
    for record in records:
        lines = [f"[{record.index}] {record.operation}"]
        if record.inputs:
            lines.append("  inputs:  " + ", ".join(d.name for d in record.inputs))
        if record.outputs:
            lines.append("  outputs: " + ", ".join(d.name for d in record.outputs))
        for edge in record.column_edges:
            extras = " masked" if edge.masking else ""
            extras += f" key={edge.key_path}" if edge.key_path else ""
            lines.append(f"  {edge.source} -> {edge.target}  {edge.strength} {edge.transform}{extras}")
        for predicate in record.predicates:
            lines.append(f"  filter {predicate.table}.{predicate.column} {predicate.op} {predicate.value!r}")
        for issue in record.errors:
            lines.append(f"  {issue.kind} error at {issue.line}:{issue.column}: {issue.message}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
