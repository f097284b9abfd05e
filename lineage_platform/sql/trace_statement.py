"""The SQL analysis other packages build on: a statement (or a script) after the passes, with a column tracer per
query unit.

``trace_statement`` runs :data:`~lineage_platform.sql.PASSES` on one statement, ``trace_script`` on each statement
of a script with what earlier ones tell later ones (``USE``, ``SET`` variables, views). Each result is a
:class:`TracedStatement`: its operation, written datasets, query units (query tree and sqlglot scope tree),
filter predicates, the issues the passes met, and one :class:`~lineage_platform.sql.tracer.Tracer` per unit
to follow any expression of the scopes back to base columns (:class:`~lineage_platform.sql.flow.Flow`). A
statement the passes cannot analyse raises :class:`StatementTraceError` naming it.

>>> traced = trace_statement("SELECT upper(name) AS n FROM db.users WHERE id = 1")
>>> traced.operation, traced.units[0].query.sql()
('SELECT', 'SELECT UPPER(name) AS n FROM db.users AS users WHERE id = 1')
>>> unit, tracer = traced.units[0], traced.tracers[0]
>>> [(f.source, f.usage.transform) for f in tracer.output_at(unit.scope, 0)]
[('db.users.name', 'TRANSFORMATION')]
>>> [(p.column, p.op, p.value) for p in traced.predicates]
[('id', '=', 1)]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lineage_platform.errors import SqlError
from lineage_platform.model import Dataset, Operation, Predicate, SqlIssue
from lineage_platform.sql.analysis import QueryUnit, StatementAnalysis
from lineage_platform.sql.extractor import run_passes
from lineage_platform.sql.function_rules import FunctionRule, merge_rules
from lineage_platform.sql.parsing import StatementParseError, parse_statement
from lineage_platform.sql.script import SHELL_DIALECTS, split_statements, substitute_variables
from lineage_platform.sql.session import Session
from lineage_platform.sql.tracer import IssueReporter, Tracer


class StatementTraceError(SqlError):
    """A statement the SQL passes could not analyse: ``index`` is its 0-based place in the script, ``cause`` the
    error (a :class:`~lineage_platform.sql.parsing.StatementParseError` when it does not parse)."""

    def __init__(self, index: int, cause: Exception) -> None:
        parsed = not isinstance(cause, StatementParseError)
        super().__init__(
            f"statement {index + 1} {'could not be traced' if parsed else 'does not parse'}: {cause}",
            hint="simplify the statement" if parsed else "check its syntax or pick the right dialect",
        )
        self.index = index
        self.cause = cause


@dataclass
class TracedStatement:
    """One statement after the SQL passes, with a tracer per query unit (None for a unit without scopes)."""

    analysis: StatementAnalysis
    tracers: list[Tracer | None]

    @property
    def index(self) -> int:
        """0-based place of the statement in its script."""
        return self.analysis.index

    @property
    def sql(self) -> str:
        """The statement's text (variables substituted)."""
        return self.analysis.sql

    @property
    def operation(self) -> Operation:
        """What the statement does (SELECT, INSERT, CREATE_AS_SELECT, USE, ...)."""
        return self.analysis.operation

    @property
    def inputs(self) -> list[Dataset]:
        """The datasets it reads, with the columns it reads of each."""
        return self.analysis.inputs

    @property
    def outputs(self) -> list[Dataset]:
        """The datasets it writes (a SELECT writes its temporary result)."""
        return self.analysis.outputs

    @property
    def units(self) -> list[QueryUnit]:
        """Its query units, each a query tree with its scope tree (a Hive multi-insert has several)."""
        return self.analysis.units

    @property
    def predicates(self) -> list[Predicate]:
        """Its ``column op constant`` filter conditions."""
        return self.analysis.predicates

    @property
    def issues(self) -> list[SqlIssue]:
        """What the passes could not resolve (empty when the statement was traced completely)."""
        return self.analysis.issues

    def columns_of(self, table: str) -> tuple[str, ...] | None:
        """The columns of ``table`` (``db.t``) known to the statement's session (schema, earlier DDL), or None."""
        return self.analysis.session.columns_of(table)


def trace_statement(
    sql: str,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
    *,
    rules: Mapping[str, FunctionRule] | None = None,
    on_issue: IssueReporter | None = None,
) -> TracedStatement:
    """Run the SQL passes on one statement; its tracers report to ``on_issue`` (default: the statement's issues).

    >>> trace_statement("INSERT INTO db.o SELECT a FROM db.t").outputs[0].name
    'db.o'
    """
    session = Session.start(schema, dialect, default_db, None)
    return _trace(sql.strip().rstrip(";"), session, 0, rules, on_issue)


def trace_script(
    sql: str,
    schema: Mapping[str, Any] | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
    variables: Mapping[str, str] | None = None,
    *,
    rules: Mapping[str, FunctionRule] | None = None,
    on_issue: IssueReporter | None = None,
) -> Iterator[TracedStatement]:
    """Every statement of a script in order, each traced when it is reached with what earlier statements set
    (``USE``, ``SET`` variables, views), as in Hive.

    >>> use, select = trace_script("USE db; SELECT a FROM t")
    >>> use.operation, use.units, select.units[0].query.sql()
    ('USE', [], 'SELECT a AS a FROM db.t AS t')
    """
    session = Session.start(schema, dialect, default_db, variables)
    for index, statement in enumerate(split_statements(sql)):
        text = substitute_variables(
            statement.text, session.variables, shell=session.dialect in SHELL_DIALECTS
        )
        traced = _trace(text, session, index, rules, on_issue)
        session.apply(traced.analysis.effect)
        yield traced


def _trace(
    text: str,
    session: Session,
    index: int,
    rules: Mapping[str, FunctionRule] | None,
    on_issue: IssueReporter | None,
) -> TracedStatement:
    try:
        analysis = run_passes(StatementAnalysis(index, text, parse_statement(text, session.dialect), session))
    except Exception as error:  # sqlglot raises many types; any of them means "not traceable"
        raise StatementTraceError(index, error) from error
    merged = merge_rules(rules)
    report = on_issue or (lambda message, node: analysis.issue(message, node=node))
    tracers = [
        None if unit.scope is None else Tracer(unit.scope, merged, report, session.columns_of)
        for unit in analysis.units
    ]
    return TracedStatement(analysis, tracers)
