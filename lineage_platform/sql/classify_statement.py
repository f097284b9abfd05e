"""Pass: decide the statement's operation and split it into query units (query + written dataset)."""

from __future__ import annotations

import re

from sqlglot import exp

from lineage_platform.model import RESULT_DATASET, Dataset
from lineage_platform.sql.analysis import QueryUnit, StatementAnalysis
from lineage_platform.sql.session import SessionEffect
from lineage_platform.sql.synthetic_queries import (
    branch_condition,
    from_source,
    rows_of,
    touched_rows,
    unwrap_query,
    values_query,
)
from lineage_platform.sql.tracer import file_path, table_name

_SET_VARIABLE = re.compile(
    r"^\s*SET\s+(?:(hivevar|hiveconf|define):)?([\w.\-]+)\s*=\s*(.*?)\s*;?\s*$", re.I | re.S
)
_SEARCH_PATH = re.compile(
    r"^\s*SET\s+(?:SESSION\s+|LOCAL\s+)?search_path\s*(?:=|\bTO\b)\s*(.*?)\s*;?\s*$", re.I | re.S
)
"""Postgres / Redshift ``SET search_path TO s, public``: unqualified names resolve in the first schema."""
_SET_OPERATION = re.compile(r"\b(?:UNION|INTERSECT|EXCEPT|MINUS)\b", re.I)
_NO_LINEAGE = (
    exp.Show,
    exp.Describe,
    exp.Command,
    exp.Analyze,
    exp.Uncache,
    exp.Refresh,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Alter,
    exp.Grant,
    exp.Revoke,
    exp.Comment,
    exp.Declare,
    exp.Kill,
    exp.ListStage,
)
"""Statements that read or write no data (session, transaction, metadata, privilege and maintenance commands;
Snowflake's ``LIST @stage`` lists a stage's files)."""


def classify_statement(analysis: StatementAnalysis) -> StatementAnalysis:
    """Set ``operation``, the query ``units`` and the datasets that need no query to know.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> a = classify_statement(new_analysis("INSERT OVERWRITE TABLE db.t PARTITION (dt='1') SELECT a FROM s"))
    >>> a.operation, a.units[0].target.name, a.units[0].static_partitions
    ('INSERT_OVERWRITE', 'db.t', ('dt',))
    """
    expression = analysis.expression
    for cte in list(expression.find_all(exp.CTE)):
        if isinstance(cte.this, exp.Delete):
            _deleting_cte(analysis, cte)
    handler = _HANDLERS.get(type(expression))
    if handler is not None:
        handler(analysis, expression)
    elif isinstance(expression, exp.Select) and isinstance(expression.args.get("into"), exp.Into):
        _select_into(analysis, expression)
    elif isinstance(expression, exp.Query):
        analysis.operation = "SELECT"
        analysis.units.append(QueryUnit(Dataset(RESULT_DATASET, "temp"), _body(analysis, expression)))
    elif isinstance(expression, exp.Command) and expression.this in ("EXPORT", "IMPORT", "EXCHANGE"):
        _hive_command(analysis, expression)
    elif isinstance(expression, exp.Command) and str(expression.this).upper() == "DO":
        analysis.issue("the statements of a DO block are not analysed for lineage", "unsupported")
    elif not isinstance(expression, _NO_LINEAGE):
        analysis.issue(f"{expression.key.upper()} statements are not analysed for lineage", "unsupported")
    for unit in analysis.units:
        _plain_reads(unit.query, analysis.dialect)
    return analysis


