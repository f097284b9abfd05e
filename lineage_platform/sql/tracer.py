"""The one scope walk behind column lineage and predicates: trace any expression down to base table columns.

Stands on sqlglot's ``build_scope`` output of a qualified query; it resolves names only through the
scopes' sources (tables, derived tables, CTEs, LATERAL VIEWs) and the enclosing scopes for correlation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from lineage_platform.sql.flow import Flow, Usage, join_key_paths
from lineage_platform.sql.function_rules import FunctionRule, function_arguments, function_name

ROW_CLAUSES: tuple[tuple[str, str], ...] = (
    ("where", "FILTER"),
    ("having", "FILTER"),
    ("qualify", "FILTER"),
    ("group", "GROUP_BY"),
    ("order", "SORT"),
    ("sort", "SORT"),
    ("cluster", "SORT"),
    ("distribute", "SORT"),
)
"""Clauses whose columns affect every output row, with the transform recorded for them."""

_ALIAS_CLAUSES = (exp.Order, exp.Having, exp.Group, exp.Qualify, exp.Sort, exp.Cluster, exp.Distribute)
"""Clauses where an unqualified name may refer to an output alias."""
_NO_VALUE = (exp.Literal, exp.Null, exp.Boolean, exp.Star, exp.Parameter, exp.Placeholder, exp.Var)
_JSON_EXTRACTS = (exp.JSONExtract, exp.JSONExtractScalar)
_JSON_TUPLE = "json_tuple"


IssueReporter = Callable[[str, exp.Expr], None]
_FILTER = Usage("weak", "FILTER")
PSEUDO_COLUMNS = frozenset(
    {
        # Hive virtual columns
        "grouping__id",
        "input__file__name",
        "block__offset__inside__file",
        "row__offset__inside__block",
        "row__id",
        # BigQuery partition and wildcard-table pseudo-columns
        "_partitiontime",
        "_partitiondate",
        "_table_suffix",
        "_file_name",
        # Oracle
        "rownum",
        "rowid",
        "ora_rowscn",
        # Postgres system columns
        "ctid",
        "xmin",
        "xmax",
        # Snowflake staged-file and stream metadata
        "metadata$filename",
        "metadata$file_row_number",
        "metadata$file_content_key",
        "metadata$file_last_modified",
        "metadata$start_scan_time",
        "metadata$action",
        "metadata$isupdate",
        "metadata$row_id",
    }
)
"""Pseudo-columns an engine computes for every row (virtual, partition, row-id, file metadata columns): an
unqualified one is never a stored column, so it carries no lineage and is not reported."""
SEQUENCE_VALUES = frozenset({"nextval", "currval"})
"""``seq.NEXTVAL`` / ``seq.CURRVAL`` (Snowflake, Oracle): a number the sequence hands out, no column's value."""
PLAIN = Usage()
"""A value used as it is (strong, IDENTITY)."""


FILE_FORMATS = frozenset({"parquet", "csv", "json", "orc", "delta", "text", "avro", "binaryfile", "iceberg"})
"""Spark's ``format.`/path``` file sources: the table's "database" names the format."""


def table_name(table: exp.Table) -> str:
    """Lower-case ``db.table`` (or ``catalog.db.table``) of a qualified table reference; a file source's path.

    >>> table_name(exp.to_table("c.s.t")), table_name(exp.maybe_parse("parquet.`/data/x`", into=exp.Table, dialect="spark"))
    ('c.s.t', '/data/x')
    """
    return (
        file_path(table) or ".".join(part for part in (table.catalog, table.db, table.name) if part).lower()
    )


def file_path(table: exp.Table) -> str | None:
    """The path of a file source, else None: Spark ``parquet.`/dir```, ``delta.`s3://b/t```; DuckDB / Databricks
    reader functions (``read_parquet('s3://b/*.parquet')``, ``read_csv_auto('x.csv')``, ``read_files(…)``)
    and DuckDB's quoted path ``FROM 's3://b/x.parquet'``."""
    if table.db.lower() in FILE_FORMATS and not table.catalog and ("/" in table.name or ":" in table.name):
        return table.name
    reader = table.this
    if isinstance(reader, exp.Func) and _READERS.match(function_name(reader)):
        first = next(iter(function_arguments(reader)), None)
        return first.name if isinstance(first, exp.Literal) and first.is_string else None
    if isinstance(reader, exp.Identifier) and reader.quoted and "/" in reader.name:  # qualify may add a db
        return reader.name
    return None


