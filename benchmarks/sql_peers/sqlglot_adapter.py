"""sqlglot's own column lineage (``sqlglot.lineage.lineage``) on the corpus; runs in the main venv.

The lineage module follows the value of each output column of one query down to table columns; it has no
notion of statements, targets or weak edges. The adapter parses the script, takes each statement's query
(the SELECT of an INSERT / CTAS / CREATE VIEW / CACHE TABLE with the statement's WITH clause, or the
statement itself), qualifies it once, asks for all output columns at once (``column=None``) over that
scope and names the target column by the query's output name, as openlineage-sql does. Tables a script
creates are added to the schema so later statements can be qualified against them, as a careful user of
the module would do. Table-level inputs are the tables in the query's scopes, from sqlglot's own
``build_scope``.
"""

from __future__ import annotations

from importlib.metadata import version

import sqlglot
from sqlglot import exp
from sqlglot.lineage import Node, lineage
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import build_scope
from sqlglot.schema import MappingSchema

from benchmarks.sql_peers.protocol import RESULT, Statement, run_adapter, statement

_schemas: dict[tuple[int, str], MappingSchema] = {}


def _catalog_schema(catalog: dict, dialect: str) -> MappingSchema:
    """The catalog as a sqlglot schema, built once per catalog object and dialect (never mutated)."""
    key = (id(catalog), dialect)
    if key not in _schemas:
        _schemas[key] = MappingSchema(catalog, dialect=dialect)
    return _schemas[key]


def _table_name(table: exp.Table) -> str:
    """``db.table`` of a table reference (just ``table`` when unqualified)."""
    return f"{table.db}.{table.name}" if table.db else table.name


def _target_and_query(expression: exp.Expr) -> tuple[exp.Table | None, exp.Query | None]:
    """The table a statement writes (``None`` for a bare query) and the query that feeds it."""
    if isinstance(expression, exp.Query):
        return None, expression
    if isinstance(expression, exp.Insert | exp.Create | exp.Cache) and isinstance(
        expression.expression, exp.Query
    ):
        query = expression.expression
        if expression.args.get("with_") and not query.args.get("with_"):
            query = query.copy()
            query.set("with_", expression.args["with_"].copy())
        return expression.this.find(exp.Table), query
    return None, None


def _leaf_columns(node: Node) -> set[str]:
    """``db.table.column`` of every table-column leaf below a lineage node."""
    leaves = set()
    for child in node.walk():
        if not child.downstream and isinstance(child.source, exp.Table):
            leaves.add(f"{_table_name(child.source)}.{child.name.split('.')[-1]}")
    return leaves


def _with_table(
    schema: MappingSchema, table: exp.Table, columns: list[str], default_db: str | None, dialect: str
) -> MappingSchema:
    """``schema`` plus a table the script creates; the shared catalog schema is copied, never changed."""
    if any(schema is shared for shared in _schemas.values()):
        schema = schema.copy()
    db = table.db or default_db or "default"
    schema.add_table(f"{db}.{table.name}", dict.fromkeys(columns, "string"), dialect=dialect)
    return schema


def analyse(sql: str, default_db: str | None, catalog: dict, dialect: str) -> list[Statement]:
    """Lineage of every statement of ``sql`` in the protocol's normalized form (sqlglot dialect names)."""
    schema = _catalog_schema(catalog, dialect)
    records = []
    for expression in sqlglot.parse(sql, read=dialect):
        table, query = _target_and_query(expression) if expression else (None, None)
        if isinstance(expression, exp.Create) and isinstance(expression.this, exp.Schema):
            defined = [column.name for column in expression.this.expressions]
            schema = _with_table(schema, expression.this.this, defined, default_db, dialect)
        if query is None:
            records.append(statement([], [], [], []))
            continue
        target = _table_name(table) if table else RESULT
        qualified = qualify(
            query,
            dialect=dialect,
            db=default_db,
            schema=schema,
            quote_identifiers=False,
            validate_qualify_columns=False,
        )
        root = build_scope(qualified)
        nodes = lineage(None, qualified, schema=schema, dialect=dialect, scope=root, copy=False)
        strong = [(leaf, f"{target}.{name}") for name, node in nodes.items() for leaf in _leaf_columns(node)]
        inputs = [
            _table_name(source)
            for scope in root.traverse()
            for source in scope.sources.values()
            if isinstance(source, exp.Table)
        ]
        if table is not None and isinstance(expression, exp.Create | exp.Cache):
            schema = _with_table(schema, table, list(qualified.named_selects), default_db, dialect)
        records.append(statement(inputs, [target], strong, []))
    return records


if __name__ == "__main__":
    run_adapter("sqlglot.lineage", version("sqlglot"), analyse)
