"""One traced query for the security features: the SQL passes up to scopes and column tracing, failing closed.

Permission extraction and masking both need the qualified query tree, its sqlglot scope tree and a
:class:`~lineage_platform.sql.tracer.Tracer` over it. This module runs the project's SQL pipeline
(:data:`lineage_platform.sql.PASSES`) on one statement and refuses anything that could not be traced
completely: a security decision on a partial trace would be a silent leak.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lineage_platform.errors import SecurityError
from lineage_platform.sql.analysis import QueryUnit, StatementAnalysis
from lineage_platform.sql.extractor import new_analysis, run_passes
from lineage_platform.sql.function_rules import merge_rules
from lineage_platform.sql.parsing import StatementParseError
from lineage_platform.sql.tracer import Tracer

QUERY_OPERATIONS = frozenset(
    {"SELECT", "INSERT", "INSERT_OVERWRITE", "CREATE_AS_SELECT", "CREATE_VIEW", "MERGE"}
)
"""Statements whose reads can be checked: a query, alone or feeding a write."""


@dataclass
class TracedQuery:
    """A statement analysed by the SQL passes, with one tracer per query unit."""

    analysis: StatementAnalysis
    tracers: list[Tracer]

    @property
    def units(self) -> list[QueryUnit]:
        """The statement's query units (a Hive multi-insert has several)."""
        return self.analysis.units


def trace_query(
    sql: str,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
) -> TracedQuery:
    """Analyse one statement completely or raise :class:`SecurityError` saying why (fail closed).

    >>> traced = trace_query("SELECT a FROM db.t WHERE b = 1")
    >>> traced.analysis.operation, traced.units[0].query.sql()
    ('SELECT', 'SELECT a AS a FROM db.t AS t WHERE b = 1')
    """
    try:
        analysis = new_analysis(sql.strip().rstrip(";"), schema, dialect, default_db)
    except StatementParseError as error:
        raise SecurityError(
            f"denied: the statement does not parse ({error.message} at line {error.line}, column {error.column})",
            hint=f"fix the SQL or pick the right --dialect (now {dialect})",
        ) from error
    try:
        analysis = run_passes(analysis)
    except Exception as error:  # sqlglot raises many types; any of them means "not traceable"
        raise SecurityError(
            f"denied: the statement could not be traced ({type(error).__name__}: {error})",
            hint="simplify the statement or report it with the SQL attached",
        ) from error
    if analysis.operation not in QUERY_OPERATIONS or not analysis.units:
        raise SecurityError(
            f"denied: {analysis.operation} statements read no query that could be checked",
            hint="pass one SELECT, INSERT ... SELECT, CREATE TABLE ... AS SELECT, CREATE VIEW or MERGE statement",
        )
    if analysis.issues:
        reasons = "; ".join(issue.message for issue in analysis.issues)
        raise SecurityError(
            f"denied: the statement cannot be fully traced: {reasons}",
            hint="pass the table schemas (--schema) and qualify ambiguous columns",
        )
    rules = merge_rules(None)
    tracers = []
    for unit in analysis.units:
        if unit.scope is None:
            raise SecurityError(
                "denied: the query's scopes could not be analysed", hint="simplify the statement"
            )
        tracers.append(Tracer(unit.scope, rules, _refuse, analysis.session.columns_of))
    return TracedQuery(analysis, tracers)


def _refuse(message: str, node: Any) -> None:
    """Issue reporter for security tracing: anything the tracer cannot place stops the decision."""
    raise SecurityError(
        f"denied: the statement cannot be fully traced: {message}",
        hint="pass the table schemas (--schema) and qualify ambiguous columns",
    )
