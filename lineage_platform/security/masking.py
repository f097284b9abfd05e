"""Masking planner: rewrite a query so that sensitive values reach the result only masked.

Two modes:

* ``before`` — mask at the scan: each base table with sensitive columns is replaced by a derived table
  selecting the masked columns under their own names. Everything the query computes (joins, filters,
  grouping, UDFs) sees masked values, so nothing about the plaintext can be inferred from the result.
* ``after`` — mask at the outermost projection: each output column is traced back to its base columns
  (:class:`~lineage_platform.sql.Tracer`); an output that copies whole sensitive values gets their
  rule, an output computed from one (an expression, a CASE condition) becomes NULL. Joins and filters compute
  on real values, so row-level inference (a WHERE on the sensitive column) stays possible; grouping,
  ordering, de-duplicating and aggregating a sensitive column are refused
  (:func:`~lineage_platform.security.after_mode.refuse_computations`).

The rewrite fails closed: any statement that cannot be traced or rewritten raises
:class:`~lineage_platform.errors.SecurityError`; the original SQL is never returned for a user who must
see masked data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gremlin_python.process.graph_traversal import GraphTraversalSource
from sqlglot import exp
from sqlglot.errors import ErrorLevel

from lineage_platform.errors import SecurityError
from lineage_platform.labels.propagate import labels_of
from lineage_platform.security.after_mode import refuse_computations
from lineage_platform.security.masking_rules import MaskingPolicy, MaskRule
from lineage_platform.security.query_analysis import TracedQuery, trace_query
from lineage_platform.sql import Flow, leftmost_select, table_name

Mode = Literal["before", "after"]
MODES: tuple[Mode, ...] = ("before", "after")
_VALUE_TRANSFORMS = frozenset({"IDENTITY", "TRANSFORMATION", "AGGREGATION", "CONDITIONAL", "WINDOW"})
"""Usages through which a base column shapes an output's value (row-level filters/joins/sorts do not)."""
_WRAPPED = "_masked"


@dataclass(frozen=True)
class MaskedQuery:
    """The rewritten SQL and what was masked: ``db.t.c`` (before) or output names (after), with the rule."""

    sql: str
    mode: Mode
    masked: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "mode": self.mode,
            "sql": self.sql,
            "masked": [{"name": n, "rule": r} for n, r in self.masked],
        }


def sensitive_columns(
    policy: MaskingPolicy, columns: list[str], graph: GraphTraversalSource | None = None
) -> dict[str, MaskRule]:
    """The rule masking each of ``columns`` (``db.t.c``): column rules, then labels from the graph."""
    labels: dict[str, list[tuple[str, str]]] = {}
    if graph is not None and policy.label_rules:
        for name, taggings in labels_of(graph, columns).items():
            labels[name] = [(t.label.key, t.label.value) for t in taggings]
    found = {}
    for column in columns:
        rule = policy.rules_for(column, labels.get(column, ()))
        if rule is not None:
            found[column] = rule
    return found


def mask_query(
    sql: str,
    principals: set[str],
    policy: MaskingPolicy,
    mode: Mode,
    *,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
    graph: GraphTraversalSource | None = None,
) -> MaskedQuery:
    """Rewrite ``sql`` for a user holding ``principals`` (e.g. ``{"user:ann", "role:analyst"}``).

    >>> policy = MaskingPolicy({"db.u.ssn": MaskRule("hash")})
    >>> mask_query("SELECT name, ssn, length(ssn) AS n FROM db.u", {"user:ann"}, policy, "after").sql
    'SELECT name AS name, MASK_HASH(ssn) AS `ssn`, NULL AS `n` FROM db.u AS u'
    """
    if mode not in MODES:
        raise SecurityError(f"unknown masking mode {mode!r}", hint="use --mode before or --mode after")
    if principals & policy.unmasked:
        return MaskedQuery(sql, mode)
    traced = trace_query(sql, schema, dialect, default_db)
    if traced.operation != "SELECT" or len(traced.units) != 1:
        raise SecurityError(
            f"denied: masking rewrites SELECT queries; got {traced.operation}",
            hint="mask the SELECT part, or grant access to the written table instead",
        )
    candidates = sorted(
        {f"{d.name}.{c}" for d in traced.inputs for c in d.columns}
        | {f.source for position in range(_width(traced)) for f in _output_flows(traced, position)}
    )
    rules = sensitive_columns(policy, candidates, graph)
    try:
        if mode == "before":
            masked = _mask_scans(traced, rules, dialect)
        else:
            refuse_computations(traced, rules)
            masked = _mask_outputs(traced, rules, dialect)
        rewritten = _render(traced.units[0].query, dialect)
    except SecurityError:
        raise
    except Exception as error:  # any rewrite failure must deny, never fall back to the original query
        raise SecurityError(
            f"denied: the query could not be rewritten for masking ({type(error).__name__}: {error})",
            hint="simplify the query or ask for an unmasked grant",
        ) from error
    return MaskedQuery(rewritten, mode, tuple(masked))


