"""Pass: decide the statement's operation and split it into query units (query + written dataset)."""

from __future__ import annotations

import re

from sqlglot import exp

from lineage_platform.model import RESULT_DATASET, Dataset
from lineage_platform.sql.analysis import QueryUnit, StatementAnalysis
from lineage_platform.sql.session import SessionEffect

_SET_VARIABLE = re.compile(
    r"^\s*SET\s+(?:(hivevar|hiveconf|define):)?([\w.\-]+)\s*=\s*(.*?)\s*;?\s*$", re.I | re.S
)
_NO_LINEAGE = (
    exp.Show,
    exp.Describe,
    exp.Command,
    exp.Analyze,
    exp.Uncache,
    exp.Refresh,
    exp.Transaction,
    exp.Alter,
)
"""Statements that read or write no data (session, metadata and maintenance commands)."""


def classify_statement(analysis: StatementAnalysis) -> StatementAnalysis:
    """Set ``operation``, the query ``units`` and the datasets that need no query to know.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> a = classify_statement(new_analysis("INSERT OVERWRITE TABLE db.t PARTITION (dt='1') SELECT a FROM s"))
    >>> a.operation, a.units[0].target.name, a.units[0].static_partitions
    ('INSERT_OVERWRITE', 'db.t', ('dt',))
    """
    expression = analysis.expression
    handler = _HANDLERS.get(type(expression))
    if handler is not None:
        handler(analysis, expression)
    elif isinstance(expression, exp.Query):
        analysis.operation = "SELECT"
        analysis.units.append(QueryUnit(Dataset(RESULT_DATASET, "temp"), expression))
    elif isinstance(expression, exp.Command) and expression.this in ("EXPORT", "IMPORT"):
        _hive_command(analysis, expression)
    elif not isinstance(expression, _NO_LINEAGE):
        analysis.issue(f"{expression.key.upper()} statements are not analysed for lineage", "unsupported")
    return analysis


def _insert(analysis: StatementAnalysis, insert: exp.Insert) -> None:
    analysis.operation = "INSERT_OVERWRITE" if insert.args.get("overwrite") else "INSERT"
    unit = _insert_unit(analysis, insert, insert.expression)
    if isinstance(insert.this, exp.Directory):
        analysis.operation = "INSERT_OVERWRITE_DIRECTORY"
    if unit is not None:
        analysis.units.append(unit)


def _insert_unit(analysis: StatementAnalysis, insert: exp.Insert, query: exp.Expr | None) -> QueryUnit | None:
    """The unit of one INSERT: target, explicit/partition columns and the query (CTEs moved onto it)."""
    if not isinstance(query, exp.Query):
        analysis.issue("INSERT ... VALUES writes constants only; no column lineage", "unsupported", insert)
        target = insert.this.this if isinstance(insert.this, exp.Schema) else insert.this
        if isinstance(target, exp.Table):
            analysis.outputs.append(Dataset(_qualified(analysis, target), _kind(analysis, target)))
        return None
    ctes = insert.args.get("with_")
    if ctes is not None and not query.args.get("with_"):
        query.set("with_", ctes.pop())
    target = insert.this
    if isinstance(target, exp.Directory):
        return QueryUnit(Dataset(target.this.name, "path"), query)
    explicit: tuple[str, ...] | None = None
    if isinstance(target, exp.Schema):
        explicit = tuple(c.name.lower() for c in target.expressions)
        target = target.this
    static, dynamic = _partitions(target.args.get("partition"))
    name = _qualified(analysis, target)
    if explicit is None:
        known = analysis.session.columns_of(name)
        if known is not None:
            explicit = tuple(c for c in known if c not in static)
    elif dynamic:
        explicit = explicit + tuple(d for d in dynamic if d not in explicit)
    return QueryUnit(Dataset(name, _kind(analysis, target)), query, explicit, static, dynamic)