def _deleting_cte(analysis: StatementAnalysis, cte: exp.CTE) -> None:
    """Postgres ``WITH gone AS (DELETE FROM t WHERE c RETURNING a, b) …``: the CTE's rows are ``SELECT a, b FROM
    t WHERE c`` (what was deleted, as the query reads it) and ``t`` is written too."""
    delete = cte.this
    returning = delete.args.get("returning")
    if not isinstance(delete.this, exp.Table):
        return
    table = delete.this
    analysis.outputs.append(Dataset(_qualified(analysis, table), _kind(analysis, table)))
    columns = [e.copy() for e in returning.expressions] if isinstance(returning, exp.Returning) else []
    rows = exp.select(*(columns or [exp.Star()])).from_(table.copy())
    where = delete.args.get("where")
    if isinstance(where, exp.Where):
        rows.set("where", where.copy())
    cte.set("this", rows)


def _insert(analysis: StatementAnalysis, insert: exp.Insert) -> None:
    analysis.operation = "INSERT_OVERWRITE" if insert.args.get("overwrite") else "INSERT"
    unit = _insert_unit(analysis, insert, insert.expression)
    if isinstance(insert.this, exp.Directory):
        analysis.operation = "INSERT_OVERWRITE_DIRECTORY"
    if unit is not None:
        analysis.units.append(unit)


def _insert_unit(analysis: StatementAnalysis, insert: exp.Insert, query: exp.Expr | None) -> QueryUnit | None:
    """The unit of one INSERT: target, explicit/partition columns and the query (CTEs moved onto it).

    ``VALUES`` rows holding a subquery or a column become ``SELECT row UNION ALL SELECT row …``.
    """
    if isinstance(query, exp.Values):
        query = values_query(query) or query
    if isinstance(query, exp.Query):
        query = _body(analysis, query)
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
    if explicit is None and not insert.args.get(
        "by_name"
    ):  # BY NAME: the query's output names are the columns
        known = analysis.session.columns_of(name)
        if known is not None:
            explicit = tuple(c for c in known if c not in static)
    elif dynamic:
        explicit = explicit + tuple(d for d in dynamic if d not in explicit)
    conflict = insert.args.get("conflict")
    keys = conflict.args.get("conflict_keys") or [] if isinstance(conflict, exp.OnConflict) else []
    conflict_keys = tuple(k.this.name.lower() if isinstance(k, exp.Ordered) else k.name.lower() for k in keys)
    return QueryUnit(
        Dataset(name, _kind(analysis, target)), query, explicit, static, dynamic, conflict_keys=conflict_keys
    )


def _multi_insert(analysis: StatementAnalysis, multi: exp.MultitableInserts) -> None:
    """Hive ``FROM s INSERT … SELECT … INSERT …`` and Snowflake ``INSERT ALL|FIRST [WHEN c THEN] INTO t
    [VALUES (…)] … SELECT …``: one unit per INSERT over the shared source."""
    source = multi.args.get("source")
    ctes = multi.args.get("with_")
    branches = [
        (i.this, branch_condition(i, multi)) if isinstance(i, exp.ConditionalInsert) else (i, None)
        for i in multi.expressions
    ]
    inserts = [(i, c) for i, c in branches if isinstance(i, exp.Insert)]
    analysis.operation = "INSERT_OVERWRITE" if any(i.args.get("overwrite") for i, _ in inserts) else "INSERT"
    for insert, condition in inserts:
        query = insert.expression
        if multi.args.get("kind") and isinstance(source, exp.Query):  # Snowflake INSERT ALL|FIRST … SELECT
            query = rows_of(source, query, condition)
        elif isinstance(query, exp.Select) and source is not None and not query.args.get("from_"):
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
    clone = create.args.get("clone")
    if isinstance(clone, exp.Clone) and isinstance(clone.this, exp.Table):
        analysis.operation = "CREATE_AS_SELECT"
        _copy_table(analysis, clone.this, Dataset(name, dataset_kind))
        return
    if isinstance(query, exp.Query):
        query = _body(analysis, query)
        analysis.operation = "CREATE_VIEW" if kind == "VIEW" else "CREATE_AS_SELECT"
        explicit = (
            tuple(c.name.lower() for c in create.this.expressions) if create.this is not target else None
        )
        analysis.units.append(QueryUnit(Dataset(name, dataset_kind), query, explicit))  # type: ignore[arg-type]
        return
    analysis.operation = "CREATE_TABLE"
    location = _data_location(create)
    if location is not None:  # a table or view over files: the files are read
        analysis.inputs.append(Dataset(location, "path"))
    like = create.find(exp.LikeProperty)
    columns = _declared_columns(create)
    if like is not None and isinstance(like.this, exp.Table):
        source = _qualified(analysis, like.this)
        columns = analysis.session.columns_of(source) or ()
        analysis.inputs.append(Dataset(source, _kind(analysis, like.this), columns))
    analysis.outputs.append(Dataset(name, dataset_kind, columns))


