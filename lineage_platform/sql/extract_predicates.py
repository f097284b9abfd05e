"""Pass: simple filter predicates per base table (``column op value``) from WHERE and JOIN ON conjuncts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlglot import exp

from lineage_platform.model import Predicate
from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.function_rules import merge_rules
from lineage_platform.sql.tracer import Tracer, table_name

COMPARISONS: dict[type[exp.Expr], tuple[str, str]] = {
    exp.EQ: ("=", "="),
    exp.NEQ: ("!=", "!="),
    exp.GT: (">", "<"),
    exp.GTE: (">=", "<="),
    exp.LT: ("<", ">"),
    exp.LTE: ("<=", ">="),
}
"""Comparison node class -> (operator text, operator text with the sides swapped)."""


def extract_predicates(analysis: StatementAnalysis) -> StatementAnalysis:
    """Add one :class:`Predicate` per ANDed condition comparing a base column with a constant or expression.

    Values are constants, lists (IN), ``[lo, hi]`` (BETWEEN) or the condition's own text for expressions
    such as ``date_sub('${bizdate}', 20)`` (unknown variables stay unresolved).

    >>> from lineage_platform.sql.extractor import new_analysis, run_passes
    >>> a = run_passes(new_analysis("SELECT a FROM db.t WHERE dt >= date_sub('${d}', 2) AND k IN (1, 2)"),
    ...                until=extract_predicates)
    >>> [(p.table, p.column, p.op, p.value) for p in a.predicates]
    [('db.t', 'dt', '>=', "date_sub('${d}', 2)"), ('db.t', 'k', 'IN', (1, 2))]
    """
    found: dict[Predicate, None] = dict.fromkeys(analysis.predicates)
    for unit in analysis.units:
        if unit.scope is None:
            continue
        tracer = Tracer(
            unit.scope, merge_rules(None), lambda message, node: None, analysis.session.columns_of
        )
        reads = _reads(unit.scope)
        filtered: set[tuple[str, int]] = set()
        for scope in unit.scope.traverse():
            conditions = [scope.expression.args.get("where")]
            conditions += [join.args.get("on") for join in scope.expression.args.get("joins") or []]
            for condition in conditions:
                if condition is None:
                    continue
                for conjunct in _conjuncts(condition.this if isinstance(condition, exp.Where) else condition):
                    predicate = _predicate(analysis, tracer, scope, conjunct)
                    if predicate is None:
                        continue
                    if len(reads.get(predicate.table, ())) > 1:
                        predicate = replace(predicate, read=_read_of(scope, conjunct, reads[predicate.table]))
                        if predicate.read is not None:
                            filtered.add((predicate.table, predicate.read))
                    found[predicate] = None
        for table, nodes in reads.items():
            for number in range(len(nodes) if len(nodes) > 1 else 0):
                if (table, number) not in filtered:
                    found[Predicate(table, "*", "UNFILTERED", None, read=number)] = None
    analysis.predicates = list(found)
    return analysis


def _reads(root: Any) -> dict[str, list[exp.Table]]:
    """The base-table references of a unit, by table name, in scope order (a CTE is read where it is defined)."""
    reads: dict[str, list[exp.Table]] = {}
    for scope in root.traverse():
        for source in scope.sources.values():
            if isinstance(source, exp.Table):
                reads.setdefault(table_name(source), []).append(source)
    return reads


def _read_of(scope: Any, conjunct: exp.Expr, nodes: list[exp.Table]) -> int | None:
    """Which read of a table a filter applies to: the one its column's qualifier names in this scope, else None
    (a filter on a derived table's column cannot be tied to one read of a table read several times)."""
    column = next(conjunct.find_all(exp.Column), None)
    if column is None:
        return None
    only = next(iter(scope.sources.values())) if len(scope.sources) == 1 else None
    source = scope.sources.get(column.table) if column.table else only
    return next((number for number, node in enumerate(nodes) if node is source), None)


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    """The ANDed parts of a condition, left to right (iterative: generated SQL chains thousands of ANDs)."""
    parts: list[exp.Expr] = []
    pending = [condition]
    while pending:
        node = pending.pop()
        if isinstance(node, exp.And):
            pending.extend((node.expression, node.this))
        elif isinstance(node, exp.Paren):
            pending.append(node.this)
        else:
            parts.append(node)
    return parts


def _predicate(analysis: StatementAnalysis, tracer: Tracer, scope: Any, node: exp.Expr) -> Predicate | None:
    negated = isinstance(node, exp.Not)
    inner = node.this if negated else node
    column: exp.Expr | None = None
    op: str
    value: Any
    if type(inner) in COMPARISONS and not negated:
        forward, backward = COMPARISONS[type(inner)]
        if isinstance(inner.this, exp.Column) and _is_value(inner.expression):
            column, op, value = inner.this, forward, _value(analysis, inner.expression)
        elif isinstance(inner.expression, exp.Column) and _is_value(inner.this):
            column, op, value = inner.expression, backward, _value(analysis, inner.this)
        else:
            return None
    elif isinstance(inner, exp.In) and isinstance(inner.this, exp.Column) and not inner.args.get("query"):
        if not all(_is_value(v) for v in inner.expressions):
            return None
        column, op, value = (
            inner.this,
            "NOT IN" if negated else "IN",
            tuple(_value(analysis, v) for v in inner.expressions),
        )
    elif isinstance(inner, exp.Between) and isinstance(inner.this, exp.Column) and not negated:
        low, high = inner.args.get("low"), inner.args.get("high")
        if not (_is_value(low) and _is_value(high)):
            return None
        column, op, value = inner.this, "BETWEEN", (_value(analysis, low), _value(analysis, high))
    elif isinstance(inner, exp.Like) and isinstance(inner.this, exp.Column) and _is_value(inner.expression):
        column, op, value = inner.this, "NOT LIKE" if negated else "LIKE", _value(analysis, inner.expression)
    elif (
        isinstance(inner, exp.Is)
        and isinstance(inner.this, exp.Column)
        and isinstance(inner.expression, exp.Null)
    ):
        column, op, value = inner.this, "IS NOT NULL" if negated else "IS NULL", None
    else:
        return None
    flows = tracer.flows(scope, column)
    if len(flows) != 1 or flows[0].usage.transform != "IDENTITY":
        return None
    table, _, name = flows[0].source.rpartition(".")
    return Predicate(table, name, op, value)


def _is_value(node: exp.Expr | None) -> bool:
    """A constant or an expression without columns or subqueries (e.g. ``date_sub('${bizdate}', 20)``)."""
    return node is not None and node.find(exp.Column, exp.Query) is None


def _value(analysis: StatementAnalysis, node: exp.Expr) -> Any:
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.name
        number = float(node.name)
        return int(number) if number.is_integer() and "." not in node.name else number
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -_value(analysis, node.this)
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    return _source_text(analysis.sql, node) or node.sql(analysis.dialect, normalize_functions="lower")


def _source_text(sql: str, node: exp.Expr) -> str | None:
    """The value's text as written (functions are re-spelt by sqlglot, e.g. date_sub becomes date_add)."""
    start = node.meta.get("start")
    if start is None or not isinstance(node, exp.Func):
        return None
    opening = sql.find("(", start)
    if opening < 0 or sql[start:opening].strip().replace("_", "").isalnum() is False:
        return None
    depth = 0
    quote = ""
    for position in range(opening, len(sql)):
        char = sql[position]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return sql[start : position + 1]
    return None