def _multi_insert(analysis: StatementAnalysis, multi: exp.MultitableInserts) -> None:
    source = multi.args.get("source")
    ctes = multi.args.get("with_")
    inserts = [i for i in multi.expressions if isinstance(i, exp.Insert)]
    analysis.operation = "INSERT_OVERWRITE" if any(i.args.get("overwrite") for i in inserts) else "INSERT"
    for insert in inserts:
        query = insert.expression
        if isinstance(query, exp.Select) and source is not None and not query.args.get("from_"):
            _share_source(query, source)
        if isinstance(query, exp.Query) and ctes is not None and not query.args.get("with_"):
            query.set("with_", ctes.copy())
        unit = _insert_unit(analysis, insert, query)
        if unit is not None:
            analysis.units.append(unit)


def _share_source(query: exp.Select, source: exp.Expr) -> None:
    """Give one INSERT of a multi-insert the shared ``FROM`` (its joins and LATERAL VIEWs included)."""
    shared = source.copy()
    for key in ("joins", "laterals"):
        attached = shared.args.get(key)
        if attached:
            shared.set(key, None)
            query.set(key, [*attached, *(query.args.get(key) or [])])
    query.set("from_", exp.From(this=shared))


def _create(analysis: StatementAnalysis, create: exp.Create) -> None:
    kind = (create.args.get("kind") or "").upper()
    target = create.this.this if isinstance(create.this, exp.Schema) else create.this
    if kind not in ("TABLE", "VIEW") or not isinstance(target, exp.Table):
        return  # functions, databases, indexes: no data is read or written
    name = _qualified(analysis, target)
    dataset_kind = "temp" if create.find(exp.TemporaryProperty) is not None else kind.lower()
    query = create.expression
    if isinstance(query, exp.Query):
        analysis.operation = "CREATE_VIEW" if kind == "VIEW" else "CREATE_AS_SELECT"
        explicit = (
            tuple(c.name.lower() for c in create.this.expressions) if create.this is not target else None
        )
        analysis.units.append(QueryUnit(Dataset(name, dataset_kind), query, explicit))  # type: ignore[arg-type]
        return
    analysis.operation = "CREATE_TABLE"
    like = create.find(exp.LikeProperty)
    columns = _declared_columns(create)
    if like is not None and isinstance(like.this, exp.Table):
        source = _qualified(analysis, like.this)
        columns = analysis.session.columns_of(source) or ()
        analysis.inputs.append(Dataset(source, _kind(analysis, like.this), columns))
    analysis.outputs.append(Dataset(name, dataset_kind, columns))


def _clear(analysis: StatementAnalysis, statement: exp.TruncateTable | exp.Delete) -> None:
    """TRUNCATE and DELETE write their tables (rows removed) and read nothing else."""
    tables = statement.expressions if isinstance(statement, exp.TruncateTable) else [statement.this]
    for table in tables:
        if isinstance(table, exp.Table):
            analysis.outputs.append(Dataset(_qualified(analysis, table), _kind(analysis, table)))


def _cache(analysis: StatementAnalysis, cache: exp.Cache) -> None:
    query = cache.expression
    if isinstance(query, exp.Query):
        analysis.operation = "CREATE_VIEW"
        name = _qualified(analysis, cache.this)
        analysis.units.append(QueryUnit(Dataset(name, "temp"), query))


def _drop(analysis: StatementAnalysis, drop: exp.Drop) -> None:
    object_kind = (drop.args.get("kind") or "TABLE").upper()
    if object_kind not in ("TABLE", "VIEW"):
        return  # DROP DATABASE / SCHEMA / INDEX ... names no dataset
    analysis.operation = "DROP"
    kind = "view" if object_kind == "VIEW" else "table"
    for table in drop.args.get("tables") or [drop.this]:
        if isinstance(table, exp.Table):
            analysis.outputs.append(Dataset(_qualified(analysis, table), kind))


