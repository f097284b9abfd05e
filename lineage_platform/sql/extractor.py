"""``extract_lineage``: split a script, parse each statement once, run the passes, return lineage records.

Mirrors sqlglot's ``optimize``: :data:`PASSES` is a tuple of functions ``pass(analysis, **options) ->
analysis``; each pass receives only the keyword options its signature names.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlglot.errors import SqlglotError

from lineage_platform.errors import LineageError, SqlError
from lineage_platform.model import ColumnEdge, Dataset, SqlIssue, StatementLineage
from lineage_platform.sql import script
from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.build_scopes import build_scopes
from lineage_platform.sql.classify_statement import classify_statement
from lineage_platform.sql.collect_datasets import collect_datasets
from lineage_platform.sql.eliminate_unused_ctes import eliminate_unused_ctes
from lineage_platform.sql.expand_regex_columns import expand_regex_columns
from lineage_platform.sql.expand_views import expand_views
from lineage_platform.sql.extract_predicates import extract_predicates
from lineage_platform.sql.mark_recursive_ctes import mark_recursive_ctes
from lineage_platform.sql.name_outputs import name_outputs
from lineage_platform.sql.parsing import StatementParseError, parse_statement
from lineage_platform.sql.prune_projections import prune_projections
from lineage_platform.sql.qualify_statement import qualify_statement
from lineage_platform.sql.record_effects import record_effects
from lineage_platform.sql.resolve_join_using import resolve_join_using
from lineage_platform.sql.salvage import salvage_tables
from lineage_platform.sql.script import (
    ScriptStatement,
    normalize_text,
    quote_variable_names,
    split_statements,
    substitute_variables,
)
from lineage_platform.sql.separate_lateral_aliases import separate_lateral_aliases
from lineage_platform.sql.session import Catalog, Session, SessionEffect
from lineage_platform.sql.simplify_statement import simplify_statement
from lineage_platform.sql.trace_columns import trace_columns

Pass = Callable[..., StatementAnalysis]

PASSES: tuple[Pass, ...] = (
    classify_statement,
    mark_recursive_ctes,
    expand_views,
    eliminate_unused_ctes,
    separate_lateral_aliases,
    resolve_join_using,
    name_outputs,
    qualify_statement,
    expand_regex_columns,
    simplify_statement,
    prune_projections,
    build_scopes,
    collect_datasets,
    trace_columns,
    extract_predicates,
    record_effects,
)
"""The default pipeline, in order."""

CACHE_SIZE = 4096
_cache: OrderedDict[tuple[Any, ...], tuple[StatementLineage, SessionEffect]] = OrderedDict()
_cache_lock = threading.Lock()  # collectors may extract from several threads


def extract_lineage(
    sql: str,
    schema: Mapping[str, Any] | Catalog | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
    variables: Mapping[str, str] | None = None,
    passes: Sequence[Pass] = PASSES,
    **options: Any,
) -> list[StatementLineage]:
    """Lineage records of every statement of a script, in order; bad statements yield errors, not exceptions.

    Args:
        sql: one or more statements separated by ``;`` (comments and ``SET`` allowed).
        schema: catalog ``{db: {table: {column: type}}}`` used to expand ``*`` and resolve columns, or a
            :class:`Catalog` prepared once for many calls.
        dialect: sqlglot dialect name (``hive``, ``spark``, ...).
        default_db: database of unqualified names until a ``USE`` (Hive's ``default`` when omitted).
        variables: values for ``${x}`` / ``${hivevar:x}``; ``SET hivevar:x=...`` in the script adds more.
        passes: the pipeline; options (e.g. ``function_rules``) go to the passes that name them.

    >>> [r] = extract_lineage("INSERT INTO db.o SELECT a AS x FROM db.t")
    >>> r.operation, [(e.source, e.target) for e in r.column_edges]
    ('INSERT', [('db.t.a', 'db.o.x')])
    """
    _check_options(passes, options)
    session = Session.start(schema, dialect, default_db, variables)
    records = []
    for index, statement in enumerate(split_statements(sql, dialect)):
        record, effect = _lineage_of(statement, index, session, tuple(passes), options)
        session.apply(effect)
        records.append(record)
    return records


def new_analysis(
    sql: str,
    schema: Mapping[str, Any] | Catalog | None = None,
    dialect: str = "hive",
    default_db: str | None = None,
    index: int = 0,
) -> StatementAnalysis:
    """A fresh analysis of one statement over a new session (for running passes one by one)."""
    session = Session.start(schema, dialect, default_db, None)
    return StatementAnalysis(index, sql, parse_statement(sql, dialect), session)


def run_passes(
    analysis: StatementAnalysis, passes: Sequence[Pass] = PASSES, until: Pass | None = None, **options: Any
) -> StatementAnalysis:
    """Run ``passes`` in order (stopping after ``until``), each given the options its signature names."""
    for step in passes:
        accepted = _parameters(step)
        analysis = step(analysis, **{k: v for k, v in options.items() if k in accepted})
        if step is until:
            break
    return analysis


@functools.cache
def _parameters(step: Pass) -> tuple[str, ...]:
    """The parameter names of a pass (inspect.signature is too slow to ask per statement)."""
    return tuple(inspect.signature(step).parameters)


def _check_options(passes: Sequence[Pass], options: dict[str, Any]) -> None:
    """Refuse options no pass takes (a misspelt ``function_rules`` would otherwise be ignored)."""
    accepted = {name for step in passes for name in _parameters(step)[1:]}
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise SqlError(
            f"unknown extract_lineage option(s): {', '.join(unknown)}",
            hint=f"the passes take: {', '.join(sorted(accepted)) or 'no options'}",
        )


def clear_cache() -> None:
    """Forget every cached statement result (frees memory; results never go stale, see the cache key)."""
    with _cache_lock:
        _cache.clear()
    script.clear_cache()


def _lineage_of(
    statement: ScriptStatement,
    index: int,
    session: Session,
    passes: tuple[Pass, ...],
    options: dict[str, Any],
) -> tuple[StatementLineage, SessionEffect]:
    shell = session.dialect in script.SHELL_DIALECTS
    text, unknown_names = quote_variable_names(
        substitute_variables(statement.text, session.variables, shell=shell),
        shell=shell,
        dialect=session.dialect,
    )
    key = (normalize_text(text), session.dialect, session.fingerprint, passes, _options_key(options))
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
    if cached is None:
        cached = _analyse(text, unknown_names, session, passes, options)
        with _cache_lock:
            _cache[key] = cached
            if len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    template, effect = cached
    errors = tuple(_place(issue, index, statement) for issue in template.errors)
    return replace(template, index=index, sql=statement.text, errors=errors), effect


def _analyse(
    text: str,
    unknown_names: tuple[str, ...],
    session: Session,
    passes: tuple[Pass, ...],
    options: dict[str, Any],
) -> tuple[StatementLineage, SessionEffect]:
    """Run the passes over one statement; the record's positions are relative to the statement."""
    try:
        expression = parse_statement(text, session.dialect)
    except StatementParseError as error:
        return _unparsed(text, error, session), SessionEffect()
    try:
        analysis = StatementAnalysis(0, text, expression, session)
        if unknown_names:
            analysis.issue(
                f"names hold variables without a value: {', '.join(unknown_names)}; "
                "pass --var NAME=VALUE (variables=...) or SET hivevar:NAME=VALUE before the statement"
            )
        analysis = run_passes(analysis, passes, **options)
    except (
        SqlglotError,
        LineageError,
        RecursionError,
        AssertionError,
        ValueError,
        TypeError,
        AttributeError,
        KeyError,
        IndexError,
    ) as error:
        # One statement sqlglot or a pass cannot handle must not stop the batch: report it and go on, keeping
        # the tables its tokens name as for a statement that does not parse.
        message = f"statement could not be analysed: {type(error).__name__}: {error}"
        return _salvaged(text, SqlIssue(0, 1, 1, message, "unsupported"), session), SessionEffect()
    record = StatementLineage(
        index=0,
        operation=analysis.operation,
        sql=text,
        inputs=_unique_datasets(analysis.inputs),
        outputs=_unique_datasets(analysis.outputs),
        column_edges=_unique_edges(analysis.edges),
        predicates=tuple(dict.fromkeys(analysis.predicates)),
        errors=tuple(dict.fromkeys(analysis.issues)),
    )
    return record, analysis.effect


def _unparsed(text: str, error: StatementParseError, session: Session) -> StatementLineage:
    """The record of a statement that does not parse: the error, and the tables its tokens name."""
    return _salvaged(text, SqlIssue(0, error.line, error.column, error.message, "parse"), session)


def _salvaged(text: str, issue: SqlIssue, session: Session) -> StatementLineage:
    """The record of a statement without lineage of its own: ``issue``, and the tables its tokens name."""
    tables = salvage_tables(text, session.dialect, session.current_db)
    if tables and (tables.reads or tables.writes):
        issue = replace(
            issue, message=issue.message + "; table-level lineage recovered from the statement's tokens"
        )
    return StatementLineage(
        0,
        "OTHER",
        text,
        inputs=tuple(Dataset(name) for name in tables.reads) if tables else (),
        outputs=tuple(Dataset(name) for name in tables.writes) if tables else (),
        errors=(issue,),
    )


def _unique_datasets(datasets: list[Dataset]) -> tuple[Dataset, ...]:
    """One dataset per name, the first seen with the most columns known."""
    merged: dict[str, Dataset] = {}
    for dataset in datasets:
        known = merged.get(dataset.name)
        if known is None or (not known.columns and dataset.columns):
            merged[dataset.name] = dataset
    return tuple(merged.values())


def _unique_edges(edges: list[ColumnEdge]) -> tuple[ColumnEdge, ...]:
    """Edges without repeats; a column-specific weak edge already implied by a row-level one is dropped."""
    unique = dict.fromkeys(edges)
    row_level = {(e.source, e.target, e.transform) for e in unique if e.strength == "weak"}
    return tuple(
        e
        for e in unique
        if not (e.strength == "weak" and (e.source, e.target.rpartition(".")[0], e.transform) in row_level)
    )


def _place(issue: SqlIssue, index: int, statement: ScriptStatement) -> SqlIssue:
    """An issue positioned in the script instead of the statement."""
    column = issue.column + statement.column - 1 if issue.line == 1 else issue.column
    return replace(issue, statement=index, line=issue.line + statement.line - 1, column=column)


def _options_key(options: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted((k, repr(v)) for k, v in options.items()))
