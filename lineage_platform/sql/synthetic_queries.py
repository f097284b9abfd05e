"""Synthetic queries the classifier builds from statements that are not plain queries.

UPDATE/DELETE become ``SELECT … FROM`` the rows they touch, MERGE INSERT values read the source, Snowflake's
INSERT ALL branches read the shared query, VALUES rows holding subqueries become ``SELECT … UNION ALL …``,
and redundant parentheses around query bodies are dropped. Pure functions over sqlglot expressions.
"""

from __future__ import annotations

import functools

from sqlglot import exp


def branch_condition(branch: exp.ConditionalInsert, multi: exp.MultitableInserts) -> exp.Expr | None:
    """A WHEN branch's condition; ELSE holds when no WHEN does."""
    if not branch.args.get("else_"):
        return branch.args.get("expression")
    whens = [
        b.args["expression"]
        for b in multi.expressions
        if isinstance(b, exp.ConditionalInsert) and b.args.get("expression") is not None
    ]
    return exp.not_(exp.or_(*whens)) if whens else None


def rows_of(source: exp.Query, values: exp.Expr | None, condition: exp.Expr | None) -> exp.Select:
    """``SELECT <the VALUES row, or *> FROM (source) [WHERE condition]`` for one INTO of INSERT ALL."""
    row = values.expressions[0].expressions if isinstance(values, exp.Values) and values.expressions else None
    query = exp.select(*(v.copy() for v in row or [exp.Star()])).from_(source.copy().subquery("_source"))
    return query.where(condition.copy()) if condition is not None else query


def from_source(value: exp.Expr, source: exp.Expr) -> exp.Expr:
    """An INSERT branch's value with unqualified columns read from the MERGE source (no target row exists)."""
    value = value.copy()
    alias = source.alias_or_name
    for column in list(value.find_all(exp.Column)):
        if not column.table and alias and column.find_ancestor(exp.Subquery) is None:
            column.set("table", exp.to_identifier(alias))
    return value


def touched_rows(
    target: exp.Table, sources: list[exp.Expr], where: exp.Expr | None, ctes: exp.Expr | None
) -> tuple[exp.Select, exp.Table]:
    """``SELECT FROM sources WHERE …`` over the rows an UPDATE/DELETE touches, and the table it writes.

    ``target`` may name a source by its alias (T-SQL ``UPDATE a … FROM t a``, MySQL ``DELETE a FROM t a``);
    sources carry their joins (MySQL ``UPDATE t JOIN s``) or are joins (``FROM s JOIN u``); the rest are
    cross-joined.

    >>> update = exp.maybe_parse("UPDATE a SET c = b.d FROM t a JOIN s b ON a.id = b.id", dialect="tsql")
    >>> query, written = touched_rows(update.this, [update.this, update.args["from_"].this], None, None)
    >>> query.sql(), written.sql()
    ('SELECT FROM t AS a JOIN s AS b ON a.id = b.id', 't AS a')
    """
    parts: list[exp.Expr] = []
    own: exp.Expr | None = None
    for source in sources:
        part = source.copy()
        if source is target:
            own = part
        attached = part.args.get("joins") or []
        if not isinstance(part, exp.Join):
            part.set("joins", None)
        parts.extend([part, *attached])
    relations = [p.this if isinstance(p, exp.Join) else p for p in parts]
    named = next(
        (
            r
            for r in relations
            if r is not own and isinstance(r, exp.Table) and not target.db and r.alias_or_name == target.name
        ),
        None,
    )
    if named is not None and own is not None:
        parts.remove(own)
    elif named is None and own is None:
        parts.insert(0, target.copy())
    first, *rest = parts
    query = exp.Select().from_(first.this if isinstance(first, exp.Join) else first)
    joins = [p if isinstance(p, exp.Join) else exp.Join(this=p) for p in rest]
    if joins:
        query.set("joins", joins)
    if where is not None:
        query.set("where", where.copy())
    if ctes is not None:
        query.set("with_", ctes.copy())
    return query, _cte_base(named if named is not None else target, ctes)


def _cte_base(table: exp.Table, ctes: exp.Expr | None) -> exp.Table:
    """The table written through a CTE (T-SQL ``WITH c AS (SELECT … FROM t) DELETE FROM c``): the CTE's
    one source table, followed through CTEs over CTEs; other tables come back unchanged."""
    seen: set[str] = set()
    while isinstance(ctes, exp.With) and not table.db and table.name.lower() not in seen:
        seen.add(table.name.lower())
        body = next((c.this for c in ctes.expressions if c.alias_or_name.lower() == table.name.lower()), None)
        source = (
            body.args.get("from_") if isinstance(body, exp.Select) and not body.args.get("joins") else None
        )
        if source is None or not isinstance(source.this, exp.Table):
            break
        table = source.this
    return table


def unwrap_query(query: exp.Query, *, branches: bool = True) -> exp.Query:
    """The query without redundant parentheses, at the top and (``branches``) around set-operation branches.

    >>> unwrap_query(exp.maybe_parse("((SELECT a FROM t) UNION (SELECT b FROM u))")).sql()
    'SELECT a FROM t UNION SELECT b FROM u'
    """
    while _redundant(query):
        inner = query.this
        if query.args.get("with_") is not None and not inner.args.get("with_"):
            inner.set("with_", query.args["with_"])
        query = inner
    for operation in list(query.find_all(exp.SetOperation)) if branches else []:
        for key in ("this", "expression"):
            branch = operation.args.get(key)
            while _redundant(branch):
                branch = branch.this
            operation.set(key, branch)
    return query


def _redundant(node: exp.Expr | None) -> bool:
    """A parenthesised query with nothing of its own (no alias, ORDER BY, LIMIT, …)."""
    return isinstance(node, exp.Subquery) and all(
        value is None or value == [] or key in ("this", "with_") for key, value in node.args.items()
    )


def values_query(values: exp.Values) -> exp.Query | None:
    """``SELECT row UNION ALL SELECT row …`` of VALUES rows holding a subquery or a column; None for constants.

    >>> values_query(exp.maybe_parse("VALUES (1, (SELECT max(id) FROM t)), (2, 3)")).sql()
    'SELECT 1, (SELECT MAX(id) FROM t) UNION ALL SELECT 2, 3'
    """
    if not any(isinstance(node, (exp.Subquery, exp.Column)) for node in values.walk()):
        return None
    rows = [exp.select(*(v.copy() for v in row.expressions)) for row in values.expressions]
    return functools.reduce(lambda left, right: exp.union(left, right, distinct=False), rows)
