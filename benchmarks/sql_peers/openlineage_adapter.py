"""openlineage-sql (the Rust parser OpenLineage's integrations use) on the corpus; runs in the peers venv.

openlineage-sql names a target column by the SELECT's output name (it does not map INSERT positions or
column lists), so that name is taken as the target column. It reports value flow only: no weak edges.
"""

from __future__ import annotations

from importlib.metadata import version

import openlineage_sql

from benchmarks.sql_peers.protocol import RESULT, Statement, run_adapter, split_statements, statement

DIALECTS = {"spark": "databricks", "trino": "generic", "tsql": "mssql"}
"""openlineage-sql's name for a sqlglot dialect where they differ; it has no Trino dialect (generic is used)."""


def _table(meta: object) -> str:
    """``schema.name`` of an openlineage DbTableMeta (database, if any, is a catalog level above)."""
    schema = getattr(meta, "schema", None)
    return f"{schema}.{meta.name}" if schema else meta.name


def analyse(sql: str, default_db: str | None, catalog: dict, dialect: str) -> list[Statement]:
    """Lineage of every statement of ``sql`` in the protocol's normalized form."""
    records = []
    for text in split_statements(sql):
        meta = openlineage_sql.parse(
            [text], dialect=DIALECTS.get(dialect, dialect), default_schema=default_db
        )
        if meta is None:
            records.append(statement([], [], [], []))
            continue
        inputs = [_table(table) for table in meta.in_tables]
        outputs = [_table(table) for table in meta.out_tables]
        outputs = outputs or ([RESULT] if inputs else [])
        target = outputs[0] if len(outputs) == 1 else RESULT
        strong = [
            (f"{_table(source.origin)}.{source.name}", f"{target}.{lineage.descendant.name}")
            for lineage in meta.column_lineage
            for source in lineage.lineage
            if source.origin is not None
        ]
        records.append(statement(inputs, outputs, strong, []))
    return records


if __name__ == "__main__":
    run_adapter("openlineage-sql", version("openlineage-sql"), analyse)