def _data_location(create: exp.Create) -> str | None:
    """Where a table's data lives: ``LOCATION '…'`` or Spark's ``USING fmt OPTIONS (path '…')``."""
    location = create.find(exp.LocationProperty)
    if location is not None and isinstance(location.this, exp.Literal):
        return location.this.name
    for options in create.find_all(exp.OptionsProperty):
        for option in options.expressions:
            if isinstance(option, exp.Property) and option.name.lower() == "path":
                return option.args["value"].name
    return None


def _export(analysis: StatementAnalysis, export: exp.Export) -> None:
    """BigQuery ``EXPORT DATA OPTIONS (uri = '…') AS SELECT …``: the query written to the URI."""
    options = export.args.get("options")
    uri = next(
        (
            o.args["value"].name
            for o in (options.expressions if options is not None else [])
            if isinstance(o, exp.Property) and o.name.lower() == "uri"
        ),
        None,
    )
    analysis.operation = "EXPORT"
    if uri is not None and isinstance(export.this, exp.Query):
        analysis.units.append(QueryUnit(Dataset(uri, "path"), _body(analysis, export.this)))
    else:
        analysis.issue("EXPORT DATA without a uri option or a query: no lineage", "unsupported", export)


def _truncate(analysis: StatementAnalysis, statement: exp.TruncateTable) -> None:
    """TRUNCATE writes its tables (rows removed) and reads nothing else."""
    for table in statement.expressions:
        if isinstance(table, exp.Table):
            analysis.outputs.append(Dataset(_qualified(analysis, table), _kind(analysis, table)))


def _delete(analysis: StatementAnalysis, delete: exp.Delete) -> None:
    """DELETE becomes ``SELECT FROM t [JOIN/USING sources] WHERE condition``: sources are read, their
    columns decide which rows go (weak edges onto the target), no value is written."""
    analysis.operation = "DELETE"
    sources = [delete.this, *(delete.args.get("using") or [])]
    for target in delete.args.get("tables") or [delete.this]:
        query, written = touched_rows(target, sources, delete.args.get("where"), delete.args.get("with_"))
        dataset = Dataset(_qualified(analysis, written), _kind(analysis, written))
        analysis.units.append(QueryUnit(dataset, query, ()))


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


_RENAME_IN_PLACE = frozenset({"postgres", "redshift", "spark", "spark2", "databricks", "bigquery"})
"""Engines where ``ALTER TABLE s.t RENAME TO u`` keeps the table in ``s`` (others resolve ``u`` like any name)."""


