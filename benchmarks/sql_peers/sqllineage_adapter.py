"""sqllineage (https://github.com/reata/sqllineage) on the corpus; runs in the peers venv.

Each statement goes through its own ``LineageRunner`` with the catalog as metadata, so inputs and outputs
stay per statement. sqllineage reports value paths only (no weak edges) and no column paths for a plain SELECT; a statement
that reads tables but writes none is taken as a SELECT into ``$result``.
"""

from __future__ import annotations

from importlib.metadata import version

from sqllineage.config import SQLLineageConfig
from sqllineage.core.metadata.dummy import DummyMetaDataProvider
from sqllineage.runner import LineageRunner

from benchmarks.sql_peers.protocol import RESULT, Statement, run_adapter, split_statements, statement

DIALECTS = {"hive": "sparksql", "spark": "sparksql"}
"""sqlfluff's name for a sqlglot dialect where they differ. Hive cases use the sparksql grammar: it parses
more of the Hive / Spark corpus than sqlfluff's hive grammar (5 vs 27 failed cases)."""
_providers: dict[int, DummyMetaDataProvider] = {}


def _provider(catalog: dict) -> DummyMetaDataProvider:
    """The catalog as sqllineage metadata, built once per catalog object."""
    key = id(catalog)
    if key not in _providers:
        _providers[key] = DummyMetaDataProvider(
            {
                f"{db}.{table}": list(columns)
                for db, tables in catalog.items()
                for table, columns in tables.items()
            }
        )
    return _providers[key]


def _name(node: object) -> str:
    """sqllineage's ``schema.table`` / ``schema.table.column`` text, with its default-schema marker dropped."""
    return str(node).replace("<default>.", "")


def analyse(sql: str, default_db: str | None, catalog: dict, dialect: str) -> list[Statement]:
    """Lineage of every statement of ``sql`` in the protocol's normalized form."""
    provider = _provider(catalog)
    records = []
    tool_dialect = DIALECTS.get(dialect, dialect)
    with SQLLineageConfig(DEFAULT_SCHEMA=default_db or ""):
        for text in split_statements(sql):
            runner = LineageRunner(text, dialect=tool_dialect, metadata_provider=provider, silent_mode=True)
            strong = [
                (_name(path[0]), _name(path[-1]))
                for path in runner.get_column_lineage(exclude_path_ending_in_subquery=True)
            ]
            inputs = [_name(table) for table in runner.source_tables]
            outputs = [_name(table) for table in runner.target_tables] or ([RESULT] if inputs else [])
            records.append(statement(inputs, outputs, strong, []))
    return records


if __name__ == "__main__":
    run_adapter("sqllineage", version("sqllineage"), analyse)