def _alter(analysis: StatementAnalysis, alter: exp.Alter) -> None:
    rename = next((a for a in alter.args.get("actions") or [] if isinstance(a, exp.AlterRename)), None)
    if rename is None or not isinstance(alter.this, exp.Table):
        analysis.operation = "OTHER"
        return
    analysis.operation = "ALTER_RENAME"
    old = _qualified(analysis, alter.this)
    new = _qualified(analysis, rename.this)
    columns = analysis.session.columns_of(old) or ()
    analysis.inputs.append(Dataset(old, _kind(analysis, alter.this), columns))
    analysis.outputs.append(Dataset(new, _kind(analysis, alter.this), columns))


def _load(analysis: StatementAnalysis, load: exp.LoadData) -> None:
    analysis.operation = "LOAD"
    path = load.args.get("inpath")
    analysis.inputs.append(Dataset(path.name if path is not None else "", "path"))
    analysis.outputs.append(Dataset(_qualified(analysis, load.this), _kind(analysis, load.this)))


def _hive_command(analysis: StatementAnalysis, command: exp.Command) -> None:
    table, path = command.expression.expressions
    analysis.operation = command.this
    table_dataset = Dataset(_qualified(analysis, table), _kind(analysis, table))
    path_dataset = Dataset(path.name, "path")
    if command.this == "EXPORT":
        analysis.inputs.append(table_dataset)
        analysis.outputs.append(path_dataset)
    else:
        analysis.inputs.append(path_dataset)
        analysis.outputs.append(table_dataset)


def _use(analysis: StatementAnalysis, use: exp.Use) -> None:
    analysis.operation = "USE"
    analysis.effect = SessionEffect(use_db=use.this.name.lower() if use.this else None)


def _set(analysis: StatementAnalysis, _: exp.Set) -> None:
    analysis.operation = "SET"
    match = _SET_VARIABLE.match(analysis.sql)
    if match:
        prefix, name, value = match.groups()
        key = f"{prefix.lower()}:{name}" if prefix else name
        analysis.effect = SessionEffect(variables=((key, value), (name, value)))


def _merge(analysis: StatementAnalysis, merge: exp.Merge) -> None:
    """MERGE becomes one query: every assigned value selected from target JOIN source ON the condition."""
    analysis.operation = "MERGE"
    target = merge.this
    source = merge.args.get("using")
    ctes = merge.args.get("with_")
    assignments: dict[str, list[exp.Expr]] = {}
    conditions: list[exp.Expr] = []
    for when in merge.args["whens"].expressions:
        then = when.args.get("then")
        if when.args.get("condition") is not None:
            conditions.append(when.args["condition"].copy())
        for name, value in _merge_assignments(analysis, then, source, ctes):
            assignments.setdefault(name, []).append(value)
    name = _qualified(analysis, target)
    if not assignments:
        analysis.outputs.append(Dataset(name, _kind(analysis, target)))
        return
    names = tuple(n for n, values in assignments.items() for _ in values)
    projections = [v for values in assignments.values() for v in values]
    query = exp.select(*projections).from_(target.copy()).join(source.copy(), on=merge.args["on"].copy())
    if conditions:
        query = query.where(exp.or_(*conditions))
    if ctes is not None:
        query.set("with_", ctes.copy())
    analysis.units.append(QueryUnit(Dataset(name, _kind(analysis, target)), query, names))


def _merge_assignments(
    analysis: StatementAnalysis, then: exp.Expr | None, source: exp.Expr, ctes: exp.Expr | None
) -> list[tuple[str, exp.Expr]]:
    """(target column, value) pairs of one WHEN branch; ``UPDATE SET *`` / ``INSERT *`` copy by name."""
    if isinstance(then, exp.Update):
        if any(isinstance(a, exp.Star) for a in then.expressions):
            return _copy_all(analysis, source, ctes, then)
        return [(a.this.name.lower(), a.expression.copy()) for a in then.expressions]
    if isinstance(then, exp.Insert):
        if isinstance(then.this, exp.Star):
            return _copy_all(analysis, source, ctes, then)
        if isinstance(then.this, exp.Tuple) and isinstance(then.expression, exp.Tuple):
            return [
                (c.name.lower(), v.copy()) for c, v in zip(then.this.expressions, then.expression.expressions)
            ]
    return []