def _alter(analysis: StatementAnalysis, alter: exp.Alter) -> None:
    actions = alter.args.get("actions") or []
    rename = next((a for a in actions if isinstance(a, exp.AlterRename)), None)
    swap = next((a for a in actions if isinstance(a, exp.SwapTable)), None)
    if isinstance(alter.this, exp.Table) and isinstance(rename, exp.AlterRename):
        _rename(analysis, alter.this, rename.this, in_place=analysis.dialect in _RENAME_IN_PLACE)
    elif isinstance(alter.this, exp.Table) and swap is not None and isinstance(swap.this, exp.Table):
        # Snowflake ``ALTER TABLE a SWAP WITH b``: the two names trade contents (table-level, both still exist)
        analysis.operation = "ALTER_EXCHANGE"
        for table in (alter.this, swap.this):
            analysis.inputs.append(Dataset(_qualified(analysis, table), _kind(analysis, table)))
            analysis.outputs.append(Dataset(_qualified(analysis, table), _kind(analysis, table)))
    else:
        analysis.operation = "OTHER"  # no data moves, so no lineage
        name = _qualified(analysis, alter.this) if isinstance(alter.this, exp.Table) else None
        known = analysis.session.columns_of(name) if name else None
        if known and (added := _added_columns(actions)):  # later statements see the new columns (``*``)
            analysis.effect = SessionEffect(tables=((name, tuple(dict.fromkeys((*known, *added)))),))


def _added_columns(actions: list[exp.Expression]) -> tuple[str, ...]:
    """Names of the columns an ALTER TABLE adds, in order.

    >>> from sqlglot import parse_one
    >>> _added_columns(parse_one("ALTER TABLE t ADD COLUMNS (a INT, B STRING)", read="hive").args["actions"])
    ('a', 'b')
    """
    definitions = []
    for action in actions:
        if isinstance(action, exp.ColumnDef):
            definitions.append(action)
        elif isinstance(action, exp.Schema):
            definitions.extend(c for c in action.expressions if isinstance(c, exp.ColumnDef))
    return tuple(dict.fromkeys(c.name.lower() for c in definitions))


def _rename(analysis: StatementAnalysis, table: exp.Table, to: exp.Table, *, in_place: bool) -> None:
    """``table`` renamed to ``to``; ``in_place``: an unqualified new name stays in the old one's schema."""
    analysis.operation = "ALTER_RENAME"
    old = _qualified(analysis, table)
    new = _qualified(analysis, to)
    if in_place and not to.db:
        new = f"{old.rpartition('.')[0]}.{to.name.lower()}"
    columns = analysis.session.columns_of(old) or ()
    analysis.inputs.append(Dataset(old, _kind(analysis, table), columns))
    analysis.outputs.append(Dataset(new, _kind(analysis, table), columns))


def _execute(analysis: StatementAnalysis, execute: exp.Execute) -> None:
    """T-SQL ``EXEC sp_rename 'schema.old', 'new' [, 'OBJECT']``: a table rename within its schema (renames
    of columns and indexes, and other procedures, move no data)."""
    arguments = [a.name for a in execute.expressions if isinstance(a, exp.Literal) and a.is_string]
    procedure = execute.this.name.lower() if isinstance(execute.this, exp.Table) else ""
    kind = arguments[2].upper() if len(arguments) > 2 else "OBJECT"
    if procedure != "sp_rename" or len(arguments) < 2 or kind != "OBJECT":
        analysis.operation = "OTHER"
        return
    old, new = (exp.to_table(a, dialect=analysis.dialect) for a in arguments[:2])
    _rename(analysis, old, new, in_place=True)


def _copy_table(analysis: StatementAnalysis, source: exp.Table, target: Dataset) -> None:
    """Every row of ``source`` copied into ``target`` (CLONE, EXCHANGE PARTITION): column by column when
    the session knows ``source``'s columns, else table-level only."""
    columns = analysis.session.columns_of(_qualified(analysis, source))
    if columns is None:
        analysis.inputs.append(Dataset(_qualified(analysis, source), _kind(analysis, source)))
        analysis.outputs.append(target)
        return
    query = exp.select(*(exp.column(c) for c in columns)).from_(source.copy())
    analysis.units.append(QueryUnit(target, query, columns))


