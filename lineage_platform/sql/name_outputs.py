"""Pass: name every unaliased output column the way the dialect's engine names it."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.function_rules import function_arguments, function_name

Namer = Callable[[exp.Expr, int, int, StatementAnalysis], str]
"""(projection, position in the SELECT list, position among unnamed projections, statement) -> name."""
_WORD = re.compile(r"^\w+$")


def name_outputs(analysis: StatementAnalysis) -> StatementAnalysis:
    """Alias each unnamed projection of every SELECT (subqueries too: outer queries read those names).

    Columns and struct fields keep their own names. Expressions are named per engine: Hive ``_c<n>``
    (``explode(arr)``: ``col``),
    Trino/Presto/Athena ``_col<n>``, BigQuery ``f<k>_`` (k counts unnamed columns only), Postgres and
    Redshift the function's name (``max``), a cast's argument name, ``case``, else ``?column?``; Spark and
    Databricks the expression as Spark prints it (``max(col1)``, ``(a + 1)``, ``count(1)``, a cast
    column's own name); Snowflake, MySQL and DuckDB the expression's text. Other dialects keep sqlglot's
    ``_col_<n>``. Run before qualification: engines name an expression by its text as written.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = classify_statement(new_analysis("SELECT max(t.col1), a + 1, b FROM t", dialect="spark"))
    >>> name_outputs(a).units[0].query.named_selects
    ['max(col1)', '(a + 1)', 'b']
    """
    namer = _NAMERS.get(analysis.dialect, _sqlglot_name)
    for unit in analysis.units:
        for select in unit.query.find_all(exp.Select):
            unnamed = 0
            for position, projection in enumerate(select.selects):
                if isinstance(projection, exp.QueryTransform):
                    projection.replace(_transform_outputs(projection))
                    continue
                if _has_own_name(projection, analysis.dialect):
                    continue
                name = namer(projection, position, unnamed, analysis)
                projection.replace(exp.alias_(projection.copy(), name, quoted=True))
                unnamed += 1
    return analysis


def _transform_outputs(transform: exp.QueryTransform) -> exp.Aliases:
    """Hive / Spark ``SELECT TRANSFORM (cols) USING 'script' AS (a, b)``: one output per name, each reading every
    input column (the script is opaque); without ``AS`` the script's outputs are ``key`` and ``value``."""
    schema = transform.args.get("schema")
    names = [e.name for e in schema.expressions] if isinstance(schema, exp.Schema) else ["key", "value"]
    script = exp.Anonymous(this="transform", expressions=[e.copy() for e in transform.expressions])
    return exp.Aliases(this=script, expressions=[exp.to_identifier(n) for n in names])


def _has_own_name(projection: exp.Expr, dialect: str) -> bool:
    """Columns, struct fields, stars and aliased expressions (``AS (a, b)`` too) are named already (Spark: casts
    of columns too)."""
    if isinstance(projection, (exp.Alias, exp.Aliases, exp.Column, exp.Dot, exp.Star)):
        return True
    if dialect in _SPARK:
        return isinstance(projection, exp.Cast) and isinstance(projection.this, exp.Column)
    return dialect not in _NAMERS and projection.alias_or_name not in ("", "*")


def _written_name(function: exp.Func, text: str) -> str:
    """A function's name as written (``nvl``, ``substr``, ``instr``), where the parser kept its position;
    else sqlglot's name for it (``coalesce``, ``substring``)."""
    start, end = function.meta.get("start"), function.meta.get("end")
    if isinstance(start, int) and isinstance(end, int) and _WORD.match(text[start : end + 1]):
        return text[start : end + 1].lower()
    return function_name(function)


def _postgres_name(node: exp.Expr, text: str) -> str:
    """Postgres: a call is named by its function, a cast by its argument, ``case``/``exists``/``array``/``bool``
    by their kind, a scalar subquery by its column, else ``?column?``."""
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Cast):
        inner = _postgres_name(node.this, text)
        return inner if inner != "?column?" else node.to.this.name.lower()
    if isinstance(node, (exp.Case, exp.Exists, exp.Array)):
        return node.key  # case, exists, array
    if isinstance(node, exp.Boolean):
        return "bool"
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select) and node.this.selects:
        first = node.this.selects[0]
        return (
            first.alias_or_name if isinstance(first, (exp.Alias, exp.Column)) else _postgres_name(first, text)
        )
    if isinstance(node, exp.Func) and not isinstance(node, (exp.Binary, exp.Connector)):
        return _written_name(node, text)
    return "?column?"


