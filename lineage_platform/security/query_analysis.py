"""Traced queries for the security features: the SQL passes and a column tracer per query, failing closed.

Permission extraction and masking both need the qualified query tree, its sqlglot scope tree and a
:class:`~lineage_platform.sql.tracer.Tracer` over it. This module runs the project's SQL pipeline
(:data:`lineage_platform.sql.PASSES`) on a statement, or on each statement of a script with its session,
and refuses anything that could not be traced completely: a security decision on a partial trace would
be a silent leak.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lineage_platform.errors import SecurityError
from lineage_platform.sql.analysis import QueryUnit, StatementAnalysis
from lineage_platform.sql.extractor import run_passes
from lineage_platform.sql.function_rules import merge_rules
from lineage_platform.sql.parsing import StatementParseError, parse_statement
from lineage_platform.sql.script import split_statements, substitute_variables
from lineage_platform.sql.session import Session
from lineage_platform.sql.tracer import Tracer

QUERY_OPERATIONS = frozenset(
    {"SELECT", "INSERT", "INSERT_OVERWRITE", "CREATE_AS_SELECT", "CREATE_VIEW", "MERGE"}
)
"""Statements whose reads can be checked: a query, alone or feeding a write."""
SESSION_OPERATIONS = frozenset({"USE", "SET"})
"""Statements that only change what later statements of a script see."""


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
    session = Session.start(schema, dialect, default_db, None)
    return _checked(_analyse(sql.strip().rstrip(";"), session, 0))


def trace_script(
    sql: str,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
    variables: Mapping[str, str] | None = None,
) -> list[TracedQuery]:
    """Every query statement of a script, traced in order with what earlier statements tell later ones.

    ``USE``, ``SET`` (variables) and views defined earlier apply to later statements, as in Hive. Any other
    statement without a query (DROP, ALTER, LOAD, ...) is refused: its privileges are not modelled here.

    >>> [t.analysis.operation for t in trace_script("USE db; SELECT a FROM t")]
    ['SELECT']
    """
    session = Session.start(schema, dialect, default_db, variables)
    traced = []
    for index, statement in enumerate(split_statements(sql)):
        analysis = _analyse(substitute_variables(statement.text, session.variables), session, index)
        session.apply(analysis.effect)
        if analysis.operation not in SESSION_OPERATIONS:
            traced.append(_checked(analysis))
    if not traced:
        raise SecurityError("denied: the script has no query to check", hint="pass at least one query")
    return traced


def _analyse(text: str, session: Session, index: int) -> StatementAnalysis:
    """Parse and run the SQL passes on one statement; failures become denials naming the statement."""
    where = f"statement {index + 1}"
    try:
        expression = parse_statement(text, session.dialect)
    except StatementParseError as error:
        raise SecurityError(
            f"denied: {where} does not parse ({error.message} at line {error.line}, column {error.column})",
            hint=f"fix the SQL or pick the right --dialect (now {session.dialect})",
        ) from error
    try:
        return run_passes(StatementAnalysis(index, text, expression, session))
    except Exception as error:  # sqlglot raises many types; any of them means "not traceable"
        raise SecurityError(
            f"denied: {where} could not be traced ({type(error).__name__}: {error})",
            hint="simplify the statement or report it with the SQL attached",
        ) from error


def _checked(analysis: StatementAnalysis) -> TracedQuery:
    """The analysis with one tracer per unit, when it is a query traced without any issue."""
    where = f"statement {analysis.index + 1}"
    if analysis.operation not in QUERY_OPERATIONS or not analysis.units:
        raise SecurityError(
            f"denied: {where} ({analysis.operation}) reads no query that could be checked",
            hint="pass SELECT, INSERT ... SELECT, CREATE TABLE ... AS SELECT, CREATE VIEW or MERGE statements",
        )
    if analysis.issues:
        reasons = "; ".join(issue.message for issue in analysis.issues)
        raise SecurityError(
            f"denied: {where} cannot be fully traced: {reasons}",
            hint="pass the table schemas (--schema) and qualify ambiguous columns",
        )
    rules = merge_rules(None)
    tracers = []
    for unit in analysis.units:
        if unit.scope is None:
            raise SecurityError(
                f"denied: the scopes of {where} could not be analysed", hint="simplify the statement"
            )
        tracers.append(Tracer(unit.scope, rules, _refuse, analysis.session.columns_of))
    return TracedQuery(analysis, tracers)


def _refuse(message: str, node: Any) -> None:
    """Issue reporter for security tracing: anything the tracer cannot place stops the decision."""
    raise SecurityError(
        f"denied: the statement cannot be fully traced: {message}",
        hint="pass the table schemas (--schema) and qualify ambiguous columns",
    )