def _select_into(analysis: StatementAnalysis, select: exp.Select) -> None:
    """``SELECT … INTO new_table FROM …`` (T-SQL, Postgres) creates the table from the query, as CTAS."""
    into = select.args["into"]
    target = into.this
    query = select.copy()
    query.set("into", None)
    analysis.operation = "CREATE_AS_SELECT"
    temporary = into.args.get("temporary") or target.name.startswith("#")
    name = _qualified(analysis, target)
    analysis.units.append(QueryUnit(Dataset(name, "temp" if temporary else "table"), _body(analysis, query)))


def _load(analysis: StatementAnalysis, load: exp.LoadData) -> None:
    analysis.operation = "LOAD"
    path = load.args.get("inpath")
    analysis.inputs.append(Dataset(path.name if path is not None else "", "path"))
    analysis.outputs.append(Dataset(_qualified(analysis, load.this), _kind(analysis, load.this)))


def _copy(analysis: StatementAnalysis, copy: exp.Copy) -> None:
    """``COPY`` between a table (or a query) and files: Snowflake ``COPY INTO t FROM @stage`` / ``COPY INTO
    @stage FROM (SELECT …)``, Postgres ``COPY t FROM 'file'`` / ``COPY (SELECT …) TO 'file'``.

    Into a table it is a ``LOAD`` (files in, table out), into files an ``EXPORT``; a query is traced.
    """
    this = copy.this.this if isinstance(copy.this, exp.Schema) else copy.this
    files = copy.args.get("files") or []
    if copy.args.get("kind"):  # COPY [INTO] this FROM files
        sources, target = files, this
    else:  # COPY this TO files
        sources, target = [this], files[0] if files else None
    written = _location(analysis, target) if target is not None else None
    if written is None:
        return
    analysis.operation = "EXPORT" if written.kind == "path" else "LOAD"
    for source in sources:
        query = source.this if isinstance(source, exp.Subquery) else None
        if isinstance(query, exp.Query):
            analysis.units.append(QueryUnit(written, _body(analysis, query)))
            continue
        read = _location(analysis, source)
        if read is not None:
            analysis.inputs.append(read)
    if not analysis.units:
        analysis.outputs.append(written)


def _location(analysis: StatementAnalysis, node: exp.Expr) -> Dataset | None:
    """A COPY end: a file path or stage (``'s3://…'``, ``@stage/dir``) or a table."""
    if isinstance(node, exp.Literal):
        return Dataset(node.name, "path")
    if isinstance(node, exp.Table):
        if isinstance(node.this, exp.Literal) or node.name.startswith("@"):
            return Dataset(node.name, "path")
        return Dataset(_qualified(analysis, node), _kind(analysis, node))
    return None


def _hive_command(analysis: StatementAnalysis, command: exp.Command) -> None:
    table, path = command.expression.expressions
    if command.this == "EXCHANGE":  # the partition moves from ``path`` (the other table) into ``table``
        analysis.operation = "ALTER_EXCHANGE"
        _copy_table(analysis, path, Dataset(_qualified(analysis, table), _kind(analysis, table)))
        return
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
    """``USE [SCHEMA|DATABASE|CATALOG] name``: the database (or ``catalog.schema``) of unqualified names.

    A one-part schema keeps the current catalog (Trino, Snowflake ``USE SCHEMA s``); a catalog-level name
    (``USE CATALOG c``, Snowflake ``USE DATABASE d``, T-SQL ``USE db``) opens its default schema (``default``;
    ``public`` in Snowflake, ``dbo`` in T-SQL), as those engines do.
    """
    analysis.operation = "USE"
    if not isinstance(use.this, exp.Table):
        return
    kind = use.text("kind").upper()
    name = table_name(use.this)
    if analysis.dialect == "tsql":  # a T-SQL database is the first of three name parts: db.schema.table
        name = f"{name}.dbo"
    elif kind == "CATALOG" or (kind == "DATABASE" and analysis.dialect == "snowflake"):
        name = f"{name}.{'public' if analysis.dialect == 'snowflake' else 'default'}"
    elif "." not in name and analysis.session.current_catalog:
        name = f"{analysis.session.current_catalog}.{name}"
    analysis.effect = SessionEffect(use_db=name)