def _render(query: exp.Expr, dialect: str) -> str:
    """SQL text of the rewritten query; optimizer hints are dropped (they do not change results) and anything
    else the dialect cannot express raises, so a rewrite never silently changes meaning."""
    for hint in list(query.find_all(exp.Hint)):
        hint.pop()
    return query.sql(dialect, unsupported_level=ErrorLevel.RAISE)


def _width(traced: TracedQuery) -> int:
    return len(leftmost_select(traced.units[0].query).selects)


def _output_flows(traced: TracedQuery, position: int) -> list[Flow]:
    unit, tracer = traced.units[0], traced.tracers[0]
    assert unit.scope is not None
    return tracer.output_at(unit.scope, position)


def _mask_scans(traced: TracedQuery, rules: Mapping[str, MaskRule], dialect: str) -> list[tuple[str, str]]:
    """Replace every scan of a table with sensitive columns by ``(SELECT masked columns FROM t) AS alias``."""
    root = traced.units[0].scope
    assert root is not None
    masked: dict[str, str] = {}
    for scope in list(root.traverse()):
        for alias, (_, source) in list(scope.selected_sources.items()):
            if not isinstance(source, exp.Table):
                continue
            table = table_name(source)
            sensitive = {c.rpartition(".")[2]: r for c, r in rules.items() if c.rpartition(".")[0] == table}
            if not sensitive:
                continue
            columns = traced.columns_of(table)
            if columns is None:
                raise SecurityError(
                    f"denied: {table} has sensitive columns but its schema is unknown",
                    hint="pass the table schemas (--schema) so the masked scan can list every column",
                )
            # identifiers made here are quoted: column names may be reserved words (`date`, `order`)
            projections = [
                exp.alias_(
                    sensitive[c].apply(exp.column(c, quoted=True), dialect)
                    if c in sensitive
                    else exp.column(c, quoted=True),
                    c,
                    quoted=True,
                )
                for c in columns
            ]
            scan = source.copy()
            scan.set("alias", None)
            subquery = exp.select(*projections).from_(scan).subquery(alias)
            source.replace(subquery)
            masked.update({f"{table}.{c}": sensitive[c].kind for c in sensitive})
    return sorted(masked.items())


def _mask_outputs(traced: TracedQuery, rules: Mapping[str, MaskRule], dialect: str) -> list[tuple[str, str]]:
    """Wrap each output fed by a sensitive column in its rule, at the outermost projection."""
    unit = traced.units[0]
    query = unit.query
    names = list(leftmost_select(query).named_selects)
    plan: dict[int, MaskRule] = {}
    for position in range(len(names)):
        rule = _output_rule(_output_flows(traced, position), rules)
        if rule is not None:
            plan[position] = rule
    if not plan:
        return []
    if isinstance(query, exp.Select):
        outer = query
    else:  # a set operation: mask over it as a derived table
        outer = exp.select(*[exp.column(n, table=_WRAPPED, quoted=True) for n in names]).from_(
            query.subquery(_WRAPPED)
        )
        unit.query = outer
    for position, rule in plan.items():
        projection = outer.selects[position]
        value = projection.this if isinstance(projection, exp.Alias) else projection
        projection.replace(exp.alias_(rule.apply(value.copy(), dialect), names[position], quoted=True))
    return [(names[p], rule.kind) for p, rule in sorted(plan.items())]


def _output_rule(flows: list[Flow], rules: Mapping[str, MaskRule]) -> MaskRule | None:
    """The rule for one output. When it only copies whole values of sensitive columns sharing one rule (a
    column, or columns meeting in UNION ALL branches), that rule. Otherwise NULL: when a sensitive column is
    computed on (a function, an operator, a CASE condition, a struct field), a hash of the derived value (a
    length, a prefix) is reversed by enumerating its small domain and a partial rule would show a part the
    column's rule does not allow; when columns with different rules meet, any one rule shows more of the
    other columns than theirs allows (a hash of a value whose rule shows only its last digits)."""
    feeding = [f for f in flows if f.source in rules and f.usage.transform in _VALUE_TRANSFORMS]
    if not feeding:
        return None
    copies = all(f.usage.transform == "IDENTITY" and not f.usage.key_path for f in feeding)
    if copies and len({rules[f.source] for f in feeding}) == 1:
        return rules[feeding[0].source]
    return MaskRule("nullify")
