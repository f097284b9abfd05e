"""This project's extractor (``lineage_platform.sql.extract_lineage``) on the corpus; runs in the main venv.

A weak edge whose target is a column (``db.t.c``) is projected onto its dataset (``db.t``), as the scorer
compares weak edges per dataset.
"""

from __future__ import annotations

from importlib.metadata import version

from benchmarks.sql_peers.protocol import Statement, run_adapter, statement
from lineage_platform.sql import extract_lineage


def _dataset_of(target: str, outputs: set[str]) -> str:
    """The dataset a weak edge's target names: itself if it is an output, else its column's table."""
    return target if target.lower() in outputs else target.rsplit(".", 1)[0]


def analyse(sql: str, default_db: str | None, catalog: dict, dialect: str) -> list[Statement]:
    """Lineage of every statement of ``sql`` in the protocol's normalized form (sqlglot dialect names)."""
    records = []
    for lineage in extract_lineage(sql, schema=catalog, dialect=dialect, default_db=default_db):
        outputs = {dataset.name.lower() for dataset in lineage.outputs}
        strong = [(edge.source, edge.target) for edge in lineage.column_edges if edge.strength == "strong"]
        weak = [
            (edge.source, _dataset_of(edge.target, outputs))
            for edge in lineage.column_edges
            if edge.strength == "weak"
        ]
        records.append(statement([d.name for d in lineage.inputs], sorted(outputs), strong, weak))
    return records


if __name__ == "__main__":
    run_adapter("lineage_platform", version("lineage-platform"), analyse)