def _declare(analysis: StatementAnalysis, declare: exp.Declare) -> None:
    """BigQuery ``DECLARE x, y INT64 [DEFAULT v]``: script variables later queries may read by bare name (T-SQL
    ``@x`` is a parameter already)."""
    analysis.operation = "SET"
    variables = []
    for item in declare.expressions:
        names = item.this if isinstance(item.this, list) else [item.this]
        default = item.args.get("default")
        value = default.sql(analysis.dialect) if isinstance(default, exp.Expr) else ""
        variables.extend((n.name.lower(), value) for n in names if isinstance(n, exp.Identifier))
    analysis.effect = SessionEffect(variables=tuple(variables))


def _set(analysis: StatementAnalysis, _: exp.Set) -> None:
    analysis.operation = "SET"
    path = _SEARCH_PATH.match(analysis.sql)
    schemas = [p.strip().strip("'\"").lower() for p in path.group(1).split(",")] if path else []
    schemas = [p for p in schemas if p and not p.startswith("$")]  # "$user" names no fixed schema
    if schemas:
        analysis.effect = SessionEffect(use_db=schemas[0])
        return
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
        for name, value in _merge_assignments(analysis, then, source, ctes, target):
            assignments.setdefault(name, []).append(value)
    name = _qualified(analysis, target)
    # without known assignments (DELETE branches, ``*`` over an unknown source) the rows are still read
    names = tuple(n for n, values in assignments.items() for _ in values)
    projections = [v for values in assignments.values() for v in values]
    query = exp.Select().from_(target.copy()).join(source.copy(), on=merge.args["on"].copy())
    query.set("expressions", projections)
    if conditions:
        query = query.where(exp.or_(*conditions))
    if ctes is not None:
        query.set("with_", ctes.copy())
    analysis.units.append(QueryUnit(Dataset(name, _kind(analysis, target)), query, names))


def _merge_assignments(
    analysis: StatementAnalysis,
    then: exp.Expr | None,
    source: exp.Expr,
    ctes: exp.Expr | None,
    target: exp.Table,
) -> list[tuple[str, exp.Expr]]:
    """(target column, value) pairs of one WHEN branch; ``UPDATE SET *`` / ``INSERT *`` copy by name,
    ``INSERT VALUES (…)`` without a column list fills the target's known columns in order."""
    if isinstance(then, exp.Update):
        if any(isinstance(a, exp.Star) for a in then.expressions):
            return _copy_all(analysis, source, ctes, then, target)
        return [(a.this.name.lower(), a.expression.copy()) for a in then.expressions]
    if isinstance(then, exp.Insert):
        if isinstance(then.this, exp.Star):
            return _copy_all(analysis, source, ctes, then, target)
        if not isinstance(then.expression, exp.Tuple):
            return []
        if isinstance(then.this, exp.Tuple):
            names = [c.name.lower() for c in then.this.expressions]
        else:
            names = list(analysis.session.columns_of(_qualified(analysis, target)) or ())
            if not names:
                analysis.issue(
                    f"MERGE ... INSERT VALUES needs the columns of {target.name!r}; pass its schema",
                    node=then,
                )
        return [(name, from_source(value, source)) for name, value in zip(names, then.expression.expressions)]
    return []