def _copy_all(
    analysis: StatementAnalysis, source: exp.Expr, ctes: exp.Expr | None, then: exp.Expr
) -> list[tuple[str, exp.Expr]]:
    alias = source.alias_or_name
    columns = _source_columns(analysis, source, ctes)
    if columns is None:
        analysis.issue(f"MERGE ... * needs the columns of {alias!r}; pass its schema", node=then)
        return []
    return [(c, exp.column(c, table=alias)) for c in columns]


def _source_columns(
    analysis: StatementAnalysis, source: exp.Expr, ctes: exp.Expr | None
) -> tuple[str, ...] | None:
    """Output column names of a MERGE source: a CTE, a subquery or a catalog table."""
    query = source.this if isinstance(source, exp.Subquery) else None
    if isinstance(source, exp.Table) and not source.db and ctes is not None:
        query = next(
            (c.this for c in ctes.expressions if c.alias_or_name.lower() == source.name.lower()), None
        )
    if isinstance(query, exp.Query):
        names = tuple(n.lower() for n in query.named_selects)
        return None if "*" in names or not all(names) else names
    if isinstance(source, exp.Table):
        return analysis.session.columns_of(_qualified(analysis, source))
    return None


def _update(analysis: StatementAnalysis, update: exp.Update) -> None:
    """UPDATE becomes ``SELECT new values FROM t WHERE condition`` written to ``t``."""
    analysis.operation = "OTHER"
    target = update.this
    query = exp.select(*(a.expression.copy() for a in update.expressions)).from_(target.copy())
    if update.args.get("where") is not None:
        query.set("where", update.args["where"].copy())
    names = tuple(a.this.name.lower() for a in update.expressions)
    analysis.units.append(
        QueryUnit(Dataset(_qualified(analysis, target), _kind(analysis, target)), query, names)
    )


_HANDLERS = {
    exp.Insert: _insert,
    exp.MultitableInserts: _multi_insert,
    exp.Create: _create,
    exp.Cache: _cache,
    exp.Drop: _drop,
    exp.Alter: _alter,
    exp.LoadData: _load,
    exp.Use: _use,
    exp.Set: _set,
    exp.Merge: _merge,
    exp.Update: _update,
    exp.TruncateTable: _clear,
    exp.Delete: _clear,
}


def _qualified(analysis: StatementAnalysis, table: exp.Table) -> str:
    """``db.table`` in lower case, unqualified names taken to the session's current database."""
    return analysis.session.qualify_name(
        ".".join(p for p in (table.catalog, table.db, table.name) if p).lower()
    )


def _kind(analysis: StatementAnalysis, table: exp.Table) -> str:
    return "temp" if _qualified(analysis, table) in analysis.session.temporary else "table"


def _partitions(partition: exp.Expr | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(static, dynamic) partition column names of ``PARTITION (a='1', b)``."""
    static: list[str] = []
    dynamic: list[str] = []
    for part in partition.expressions if partition is not None else []:
        if isinstance(part, exp.EQ):
            static.append(part.this.name.lower())
        else:
            dynamic.append(part.name.lower())
    return tuple(static), tuple(dynamic)


def _declared_columns(create: exp.Create) -> tuple[str, ...]:
    """Column names declared by CREATE: the schema list followed by PARTITIONED BY columns (Hive order)."""
    columns: list[str] = []
    if isinstance(create.this, exp.Schema):
        columns.extend(c.name.lower() for c in create.this.expressions if isinstance(c, exp.ColumnDef))
    partitioned = create.find(exp.PartitionedByProperty)
    if partitioned is not None and isinstance(partitioned.this, exp.Schema):
        columns.extend(c.name.lower() for c in partitioned.this.expressions if isinstance(c, exp.ColumnDef))
    return tuple(columns)
