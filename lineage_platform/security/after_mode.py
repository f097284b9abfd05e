"""What "after computation" masking refuses: computations whose *results* reveal facts about sensitive values.

After mode masks only the outermost projection; everything below it computes on real values. Row filters
and joins on a sensitive column are allowed by design (the returned rows tell whether they matched), but
constructs that compare, order, count or summarise sensitive values turn the masked output into an oracle:
``UNION`` de-duplicates raw values (a guessed value makes one row fewer), ``GROUP BY substr(ssn, 1, 3)``
counts a small domain, ``max(ssn)`` tells who holds the largest value, ``ORDER BY ssn`` orders by it.

:func:`refuse_computations` fails closed on each of them, naming the construct and the column:

* a distinct set operation (``UNION``, ``INTERSECT``, ``EXCEPT``) with a sensitive column in any branch
  (``UNION ALL`` only concatenates and stays allowed);
* ``SELECT DISTINCT`` over a sensitive column;
* ``GROUP BY``, ``HAVING``, ``QUALIFY``, ``ORDER BY``/``SORT BY``/``CLUSTER BY``/``DISTRIBUTE BY`` on one;
* a window whose ``PARTITION BY`` or ``ORDER BY`` reads one;
* an aggregate (``count(DISTINCT ...)``, ``max``, ``collect_set``, a UDAF, ...) over one.

Derived outputs (an expression over a sensitive column) are not refused here: :mod:`masking` replaces them
by NULL, because a hash of a small derived domain (a length, a prefix) is reversed by enumeration.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from lineage_platform.errors import SecurityError
from lineage_platform.security.query_analysis import TracedQuery
from lineage_platform.sql import (
    Flow,
    FunctionRule,
    Tracer,
    function_arguments,
    function_name,
    leftmost_select,
)

_CLAUSES = (
    ("group", "GROUP BY"),
    ("having", "HAVING"),
    ("qualify", "QUALIFY"),
    ("order", "ORDER BY"),
    ("sort", "SORT BY"),
    ("cluster", "CLUSTER BY"),
    ("distribute", "DISTRIBUTE BY"),
)
"""Clauses that group, filter groups or order rows, with their names in errors."""
_HINT = "use --mode before (every computation then sees masked values), or compute on non-sensitive columns"


def refuse_computations(traced: TracedQuery, sensitive: Mapping[str, object]) -> None:
    """Raise :class:`SecurityError` when the query groups, orders, de-duplicates or aggregates a column of
    ``sensitive`` (``db.table.column`` keys) anywhere in its scope tree.

    >>> from lineage_platform.security.query_analysis import trace_query
    >>> traced = trace_query("SELECT ssn AS v FROM db.u UNION SELECT '123-45-6789'")
    >>> refuse_computations(traced, {"db.u.ssn": "hash"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    lineage_platform.errors.SecurityError: denied: after-mode masking cannot compute UNION over ... db.u.ssn (...)
    """
    root, tracer = traced.units[0].scope, traced.tracers[0]
    assert root is not None
    for scope in root.traverse():
        for construct, flows in _computations(scope, tracer):
            hit = next((f.source for f in flows if f.source in sensitive), None)
            if hit is not None:
                raise SecurityError(
                    f"denied: after-mode masking cannot compute {construct} over sensitive column {hit}",
                    hint=_HINT,
                )


def _computations(scope: Scope, tracer: Tracer) -> Iterator[tuple[str, list[Flow]]]:
    """(construct, flows it reads) for every refused construct of one scope."""
    expression = scope.expression
    if isinstance(expression, exp.SetOperation):
        if not (isinstance(expression, exp.Union) and expression.args.get("distinct") is False):
            width = len(leftmost_select(expression).selects)
            flows = [
                f
                for child in scope.set_operation_scopes
                for p in range(width)
                for f in tracer.output_at(child, p)
            ]
            yield expression.key.upper(), flows
        return
    if not isinstance(expression, exp.Select):
        return
    if expression.args.get("distinct"):
        yield "SELECT DISTINCT", [f for s in expression.selects for f in tracer.flows(scope, s)]
    for key, name in _CLAUSES:
        clause = expression.args.get(key)
        if clause is not None:
            yield name, tracer.flows(scope, clause)
    for node in _own_nodes(expression):
        if isinstance(node, exp.Window):
            for key, name in (("partition_by", "PARTITION BY"), ("order", "ORDER BY")):
                value = node.args.get(key)
                for part in value if isinstance(value, list) else [value]:
                    if part is not None:
                        yield f"a window's {name}", tracer.flows(scope, part)
        elif _is_aggregate(node, tracer.rules):
            name = f"aggregate {function_name(node)}()"
            yield name, [f for a in function_arguments(node) for f in tracer.flows(scope, a)]


def _own_nodes(select: exp.Select) -> Iterator[exp.Expr]:
    """The nodes of ``select`` outside its nested queries (those are scopes of their own)."""
    return select.walk(prune=lambda node: node is not select and isinstance(node, (exp.Query, exp.Subquery)))


def _is_aggregate(node: exp.Expr, rules: Mapping[str, FunctionRule]) -> bool:
    if not isinstance(node, exp.Func):
        return False
    rule = rules.get(function_name(node))
    if rule is not None and rule.aggregate is not None:
        return rule.aggregate
    return isinstance(node, exp.AggFunc)
