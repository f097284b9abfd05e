"""Pass: name every unaliased output column the way the dialect's engine names it."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.function_rules import function_name

Namer = Callable[[exp.Expr, int, int, str], str]
"""(projection, position in the SELECT list, position among unnamed projections, dialect) -> name."""


def name_outputs(analysis: StatementAnalysis) -> StatementAnalysis:
    """Alias each unnamed projection of every SELECT (subqueries too: outer queries read those names).

    Columns and struct fields keep their own names. Expressions are named per engine: Hive ``_c<n>``,
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
                if _has_own_name(projection, analysis.dialect):
                    continue
                name = namer(projection, position, unnamed, analysis.dialect)
                projection.replace(exp.alias_(projection.copy(), name, quoted=True))
                unnamed += 1
    return analysis


def _has_own_name(projection: exp.Expr, dialect: str) -> bool:
    """Columns, struct fields, stars and aliased expressions (``AS (a, b)`` too) are named already (Spark: casts
    of columns too)."""
    if isinstance(projection, (exp.Alias, exp.Aliases, exp.Column, exp.Dot, exp.Star)):
        return True
    if dialect in _SPARK:
        return isinstance(projection, exp.Cast) and isinstance(projection.this, exp.Column)
    return dialect not in _NAMERS and projection.alias_or_name not in ("", "*")


def _postgres_name(node: exp.Expr) -> str:
    """Postgres: a call is named by its function, a cast by its argument, ``case``/``exists``/``array``/``bool``
    by their kind, a scalar subquery by its column, else ``?column?``."""
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Cast):
        inner = _postgres_name(node.this)
        return inner if inner != "?column?" else node.to.this.name.lower()
    if isinstance(node, (exp.Case, exp.Exists, exp.Array)):
        return node.key  # case, exists, array
    if isinstance(node, exp.Boolean):
        return "bool"
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select) and node.this.selects:
        first = node.this.selects[0]
        return first.alias_or_name if isinstance(first, (exp.Alias, exp.Column)) else _postgres_name(first)
    if isinstance(node, exp.Func) and not isinstance(node, (exp.Binary, exp.Connector)):
        return function_name(node)
    return "?column?"


def _spark_name(node: exp.Expr) -> str:
    """The text Spark prints: qualifiers dropped, operators parenthesised, string literals bare."""
    pretty = exp.Paren(this=node.copy())  # a holder, so the top node can be replaced like any other
    for child in reversed(list(pretty.this.dfs())):
        if isinstance(child, exp.Paren):
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
        if isinstance(child, (exp.Binary, exp.Unary)) and not isinstance(
            child, (exp.Func, exp.Dot, exp.Paren)
        ):
            paren = exp.Paren()
            child.replace(paren)
            paren.set("this", child)
    return pretty.this.sql("spark", normalize_functions="lower")


def _text(node: exp.Expr, dialect: str) -> str:
    return node.sql(dialect, normalize_functions="lower")


def _sqlglot_name(node: exp.Expr, position: int, unnamed: int, dialect: str) -> str:
    """sqlglot's own name for an unnamed projection, for dialects without a documented convention."""
    return f"_col_{position}"


_SPARK = frozenset({"spark", "spark2", "databricks"})
_NAMERS: dict[str, Namer] = {
    "hive": lambda node, position, unnamed, dialect: f"_c{position}",
    **dict.fromkeys(
        ("trino", "presto", "athena"), lambda node, position, unnamed, dialect: f"_col{position}"
    ),
    "bigquery": lambda node, position, unnamed, dialect: f"f{unnamed}_",
    **dict.fromkeys(("postgres", "redshift"), lambda node, position, unnamed, dialect: _postgres_name(node)),
    **dict.fromkeys(_SPARK, lambda node, position, unnamed, dialect: _spark_name(node)),
    **dict.fromkeys(
        ("snowflake", "mysql", "duckdb"), lambda node, position, unnamed, dialect: _text(node, dialect)
    ),
}