def _copy_all(
    analysis: StatementAnalysis, source: exp.Expr, ctes: exp.Expr | None, then: exp.Expr, target: exp.Table
) -> list[tuple[str, exp.Expr]]:
    """``UPDATE SET *`` / ``INSERT *``: each column from the source's column of that name; the source's columns,
    else the target's (every target column must be in the source then, as Delta requires)."""
    alias = source.alias_or_name
    columns = _source_columns(analysis, source, ctes) or analysis.session.columns_of(
        _qualified(analysis, target)
    )
    if columns is None:
        analysis.issue(
            f"MERGE ... * needs the columns of {alias!r} or of {target.name!r}; pass the schema", node=then
        )
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
    """UPDATE becomes ``SELECT new values FROM t [JOIN / FROM sources] WHERE condition`` written to ``t``."""
    analysis.operation = "UPDATE"
    from_ = update.args.get("from_")
    sources = [update.this, *([from_.this, *(from_.args.get("joins") or [])] if from_ is not None else [])]
    query, written = touched_rows(update.this, sources, update.args.get("where"), update.args.get("with_"))
    pairs = [pair for assignment in update.expressions for pair in _assignments(assignment)]
    for _, value in pairs:
        query.select(value, copy=False)
    names = tuple(name for name, _ in pairs)
    analysis.units.append(
        QueryUnit(Dataset(_qualified(analysis, written), _kind(analysis, written)), query, names)
    )


def _assignments(assignment: exp.Expr) -> list[tuple[str, exp.Expr]]:
    """(column, value) pairs of one SET item; ``(a, b) = (x, y)``, ``= ROW(x, y)`` and ``= (SELECT x, y …)``
    (Postgres, Oracle) assign position by position (each column gets the subquery reduced to its column)."""
    target, value = assignment.this, assignment.expression
    if not isinstance(target, exp.Tuple):
        return [(target.name.lower(), value.copy())]
    names = [c.name.lower() for c in target.expressions]
    if isinstance(value, exp.Subquery) and isinstance(value.this, exp.Select):
        values: list[exp.Expr] = []
        for position in range(len(names)):
            select = value.this.copy()
            select.set("expressions", select.expressions[position : position + 1])
            values.append(exp.Subquery(this=select))
    elif isinstance(value, (exp.Tuple, exp.Anonymous)):
        values = [v.copy() for v in value.expressions]
    else:
        values = [value.copy() for _ in names]
    return list(zip(names, values, strict=False))


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
    exp.TruncateTable: _truncate,
    exp.Copy: _copy,
    exp.Export: _export,
    exp.Delete: _delete,
    exp.Execute: _execute,
    exp.Declare: _declare,
}


def _body(analysis: StatementAnalysis, query: exp.Query) -> exp.Query:
    """A unit's query without redundant parentheses (branches looked at only when the text has a set operation)."""
    return unwrap_query(query, branches=_SET_OPERATION.search(analysis.sql) is not None)


def _plain_reads(query: exp.Query, dialect: str) -> None:
    """Sources named as the tables they read: Databricks ``STREAM(t)`` / ``STREAM t`` reads ``t`` (incrementally:
    the same lineage); in Delta Live Tables ``LIVE.t`` is the pipeline's own dataset ``t``, published to the
    current schema; a T-SQL ``#t`` lives in tempdb whatever schema is written before it (``dbo.#t`` is ``#t``)."""
    for stream in list(query.find_all(exp.Stream)):
        inner = stream.this
        alias = inner.args.get("alias") if isinstance(inner, exp.Subquery) else None
        while isinstance(inner, exp.Subquery):
            inner = inner.this
        if isinstance(inner, exp.Table):
            if alias is not None:
                inner.set("alias", alias)
            stream.replace(inner)
    for table in query.find_all(exp.Table):
        live = dialect in ("databricks", "spark") and table.db.lower() == "live" and not table.catalog
        if live or (isinstance(table.this, exp.Identifier) and table.this.args.get("temporary")):
            table.set("db", None)
            table.set("catalog", None)


def _qualified(analysis: StatementAnalysis, table: exp.Table) -> str:
    """``db.table`` in lower case, unqualified names taken to the session's current database."""
    return file_path(table) or analysis.session.qualify_name(table_name(table))


def _kind(analysis: StatementAnalysis, table: exp.Table) -> str:
    if file_path(table):
        return "path"
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
