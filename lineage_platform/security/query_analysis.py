"""Traced queries for the security features: the SQL passes and a column tracer per query, failing closed.

Permission extraction and masking both need the qualified query tree, its sqlglot scope tree and a
:class:`~lineage_platform.sql.Tracer` over it: :func:`lineage_platform.sql.trace_statement` and
:func:`~lineage_platform.sql.trace_script` give them. This module refuses anything that could not be traced
completely: a security decision on a partial trace would be a silent leak.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from lineage_platform.errors import SecurityError
from lineage_platform.sql import (
    StatementParseError,
    StatementTraceError,
    TracedStatement,
    trace_statement,
)
from lineage_platform.sql import trace_script as trace_sql_script

QUERY_OPERATIONS = frozenset(
    {"SELECT", "INSERT", "INSERT_OVERWRITE", "CREATE_AS_SELECT", "CREATE_VIEW", "MERGE"}
)
"""Statements whose reads can be checked: a query, alone or feeding a write."""
SESSION_OPERATIONS = frozenset({"USE", "SET"})
"""Statements that only change what later statements of a script see."""

TracedQuery = TracedStatement
"""A statement analysed by the SQL passes, with one tracer per query unit."""


def trace_query(
    sql: str,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
) -> TracedQuery:
    """Analyse one statement completely or raise :class:`SecurityError` saying why (fail closed).

    >>> traced = trace_query("SELECT a FROM db.t WHERE b = 1")
    >>> traced.operation, traced.units[0].query.sql()
    ('SELECT', 'SELECT a AS a FROM db.t AS t WHERE b = 1')
    """
    with _denials(dialect):
        traced = trace_statement(sql, schema, dialect, default_db, on_issue=_refuse)
    return _checked(traced)


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

    >>> [t.operation for t in trace_script("USE db; SELECT a FROM t")]
    ['SELECT']
    """
    traced = []
    with _denials(dialect):
        for statement in trace_sql_script(sql, schema, dialect, default_db, variables, on_issue=_refuse):
            if statement.operation not in SESSION_OPERATIONS:
                traced.append(_checked(statement))
    if not traced:
        raise SecurityError("denied: the script has no query to check", hint="pass at least one query")
    return traced


@contextmanager
def _denials(dialect: str) -> Iterator[None]:
    """A statement the SQL passes cannot analyse becomes a denial naming it."""
    try:
        yield
    except StatementTraceError as error:
        where, cause = f"statement {error.index + 1}", error.cause
        if isinstance(cause, StatementParseError):
            raise SecurityError(
                f"denied: {where} does not parse ({cause.message} at line {cause.line}, column {cause.column})",
                hint=f"fix the SQL or pick the right --dialect (now {dialect})",
            ) from error
        raise SecurityError(
            f"denied: {where} could not be traced ({type(cause).__name__}: {cause})",
            hint="simplify the statement or report it with the SQL attached",
        ) from error


def _checked(traced: TracedQuery) -> TracedQuery:
    """The statement, when it is a query traced without any issue and every unit has its tracer."""
    where = f"statement {traced.index + 1}"
    if traced.operation not in QUERY_OPERATIONS or not traced.units:
        raise SecurityError(
            f"denied: {where} ({traced.operation}) reads no query that could be checked",
            hint="pass SELECT, INSERT ... SELECT, CREATE TABLE ... AS SELECT, CREATE VIEW or MERGE statements",
        )
    if traced.issues:
        reasons = "; ".join(issue.message for issue in traced.issues)
        raise SecurityError(
            f"denied: {where} cannot be fully traced: {reasons}",
            hint="pass the table schemas (--schema) and qualify ambiguous columns",
        )
    if any(tracer is None for tracer in traced.tracers):
        raise SecurityError(
            f"denied: the scopes of {where} could not be analysed", hint="simplify the statement"
        )
    return traced


def _refuse(message: str, node: Any) -> None:
    """Issue reporter for security tracing: anything the tracer cannot place stops the decision."""
    raise SecurityError(
        f"denied: the statement cannot be fully traced: {message}",
        hint="pass the table schemas (--schema) and qualify ambiguous columns",
    )