class Tracer:
    """Traces expressions of one query's scope tree to :class:`Flow` records, memoising derived columns."""

    def __init__(
        self,
        root: Scope,
        rules: Mapping[str, FunctionRule],
        report: IssueReporter,
        known_columns: Callable[[str], tuple[str, ...] | None] = lambda table: None,
        variables: frozenset[str] = frozenset(),
    ) -> None:
        self.rules = rules
        self.report = report
        self.known_columns = known_columns
        self.variables = (
            variables  # script variables (BigQuery DECLARE x): a name no source has is one of them
        )
        self._scopes: dict[int, Scope] = {id(s.expression): s for s in root.traverse()}
        self._outputs: dict[tuple[int, int], list[Flow]] = {}
        self._reading_arguments: set[int] = set()  # table functions whose arguments are being traced

    # outputs ---------------------------------------------------------------------------------------------
    def output_at(self, scope: Scope, position: int) -> list[Flow]:
        """Flows into the ``position``-th output column of ``scope``."""
        # a recursive CTE's self-reference is a bare scope over its anchor SELECT: use the anchor's own scope
        scope = self._scopes.get(id(scope.expression), scope)
        key = (id(scope), position)
        if key not in self._outputs:
            self._outputs[key] = []  # guards recursive CTE self-references
            self._outputs[key] = self._compute_output(scope, position)
        return self._outputs[key]

    def output_named(self, scope: Scope, name: str, node: exp.Expr) -> list[Flow]:
        """Flows into the output column called ``name`` of ``scope``."""
        scope = self._scopes.get(id(scope.expression), scope)
        expression = scope.expression
        inner = self._lateral_query(scope)
        if inner is not None:
            return self.output_named(inner, name, node)
        if isinstance(expression, _UDTFS):
            names = _udtf_names(expression)
            if not names:  # a table function of unknown columns (OPENJSON, TABLE(FLATTEN(…)))
                return self._udtf_column(scope, expression, name)
        else:
            names = [n.lower() for n in leftmost_select(expression).named_selects]
        if name in names:
            return self.output_at(scope, names.index(name))
        select = leftmost_select(expression)
        if isinstance(select, exp.Select) and any(isinstance(p, exp.Star) for p in select.selects):
            return self._from_the_only_source(scope, name, node)  # SELECT * over an unknown schema
        starred = _starred_sources(select)
        if starred:  # SELECT a.*, b.x: a column not named otherwise comes through a star of unknown columns
            inner = self._scopes.get(id(select), scope)
            return self._from_the_only_source(inner, name, node, among=starred)
        self.report(f"column {name!r} is not an output of the subquery it is read from", node)
        return []

    def _compute_output(self, scope: Scope, position: int) -> list[Flow]:
        expression = scope.expression
        if isinstance(expression, exp.SetOperation):
            children = (
                scope.set_operation_scopes[:1]
                if isinstance(expression, exp.Except)
                else scope.set_operation_scopes
            )
            if expression.args.get("by_name"):  # UNION [ALL] BY NAME / CORRESPONDING: branches match by name
                return [f for child in children for f in self._output_by_name(child, expression, position)]
            return [f for child in children for f in self.output_at(child, position)]
        if isinstance(expression, (exp.Lateral, exp.TableFromRows)):
            inner = self._lateral_query(scope)
            if inner is not None:
                return self.output_at(inner, position)
            names = _udtf_names(expression)
            if tuple(names) == FLATTEN_COLUMNS:
                return self._udtf_column(scope, expression, names[position])
            if isinstance(expression, exp.Lateral):
                return self._udtf_output(scope, expression, position)
        if isinstance(expression, exp.Unnest):
            return self._unnest_output(scope, expression, position)
        if isinstance(expression, exp.Select):
            selects = projections(expression)
            if position < len(selects):
                return self.flows(scope, selects[position])
        return []

    def _output_by_name(self, branch: Scope, operation: exp.SetOperation, position: int) -> list[Flow]:
        """Flows of the ``branch`` output named like the ``position``-th output of the by-name ``operation``
        (named by its first branch); a branch without that column contributes nothing (NULL)."""
        names = [n.lower() for n in leftmost_select(operation).named_selects]
        branch_names = [n.lower() for n in leftmost_select(branch.expression).named_selects]
        if position >= len(names) or names[position] not in branch_names:
            return []
        return self.output_at(branch, branch_names.index(names[position]))

    def _lateral_query(self, scope: Scope) -> Scope | None:
        """The subquery scope of ``LATERAL (SELECT …)`` / T-SQL ``CROSS APPLY (SELECT …)``, else None."""
        lateral = scope.expression
        if not isinstance(lateral, exp.Lateral):
            return None
        query = lateral.this.this if isinstance(lateral.this, exp.Subquery) else lateral.this
        return self._scopes.get(id(query)) if isinstance(query, exp.Query) else None

    def _pivot_output(self, scope: Scope, pivot: exp.Pivot, name: str) -> list[Flow]:
        """Column ``name`` of a PIVOT / UNPIVOT: a pivoted value column is its aggregation (the FOR column
        decides which rows land in it: weak CONDITIONAL); UNPIVOT's value column reads every IN column,
        its name column no value; other columns pass through from the pivoted source."""
        source = pivot.parent.alias_or_name if pivot.parent is not None else ""
        fields = [f for f in pivot.args.get("fields") or [] if isinstance(f, exp.In)]
        name = self._pivot_column(scope, pivot, name)
        if pivot.args.get("unpivot"):
            if name in (e.name.lower() for e in pivot.expressions):
                columns = [
                    v.this if isinstance(v, exp.PivotAlias) else v for f in fields for v in f.expressions
                ]
                return [
                    flow for c in columns for flow in self._resolve(scope, exp.column(c.name, table=source))
                ]
            if name in (f.this.name.lower() for f in fields):
                return []
        elif name in (c.name.lower() for c in pivot.args.get("columns") or []):
            aggregations = pivot.expressions
            named = [a for a in aggregations if a.alias and _names_part(name, a.alias.lower())]
            found = [flow for a in named or aggregations for flow in self.flows(scope, a)]
            weak = Usage().weak("CONDITIONAL")
            return found + [flow for f in fields for flow in self.flows(scope, f.this, weak)]
        return self._resolve(scope, exp.column(name, table=source))

    def _pivot_column(self, scope: Scope, pivot: exp.Pivot, name: str) -> str:
        """The pivot's own name for output ``name`` when an alias column list renames its outputs
        (``PIVOT (…) AS p (k, a, b)``): the last names are the pivoted columns, the first the grouped ones."""
        alias = pivot.args.get("alias")
        renamed = [c.name.lower() for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
        if name not in renamed or pivot.args.get("unpivot"):
            return name
        generated = [c.name.lower() for c in pivot.args.get("columns") or []]
        position = renamed.index(name) - (len(renamed) - len(generated))
        if position >= 0:
            return generated[position]
        grouped = self._pivot_grouped(scope, pivot)
        return grouped[renamed.index(name)] if renamed.index(name) < len(grouped) else name

    def _pivot_grouped(self, scope: Scope, pivot: exp.Pivot) -> list[str]:
        """The source columns a PIVOT groups by implicitly: all but the aggregated and the FOR columns."""
        source = scope.sources.get(pivot.parent.alias_or_name) if pivot.parent is not None else None
        if isinstance(source, exp.Table):
            names = list(self.known_columns(table_name(source)) or ())
        elif isinstance(source, Scope):
            names = [n.lower() for n in leftmost_select(source.expression).named_selects]
        else:
            return []
        used = {c.name.lower() for a in pivot.expressions for c in a.find_all(exp.Column)}
        used |= {f.this.name.lower() for f in pivot.args.get("fields") or [] if isinstance(f, exp.In)}
        return [n for n in names if n not in used]

    def _table_function_column(self, scope: Scope, function: exp.Func, name: str) -> list[Flow]:
        """Column ``name`` of a table function in FROM: ``JSON_TABLE(doc, '$.items[*]' COLUMNS (c … PATH
        '$.c'))`` reads ``doc`` at ``$.items[*].c`` (a ``FOR ORDINALITY`` column at ``$.items[*]``); other
        functions read every argument."""
        if isinstance(function, exp.JSONTable):
            schema = function.args.get("schema")
            columns = schema.expressions if isinstance(schema, exp.JSONSchema) else []
            column = next((c for c in columns if c.name.lower() == name), None)
            row_path = function.args.get("path")
            path = column.args.get("path") if column is not None else None
            ordinal = column is not None and column.args.get("ordinality")  # a row's position: from the rows
            key = join_key_paths(
                row_path.name if isinstance(row_path, exp.Literal) else None,
                None if ordinal else path.name if isinstance(path, exp.Literal) else f"$.{name}",
            )
            return self.flows(scope, function.this, Usage().keyed(key) if key else Usage().transformed())
        usage = Usage().transformed()
        # an argument never reads the function's own columns (T-SQL `FROM OPENJSON([value])`: the outer value)
        self._reading_arguments.add(id(function.parent))
        try:
            return [
                f for argument in function_arguments(function) for f in self.flows(scope, argument, usage)
            ]
        finally:
            self._reading_arguments.discard(id(function.parent))

    def _udtf_column(self, scope: Scope, udtf: exp.Expr, name: str) -> list[Flow]:
        """Column ``name`` of a table function by name: every argument, transformed (FLATTEN's ``key``, ``path``
        and ``index`` too: where an element sits comes from the input, as posexplode's position does); FLATTEN's
        ``seq`` numbers the input rows and carries no value."""
        function = udtf.this
        if name == FLATTEN_COLUMNS[0] and function_name(function) in ("explode", "flatten"):
            return []
        if isinstance(udtf, exp.Unnest):
            # BigQuery UNNEST(arr) without names: the column is a field of the array's elements
            usage = Usage().keyed(_as_key_path(name))
            return [f for array in udtf.expressions for f in self.flows(scope, array, usage)]
        arguments = function_arguments(function) if isinstance(function, exp.Func) else [function]
        return [f for argument in arguments for f in self.flows(scope, argument, Usage().transformed())]

    def _udtf_output(self, scope: Scope, lateral: exp.Lateral, position: int) -> list[Flow]:
        function = lateral.this
        arguments = function_arguments(function) if isinstance(function, exp.Func) else [function]
        usage = Usage().transformed()
        if isinstance(function, exp.Anonymous) and function_name(function) == _JSON_TUPLE and arguments:
            keys = arguments[1:]
            if position < len(keys) and isinstance(keys[position], exp.Literal):
                usage = Usage().keyed(_as_key_path(keys[position].name))
            return self.flows(scope, arguments[0], usage)
        fields = _inline_fields(function, position)
        if fields is not None:
            return [f for field in fields for f in self.flows(scope, field, usage)]
        return [f for argument in arguments for f in self.flows(scope, argument, usage)]

    def _unnest_output(self, scope: Scope, unnest: exp.Unnest, position: int) -> list[Flow]:
        """``UNNEST(a, b) AS x(ea, eb)``: one array per column; ``UNNEST(m) AS x(k, v)`` (a map or rows): every
        column from the one argument. A ``WITH OFFSET`` / ``ORDINALITY`` column comes from every array (a
        position within them, like posexplode's)."""
        arrays = unnest.expressions
        names = _udtf_names(unnest)
        offset = unnest.args.get("offset")
        at_offset = isinstance(offset, exp.Expr) and bool(names) and position == len(names) - 1
        if len(arrays) > 1 and not at_offset:
            arrays = arrays[position : position + 1]
        usage = Usage().transformed()
        return [f for array in arrays for f in self.flows(scope, array, usage)]

    # expressions -----------------------------------------------------------------------------------------
    def flows(self, scope: Scope, node: exp.Expr, usage: Usage = PLAIN) -> list[Flow]:
        """Every base column under ``node`` (evaluated in ``scope``) with how ``node`` uses it."""
        if isinstance(node, exp.Column):
            return [flow.through(usage) for flow in self._resolve(scope, node)]
        if isinstance(node, (exp.Alias, exp.Paren)):
            return self.flows(scope, node.this, usage)
        if isinstance(node, exp.TableColumn):
            return self._whole_row(scope, node, usage.transformed())
        if isinstance(node, exp.Filter):  # agg(x) FILTER (WHERE c): c only decides which rows x is taken from
            return self.flows(scope, node.this, usage) + self.flows(
                scope, node.expression, usage.weak("CONDITIONAL")
            )
        if isinstance(node, exp.WithinGroup):
            return self._within_group(scope, node, usage)
        if isinstance(node, exp.Order) and node.this is not None:  # array_agg(x ORDER BY y): y orders x
            return self.flows(scope, node.this, usage) + [
                f for o in node.expressions for f in self.flows(scope, o, usage.weak("SORT"))
            ]
        if isinstance(node, exp.Limit) and node.this is not None:  # BigQuery ARRAY_AGG(x ORDER BY y LIMIT n)
            return self.flows(scope, node.this, usage)
        if isinstance(node, _NO_VALUE):
            return []
        if isinstance(node, (exp.Subquery, exp.Query, exp.Exists)):
            return self._subquery(scope, node, usage)
        if isinstance(node, exp.Window):
            return self._window(scope, node, usage)
        if isinstance(node, exp.If):
            return self._conditional(
                scope, [node.this], [node.args.get("true"), node.args.get("false")], usage
            )
        if isinstance(node, exp.Case):
            conditions = [node.this] + [branch.this for branch in node.args.get("ifs") or []]
            values = [branch.args.get("true") for branch in node.args.get("ifs") or []]
            return self._conditional(scope, conditions, [*values, node.args.get("default")], usage)
        if isinstance(
            node, exp.DecodeCase
        ):  # decode(x, search1, result1, …[, default]): x and searches decide
            subject, *rest = node.expressions
            searches, results = rest[0:-1:2], rest[1::2] + rest[len(rest) - len(rest) % 2 :]
            return self._conditional(scope, [subject, *searches], results, usage)
        if isinstance(node, _JSON_EXTRACTS) and isinstance(node.expression, (exp.JSONPath, exp.Literal)):
            return self.flows(scope, node.this, usage.keyed(_json_path(node.expression)))
        if isinstance(node, exp.Bracket):
            return self._bracket(scope, node, usage)
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
            # a schema-qualified function call (`db.sch.fn(x)`, T-SQL `dbo.fn(x)`): the qualifier names no value
            return self.flows(scope, node.expression, usage)
        if isinstance(node, exp.Dot):
            return self.flows(scope, node.this, usage.keyed(_as_key_path(node.expression.name)))
        if isinstance(node, exp.Func) and not _is_operator(node):
            return self._function(scope, node, usage)
        return self._operands(scope, node, usage.transformed())

    def _within_group(self, scope: Scope, node: exp.WithinGroup, usage: Usage) -> list[Flow]:
        """``percentile_cont(0.5) WITHIN GROUP (ORDER BY x)``: x is the aggregated value; when the function
        has values of its own (``listagg(a) WITHIN GROUP (ORDER BY b)``), b only orders them (weak SORT)."""
        found = self.flows(scope, node.this, usage)
        order = usage.weak("SORT") if found else usage.transformed(aggregate=True)
        return found + self.flows(scope, node.expression, order)

    def _whole_row(self, scope: Scope, node: exp.TableColumn, usage: Usage) -> list[Flow]:
        """A table alias used as a value (BigQuery ``TO_JSON_STRING(t)``, Postgres ``row_to_json(t)``): the
        row holds every column of that source."""
        current: Scope | None = scope
        while current is not None:
            source = current.sources.get(node.name)
            if isinstance(source, exp.Table):
                columns = self.known_columns(table_name(source))
                if columns is None:
                    self.report(
                        f"the whole row of {node.name.lower()!r} needs its columns; pass --schema", node
                    )
                    return []
                return [Flow(f"{table_name(source)}.{c}").through(usage) for c in columns]
            if source is not None:
                width = len(leftmost_select(source.expression).named_selects)
                return [f.through(usage) for p in range(width) for f in self.output_at(source, p)]
            current = current.parent
        self.report(f"{node.name.lower()!r} is neither a column nor a table alias here", node)
        return []

    def _operands(self, scope: Scope, node: exp.Expr, usage: Usage) -> list[Flow]:
        """Flows under an operator (``+``, ``AND``, ``=``, …); operator chains are walked without recursion."""
        found: list[Flow] = []
        pending = list(reversed(list(node.iter_expressions())))
        while pending:
            child = pending.pop()
            if _is_operator(child):
                pending.extend(reversed(list(child.iter_expressions())))
            else:
                found.extend(self.flows(scope, child, usage))
        return found

    def clause_flows(self, scope: Scope) -> list[Flow]:
        """Weak flows of the clauses of ``scope`` that restrict, group or order every output row."""
        expression = scope.expression
        found: list[Flow] = []
        if isinstance(expression, exp.Except):
            for child in scope.set_operation_scopes[1:]:
                width = len(leftmost_select(child.expression).selects)
                found.extend(f.through(_FILTER) for p in range(width) for f in self.output_at(child, p))
        for key, transform in ROW_CLAUSES:
            clause = expression.args.get(key)
            if clause is not None:
                found.extend(self.flows(scope, clause, Usage().weak(transform)))  # type: ignore[arg-type]
        group = expression.args.get("group")
        if isinstance(group, exp.Group) and group.args.get("all"):
            for projection in self._grouped_by_all(expression):
                found.extend(self.flows(scope, projection, Usage().weak("GROUP_BY")))
        for pivot in scope.pivots if isinstance(expression, exp.Select) else ():
            if not pivot.args.get("unpivot"):  # the columns a PIVOT keeps are grouped by, implicitly
                source = pivot.parent.alias_or_name if pivot.parent is not None else ""
                for name in self._pivot_grouped(scope, pivot):
                    found.extend(self.flows(scope, exp.column(name, table=source), Usage().weak("GROUP_BY")))
        for join in expression.args.get("joins") or []:
            for key in ("on", "using"):
                condition = join.args.get(key)
                for part in condition if isinstance(condition, list) else [condition]:
                    if part is not None:
                        found.extend(self.flows(scope, part, Usage().weak("JOIN")))
        return found

    # helpers ---------------------------------------------------------------------------------------------
    def _resolve(self, scope: Scope, column: exp.Column) -> list[Flow]:
        name = column.name.lower()
        table = column.table  # as the scope keys it (Snowflake's qualify upper-cases unquoted aliases)
        if not table:
            return self._resolve_unqualified(scope, column, name)
        current: Scope | None = scope
        while current is not None:
            source = current.sources.get(table)
            if source is not None:
                if (
                    isinstance(source, exp.Table)
                    and isinstance(source.this, exp.Func)
                    and not file_path(source)
                ):
                    return self._table_function_column(current, source.this, name)
                if isinstance(source, exp.Table):
                    return [Flow(f"{table_name(source)}.{name}")]
                return self.output_named(source, name, column)
            pivot = next((p for p in current.pivots if p.alias.lower() == table.lower()), None)
            if pivot is not None:
                return self._pivot_output(current, pivot, name)
            current = current.parent
        fields = self._struct_field(scope, column)
        if fields is not None:
            return fields
        self.report(
            f"column {table.lower()}.{name} refers to an unknown table alias {table.lower()!r}", column
        )
        return []

    def _struct_field(self, scope: Scope, column: exp.Column) -> list[Flow] | None:
        """``s.f`` or ``t.s.f`` whose qualifier names no source: field ``f`` of the struct column ``s`` (BigQuery
        ``UNNEST(event_params) AS ep`` then ``ep.value.string_value``; Spark / Snowflake struct columns), or no
        lineage for a sequence's ``seq.NEXTVAL``. None when the name starts with a source alias that has no further
        column part to read."""
        parts = [part.name for part in column.parts]
        if parts[-1].lower() in SEQUENCE_VALUES and len(parts) == 2:
            return []
        aliases = {alias for current in _enclosing_scopes(scope) for alias in current.sources}
        if parts[0] not in aliases:
            head, fields = exp.column(parts[0]), parts[1:]
        elif len(parts) > 2:
            head, fields = exp.column(parts[1], table=parts[0]), parts[2:]
        else:
            return None
        path = "$." + ".".join(field.lower() for field in fields)
        return [flow.through(Usage().keyed(path)) for flow in self._resolve(scope, head)]

    def _resolve_unqualified(self, scope: Scope, column: exp.Column, name: str) -> list[Flow]:
        """A column sqlglot could not qualify: an output alias in ORDER BY/HAVING/..., else the single source."""
        expression = scope.expression
        if isinstance(expression, exp.SetOperation):
            return self.output_named(scope, name, column)
        if isinstance(expression, exp.Select):
            projection = next((p for p in expression.selects if name in _alias_names(p)), None)
            if projection is not None and not isinstance(
                column.find_ancestor(*_ALIAS_CLAUSES, exp.Select), exp.Select
            ):
                return self.flows(scope, projection.this)
        if name in PSEUDO_COLUMNS:
            return []
        return self._from_the_only_source(scope, name, column)

    def _from_the_only_source(
        self, scope: Scope, name: str, node: exp.Expr, among: frozenset[str] | None = None
    ) -> list[Flow]:
        """Resolve ``name`` in the one source of ``scope`` that can have it; report when none or several can.

        Only the sources the scope selects from count (a CTE defined earlier is visible but not read), or only
        those named in ``among`` (the ``t`` of ``t.*``); a subquery none of whose sources can have ``name`` reads
        it from the enclosing query (correlation), and so does a table function's argument (``UNNEST(col)``: never
        a column of the function itself).
        """
        current: Scope | None = scope
        inner: Scope | None = None
        while current is not None:
            sources = {
                alias: source
                for alias, source in _selected(current).items()
                if source is not inner and id(source) not in self._reading_arguments
            }
            if among is not None and current is scope:
                sources = {alias: source for alias, source in sources.items() if alias.lower() in among}
            candidates = [alias for alias, source in sources.items() if self._may_provide(source, name)]
            if len(candidates) > 1:  # a source naming the column beats tables of unknown schema
                declared = [a for a in candidates if self._declares(sources[a], name)]
                candidates = declared if len(declared) == 1 else candidates
            if len(candidates) > 1:  # so does the one the query reads it from by name (`a.x` elsewhere)
                qualified = [a for a in candidates if a in _qualifiers_of(current, name)]
                candidates = qualified if len(qualified) == 1 else candidates
            if len(candidates) == 1:
                return self._resolve(current, exp.column(name, table=candidates[0]))
            if candidates or not (current.is_subquery or current.is_udtf):
                break
            inner, current = current, current.parent
        if name in self.variables:
            return []  # a script variable: a value known before the query runs, no column lineage
        self.report(f"column {name!r} is ambiguous or unknown; add a table qualifier or pass --schema", node)
        return []

    def _may_provide(self, source: exp.Table | Scope, name: str) -> bool:
        """Whether ``source`` can have a column ``name``: yes for tables of unknown schema."""
        if isinstance(source, exp.Table):
            known = self.known_columns(table_name(source))
            return known is None or name in known
        inner = self._lateral_query(source)
        if inner is not None:
            return self._may_provide(inner, name)
        expression = source.expression
        if isinstance(expression, _UDTFS):
            names = _udtf_names(expression)
            return name in names or not names
        outputs = [n.lower() for n in leftmost_select(expression).named_selects]
        return name in outputs or "*" in outputs

    def _declares(self, source: exp.Table | Scope, name: str) -> bool:
        """Whether ``source`` is known to have ``name`` (a catalog table listing it, a query or UDTF naming it)."""
        if isinstance(source, exp.Table):
            return name in (self.known_columns(table_name(source)) or ())
        if isinstance(source.expression, _UDTFS):
            return name in _udtf_names(source.expression)
        return self._may_provide(source, name) and not (
            isinstance(source.expression, exp.Select) and "*" in source.expression.named_selects
        )

    def _subquery(self, scope: Scope, node: exp.Expr, usage: Usage) -> list[Flow]:
        query = node.this if isinstance(node, (exp.Subquery, exp.Exists)) else node
        inner = self._scopes.get(id(query)) or self._scopes.get(id(node))
        if inner is None:
            return []
        width = len(leftmost_select(query).selects) if isinstance(query, exp.Query) else 1
        return [f.through(usage) for position in range(width) for f in self.output_at(inner, position)]

    def _window(self, scope: Scope, node: exp.Window, usage: Usage) -> list[Flow]:
        found = self.flows(scope, node.this, usage)
        weak = usage.weak("WINDOW")
        for spec in (node, _named_window(scope, node)):
            for key in ("partition_by", "order"):
                value = spec.args.get(key) if spec is not None else None
                for part in value if isinstance(value, list) else [value]:
                    if part is not None:
                        found.extend(self.flows(scope, part, weak))
        return found

    def _conditional(
        self, scope: Scope, conditions: list[exp.Expr | None], values: list[exp.Expr | None], usage: Usage
    ) -> list[Flow]:
        weak = usage.weak("CONDITIONAL")
        inner = usage.transformed()
        found = [f for c in conditions if c is not None for f in self.flows(scope, c, weak)]
        return found + [f for v in values if v is not None for f in self.flows(scope, v, inner)]

    def _bracket(self, scope: Scope, node: exp.Bracket, usage: Usage) -> list[Flow]:
        keys = node.expressions
        if len(keys) == 1 and isinstance(keys[0], exp.Literal):
            key = keys[0]
            path = f"$[{key.name}]" if not key.is_string else _as_key_path(key.name)
            return self.flows(scope, node.this, usage.keyed(path))
        inner = usage.transformed()
        return self.flows(scope, node.this, inner) + [f for k in keys for f in self.flows(scope, k, inner)]

    def _grouped_by_all(self, select: exp.Select) -> list[exp.Expr]:
        """The select-list expressions ``GROUP BY ALL`` groups by (Snowflake, Databricks, BigQuery, DuckDB):
        those holding no aggregate (built-in or declared by a rule) and no window function."""

        def aggregates(node: exp.Expr) -> bool:
            if isinstance(node, exp.Window):
                return True
            if not isinstance(node, exp.Func):
                return False
            rule = self.rules.get(function_name(node))
            return (
                rule.aggregate
                if rule is not None and rule.aggregate is not None
                else isinstance(node, exp.AggFunc)
            )

        return [p for p in projections(select) if not any(aggregates(n) for n in p.walk())]

    def _function(self, scope: Scope, node: exp.Func, usage: Usage) -> list[Flow]:
        rule = self.rules.get(function_name(node), FunctionRule())
        arguments = function_arguments(node)
        inner = usage.transformed(
            aggregate=isinstance(node, exp.AggFunc) if rule.aggregate is None else rule.aggregate,
            masking=rule.masking,
        )
        key = arguments[rule.key_arg] if rule.key_arg is not None and rule.key_arg < len(arguments) else None
        if isinstance(key, exp.Literal):
            inner = inner.keyed(_as_key_path(key.name))
        found: list[Flow] = []
        for position, argument in enumerate(arguments):
            role = rule.role(position)
            if role == "condition":
                found.extend(self.flows(scope, argument, usage.weak("CONDITIONAL")))
            elif role == "value":
                found.extend(self.flows(scope, argument, inner))
        return found


def _selected(scope: Scope) -> dict[str, exp.Table | Scope]:
    """The sources a SELECT reads (FROM, JOIN, LATERAL VIEW); other scopes see all their sources."""
    if not isinstance(scope.expression, exp.Select):
        return scope.sources
    return {alias: source for alias, (_, source) in scope.selected_sources.items()} | {
        alias: source
        for alias, source in scope.sources.items()
        if isinstance(source, Scope) and isinstance(source.expression, exp.Lateral)
    }


def _enclosing_scopes(scope: Scope) -> list[Scope]:
    """``scope`` and the scopes enclosing it, innermost first."""
    chain: list[Scope] = []
    current: Scope | None = scope
    while current is not None:
        chain.append(current)
        current = current.parent
    return chain


def _starred_sources(select: exp.Expr) -> frozenset[str]:
    """The sources ``t`` a SELECT takes whole as ``t.*`` (left unexpanded: their columns are unknown)."""
    if not isinstance(select, exp.Select):
        return frozenset()
    return frozenset(
        p.table.lower() for p in select.selects if isinstance(p, exp.Column) and isinstance(p.this, exp.Star)
    )


_READERS = re.compile(r"^(?:read_\w+|\w+_scan|read_files)$")
"""Table functions whose first argument is the path of the files they read."""
_UDTFS = (exp.Lateral, exp.Unnest, exp.TableFromRows)
FLATTEN_COLUMNS = ("seq", "key", "path", "index", "value", "this")
"""Snowflake FLATTEN's output columns: ``seq`` numbers input rows, ``key`` / ``path`` / ``index`` locate an element,
``value`` / ``this`` hold it."""


def _alias_names(projection: exp.Expr) -> list[str]:
    """The names a projection gives its output(s): ``x AS a`` -> ``a``, ``f(x) AS (a, b)`` -> ``a``, ``b``."""
    if isinstance(projection, exp.Alias):
        return [projection.alias.lower()]
    if isinstance(projection, exp.Aliases):
        return [e.name.lower() for e in projection.expressions]
    return []


def _names_part(name: str, part: str) -> bool:
    """Whether a pivot column name (``q1_total``, ``total_q1``) carries an aggregation's alias."""
    return name.endswith(f"_{part}") or name.startswith(f"{part}_")


def _udtf_names(udtf: exp.Expr) -> list[str]:
    """Output names of a LATERAL VIEW / UNNEST: its alias's column list (BigQuery ``UNNEST(a) AS e``: ``e``),
    then the ``WITH OFFSET AS`` column."""
    alias = udtf.args.get("alias")
    names = [c.name.lower() for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
    if not names and isinstance(udtf, exp.TableFromRows) and isinstance(udtf.this, exp.Explode):
        return list(FLATTEN_COLUMNS)  # Snowflake TABLE(FLATTEN(…)): sqlglot names them only after LATERAL
    offset = udtf.args.get("offset")
    if isinstance(offset, exp.Expr) and offset.name:
        names.append(offset.name.lower())
    return names


def _is_operator(node: exp.Expr) -> bool:
    """``+``, ``AND``, ``=``, ``NOT``, …: every operand flows the same way into the result.

    (sqlglot also files AND/OR under functions; JSON extraction and struct access are binary but keyed.)
    """
    if isinstance(node, exp.Connector):
        return True
    return isinstance(node, (exp.Binary, exp.Unary)) and not isinstance(node, (exp.Func, exp.Dot, exp.Alias))


def projections(select: exp.Expr) -> list[exp.Expr]:
    """One expression per output column: ``f(x) AS (a, b)`` (Hive/Spark UDTF in the select list) counts
    once per name."""
    found: list[exp.Expr] = []
    for projection in select.selects if isinstance(select, exp.Query) else []:
        if isinstance(projection, exp.Aliases):
            found.extend([projection.this] * len(projection.expressions))
        else:
            found.append(projection)
    return found


def leftmost_select(expression: exp.Expr) -> exp.Expr:
    """The first SELECT of a set operation (it names the outputs); other expressions come back unchanged."""
    while isinstance(expression, exp.SetOperation):
        expression = expression.this
    while isinstance(expression, exp.Subquery):
        expression = expression.this
    return expression


def own_columns(select: exp.Select) -> list[exp.Column]:
    """Columns of ``select`` itself, not of the subqueries nested in it."""
    return [c for c in select.find_all(exp.Column) if c.find_ancestor(exp.Select) is select]


def _json_path(path: exp.Expr) -> str:
    if isinstance(path, exp.Literal):
        return _as_key_path(path.name)
    return path.sql().strip("'")


def _as_key_path(key: str) -> str:
    """A JSON path for a literal key: kept when it already is a path, else ``$.key``."""
    return key if key.startswith("$") else f"$.{key}"


def _named_window(scope: Scope, window: exp.Window) -> exp.Window | None:
    """The ``WINDOW name AS (...)`` definition an ``OVER name`` refers to, if any."""
    name = window.alias
    select = scope.expression
    if not name or not isinstance(select, exp.Select):
        return None
    return next((w for w in select.args.get("windows") or [] if w.name.lower() == name.lower()), None)


def _inline_fields(function: exp.Expr, position: int) -> list[exp.Expr] | None:
    """The ``position``-th field values of ``inline(array(struct(...), ...))``; None for other UDTFs."""
    if not isinstance(function, (exp.Inline, exp.Anonymous)) or function_name(function) != "inline":
        return None
    array = function.this if isinstance(function, exp.Inline) else (function.expressions or [None])[0]
    if not isinstance(array, exp.Array):
        return None
    fields: list[exp.Expr] = []
    for struct in array.expressions:
        if not isinstance(struct, exp.Struct):
            return None
        values = [
            v.expression if isinstance(v, (exp.PropertyEQ, exp.Kwarg)) else v for v in struct.expressions
        ]
        if position < len(values):
            fields.append(values[position])
    return fields


def _qualifiers_of(scope: Scope, name: str) -> set[str]:
    """The aliases ``scope``'s own clauses qualify ``name`` with: where a valid query writes both ``a.x`` and a bare
    ``x``, only ``a`` has ``x`` (else the bare ``x`` would be ambiguous)."""
    return {column.table for column in scope.columns if column.table and column.name.lower() == name}