def _spark_name(node: exp.Expr, text: str) -> str:
    """The text Spark prints (as far as sqlglot keeps it): qualifiers dropped, operators and IF parenthesised
    (not LIKE), string literals and JSON paths bare, ``nvl``/``instr``/``between(a, lo, hi)``/``x IS NOT NULL``
    as Spark spells them; a generator (``explode``) outputs ``col``."""
    if _generates_col(node):
        return "col"
    pretty = exp.Paren(this=node.copy())  # a holder, so the top node can be replaced like any other
    for child in reversed(list(pretty.this.dfs())):
        written = _written_name(child, text) if isinstance(child, exp.Func) else ""
        if written in _SPARK_SPELLINGS.get(type(child), ()):
            child.replace(exp.Anonymous(this=written, expressions=function_arguments(child)))
        elif isinstance(child, exp.Between):
            child.replace(exp.Anonymous(this="between", expressions=function_arguments(child)))
        elif type(child) in _SPARK_NILADIC and not child.args:
            child.replace(exp.Anonymous(this=_SPARK_NILADIC[type(child)]))
        elif isinstance(child, exp.Not) and isinstance(child.this, exp.Is):
            child.replace(exp.Is(this=child.this.this, expression=exp.var("NOT NULL")))
        elif isinstance(child, exp.JSONPath):
            child.replace(exp.var(child.sql().strip("'")))
        elif isinstance(child, exp.Paren):
            child.replace(child.this)
        elif isinstance(child, exp.Column):
            child.replace(exp.column(child.name))
        elif isinstance(child, exp.Literal) and child.is_string:
            child.replace(exp.var(child.name))
        elif isinstance(child, exp.Count) and isinstance(child.this, exp.Star):
            child.set("this", exp.Literal.number(1))
        elif isinstance(child, exp.Subquery):
            child.replace(exp.Anonymous(this="scalarsubquery"))
    for child in reversed(list(pretty.this.dfs())):
        if isinstance(child, exp.If) or (
            isinstance(child, (exp.Binary, exp.Unary))
            and not isinstance(child, (exp.Func, exp.Dot, exp.Paren, exp.Like, exp.ILike))
        ):
            paren = exp.Paren()
            child.replace(paren)
            paren.set("this", child)
    return pretty.this.sql("spark", normalize_functions="lower")


_SPARK_SPELLINGS: dict[type, tuple[str, ...]] = {exp.Coalesce: ("nvl",), exp.StrPosition: ("instr",)}
"""Functions sqlglot renames (``nvl`` -> COALESCE) whose written name Spark keeps in column names."""
_SPARK_NILADIC: dict[type, str] = {exp.CurrentDate: "current_date", exp.CurrentTimestamp: "current_timestamp"}
"""Functions without arguments Spark prints with ``()``."""


def _generates_col(node: exp.Expr) -> bool:
    """``explode(array)`` in a select list: Hive and Spark name its one output ``col``."""
    return isinstance(node, exp.Explode) and not isinstance(node, exp.Posexplode)


def _text(node: exp.Expr, dialect: str) -> str:
    return node.sql(dialect, normalize_functions="lower")


def _sqlglot_name(node: exp.Expr, position: int, unnamed: int, analysis: StatementAnalysis) -> str:
    """sqlglot's own name for an unnamed projection, for dialects without a documented convention."""
    return f"_col_{position}"


_SPARK = frozenset({"spark", "spark2", "databricks"})
_NAMERS: dict[str, Namer] = {
    "hive": lambda node, position, unnamed, analysis: "col" if _generates_col(node) else f"_c{position}",
    **dict.fromkeys(
        ("trino", "presto", "athena"), lambda node, position, unnamed, analysis: f"_col{position}"
    ),
    "bigquery": lambda node, position, unnamed, analysis: f"f{unnamed}_",
    **dict.fromkeys(
        ("postgres", "redshift"), lambda node, position, unnamed, analysis: _postgres_name(node, analysis.sql)
    ),
    **dict.fromkeys(_SPARK, lambda node, position, unnamed, analysis: _spark_name(node, analysis.sql)),
    **dict.fromkeys(
        ("snowflake", "mysql", "duckdb"),
        lambda node, position, unnamed, analysis: _text(node, analysis.dialect),
    ),
}
