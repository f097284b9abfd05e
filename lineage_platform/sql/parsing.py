"""Text to sqlglot trees: one statement at a time, with Hive's EXPORT/IMPORT understood too."""

from __future__ import annotations

import functools
import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from lineage_platform.errors import SqlError

logging.getLogger("sqlglot").addHandler(logging.NullHandler())
# sqlglot warns when it keeps a statement it cannot parse as a Command; with no handler anywhere Python prints that on
# stderr between the command's results. The record already says so (operation OTHER, its issue); an application that
# configures logging still gets the warning.

_TABLE_NAME = r"(?P<table>[\w`.]+)(?:\s+PARTITION\s*\((?P<partition>[^)]*)\))?"
_PATH = r"'(?P<path>[^']*)'"
_SET = re.compile(r"^\s*SET\b", re.I)
_PARTITION_IF_NOT_EXISTS = re.compile(r"(PARTITION\s*\([^)]*\)\s*)(IF\s+NOT\s+EXISTS)", re.I)
"""Hive's ``INSERT OVERWRITE TABLE t PARTITION (…) IF NOT EXISTS``, which sqlglot does not parse."""
_DIRECTORY_USING = re.compile(r"(DIRECTORY\s+'[^']*'\s+)(USING\s+\w+(?:\s+OPTIONS\s*\([^)]*\))?)", re.I)
"""Spark's ``INSERT OVERWRITE DIRECTORY '…' USING fmt [OPTIONS (…)]`` (the format changes no lineage)."""
_BULK_INSERT = re.compile(r"^\s*BULK\s+INSERT\s+(?P<table>[\w\[\]`\".#]+)\s+FROM\s+'(?P<path>[^']*)'", re.I)
"""T-SQL's ``BULK INSERT t FROM 'file'``: a file loaded into a table, as Hive's LOAD DATA."""
_REPLACE_INTO = re.compile(r"^(\s*)REPLACE(\s+(?:LOW_PRIORITY\s+|DELAYED\s+)?INTO\b)", re.I)
"""MySQL's ``REPLACE INTO t …`` (an INSERT that first deletes clashing rows), which sqlglot keeps as text."""
_DML_TOP = re.compile(r"^(\s*(?:DELETE|UPDATE|INSERT)\s+)(TOP\s*\([^)]*\)(?:\s+PERCENT)?)", re.I)
"""T-SQL's ``DELETE / UPDATE / INSERT TOP (n) [PERCENT] …`` (a row cap, no lineage), which sqlglot misreads."""
_OUTPUT_INTO_COLUMNS = re.compile(r"(\bOUTPUT\b[^;]*?\bINTO\s+[@#\w\[\]\.\"]+\s*)(\([^()]*\))", re.I | re.S)
"""T-SQL's ``OUTPUT inserted.a, $action INTO @log (a, act)`` after a MERGE / INSERT / UPDATE / DELETE: sqlglot
reads the clause without the column list only (the clause is a change log; its target gets no lineage either way)."""
_DEEP_CLONE = re.compile(r"\b(DEEP)(\s+CLONE\b)", re.I)
"""Delta's ``CREATE TABLE x DEEP CLONE y``: parsed like ``SHALLOW CLONE`` (both copy y's data into x)."""
_LIFECYCLE = re.compile(r"\bLIFECYCLE\s+\d+\b", re.I)
"""MaxCompute's (ODPS) ``CREATE TABLE … LIFECYCLE n`` (days a table is kept: no lineage), which sqlglot does not
parse."""
_WITH_DATA = re.compile(r"\bWITH\s+(?:NO\s+)?DATA(?=\s*$)", re.I)
"""Postgres ``CREATE TABLE / MATERIALIZED VIEW … AS query WITH [NO] DATA`` (whether it is filled now: the same
lineage either way), which sqlglot does not parse after a view's query."""
_CREATE = re.compile(r"\s*CREATE\b", re.I)
_CREATES_DATA = re.compile(
    r"^\s*(?:OR\s+REPLACE\s+)?(?:(?:GLOBAL|LOCAL|TEMP|TEMPORARY|EXTERNAL|TRANSIENT|VOLATILE|MATERIALIZED|SECURE|"
    r"UNLOGGED|MULTISET|SET)\s+)*(?:TABLE|VIEW)\b",
    re.I,
)
_DATA_STATEMENTS = {"INSERT", "WITH", "SELECT", "FROM", "MERGE", "UPDATE", "DELETE", "REPLACE", "UPSERT"}
"""Statement keywords whose statement reads or writes data: sqlglot keeping one as unparsed text loses lineage."""
_UNLOAD = re.compile(
    r"^\s*UNLOAD\s*\(\s*'(?P<query>(?:[^']|'')*)'\s*\)\s*TO\s*'(?P<path>[^']*)'", re.I | re.S
)
"""Redshift's ``UNLOAD ('SELECT …') TO 's3://…' …``: the quoted query exported to the path."""
_DYNAMIC_SQL = re.compile(
    r"^\s*EXEC(?:UTE)?\s*(?:\(\s*N?'(?P<exec>(?:[^']|'')*)'\s*\)|(?:sys\.)?sp_executesql\s+N?'(?P<sp>(?:[^']|'')*)'"
    r"|IMMEDIATE\s+'(?P<immediate>(?:[^']|'')*)')\s*;?\s*$",
    re.I | re.S,
)
"""Dynamic SQL given as one string literal: T-SQL ``EXEC('…')`` / ``EXEC sp_executesql N'…'`` (dbt-sqlserver
creates its views this way), ``EXECUTE IMMEDIATE '…'`` (Snowflake, BigQuery, Oracle): the statement inside runs."""
_HIVE_COMMANDS = {
    "EXPORT": re.compile(rf"^\s*EXPORT\s+TABLE\s+{_TABLE_NAME}\s+TO\s+{_PATH}", re.I | re.S),
    "IMPORT": re.compile(
        rf"^\s*IMPORT\s+(?:EXTERNAL\s+)?TABLE\s+{_TABLE_NAME}\s+FROM\s+{_PATH}", re.I | re.S
    ),
    "EXCHANGE": re.compile(
        r"^\s*ALTER\s+TABLE\s+(?P<table>[\w`.]+)\s+EXCHANGE\s+PARTITION\s*\((?P<partition>[^)]*)\)"
        r"\s+WITH\s+TABLE\s+(?P<source>[\w`.]+)",
        re.I | re.S,
    ),
}


class StatementParseError(SqlError):
    """A statement sqlglot cannot parse; ``line``/``column`` are 1-based within the statement."""

    def __init__(self, message: str, *, line: int, column: int) -> None:
        super().__init__(message, hint="check the statement's syntax or pick the right --dialect")
        self.line = line
        self.column = column


def parse_statement(text: str, dialect: str) -> exp.Expr:
    """Parse one statement; Hive ``EXPORT``/``IMPORT`` become a ``Command`` holding (table, path),
    ``ALTER TABLE t EXCHANGE PARTITION (…) WITH TABLE s`` one named ``EXCHANGE`` holding (t, s), T-SQL
    ``BULK INSERT t FROM 'file'`` a ``LoadData`` like Hive's ``LOAD DATA INPATH``, Redshift ``UNLOAD ('query') TO
    'path'`` an ``Export`` like BigQuery's ``EXPORT DATA``; dynamic SQL held in one string literal
    (``EXEC('…')``, ``EXECUTE IMMEDIATE '…'``) is the statement inside.

    ``SET`` statements are not parsed (Hive's ``SET a.b=c`` is not SQL): they become an empty ``Set``.

    >>> command = parse_statement("EXPORT TABLE db.t TO 'hdfs://nn/x'", "hive")
    >>> command.this, command.expression.sql()
    ('EXPORT', "(db.t, 'hdfs://nn/x')")
    """
    if _SET.match(text):
        return exp.Set(expressions=[])
    dynamic = _DYNAMIC_SQL.match(text)
    if dynamic is not None:
        inner = next(group for group in dynamic.groups() if group is not None)
        return parse_statement(inner.replace("''", "'"), dialect)
    command = _hive_command(text, dialect)
    if command is not None:
        return command
    unload = _UNLOAD.match(text)
    if unload is not None:
        query = _parse(unload.group("query").replace("''", "'"), dialect)
        uri = exp.Property(this=exp.var("uri"), value=exp.Literal.string(unload.group("path")))
        return exp.Export(this=query, options=exp.Properties(expressions=[uri]))
    bulk = _BULK_INSERT.match(text)
    if bulk is not None:
        table = exp.to_table(bulk.group("table"), dialect=dialect)
        return exp.LoadData(this=table, inpath=exp.Literal.string(bulk.group("path")))
    # blanked, not removed, so positions in the text stay valid for error reports and predicate values
    text = _PARTITION_IF_NOT_EXISTS.sub(lambda m: m.group(1) + " " * len(m.group(2)), text)
    text = _DIRECTORY_USING.sub(lambda m: m.group(1) + " " * len(m.group(2)), text)
    text = _DML_TOP.sub(lambda m: m.group(1) + " " * len(m.group(2)), text)
    if dialect == "tsql":
        text = _OUTPUT_INTO_COLUMNS.sub(lambda m: m.group(1) + " " * len(m.group(2)), text)
    text = _DEEP_CLONE.sub(lambda m: " " * len(m.group(1)) + m.group(2), text)
    text = _LIFECYCLE.sub(lambda m: " " * len(m.group()), text)
    if _CREATE.match(text):
        text = _WITH_DATA.sub(lambda m: " " * len(m.group()), text)
    text = _REPLACE_INTO.sub(lambda m: m.group(1) + "INSERT " + m.group(2), text)  # same length
    try:
        return _parse(text, dialect)
    except StatementParseError as error:
        wider = _WIDER_DIALECT.get(dialect)
        while wider is not None:  # the first dialect's error is the one reported
            try:
                return _parse(text, wider)
            except StatementParseError:
                wider = _WIDER_DIALECT.get(wider)
        raise error


_WIDER_DIALECT = {"hive": "spark", "spark2": "spark", "spark": "databricks", "presto": "trino"}
"""A dialect whose parser accepts the first one's SQL and more: a job log tagged ``spark`` may hold
Databricks syntax (``payload:a.b``), one tagged ``hive`` Spark syntax."""


@functools.lru_cache(maxsize=1024)
def parse_query(text: str, dialect: str) -> exp.Query:
    """Parse a stored view definition once; callers get the cached tree and must copy before changing it."""
    return _parse(text, dialect)  # type: ignore[return-value]


def _parse(text: str, dialect: str) -> exp.Expr:
    try:
        expressions = sqlglot.parse(text, read=dialect)
    except ParseError as error:
        first = error.errors[0] if error.errors else {}
        raise StatementParseError(
            first.get("description") or str(error), line=first.get("line", 1), column=first.get("col", 1)
        ) from error
    except TokenError as error:
        raise StatementParseError(str(error), line=1, column=1) from error
    except RecursionError as error:
        raise StatementParseError(
            "the statement is nested too deeply to parse (subqueries or expressions hundreds of levels deep)",
            line=1,
            column=1,
        ) from error
    except (ValueError, TypeError, AttributeError, IndexError, KeyError) as error:
        # sqlglot's parser itself failing on odd input (T-SQL DATEDIFF(${day}, d): a unit it cannot name)
        raise StatementParseError(
            f"sqlglot could not parse this statement ({type(error).__name__}: {error})", line=1, column=1
        ) from error
    parsed = [e for e in expressions if e is not None]
    if len(parsed) != 1:
        raise StatementParseError(f"expected one statement, found {len(parsed)}", line=1, column=1)
    if _kept_as_text(parsed[0]):
        raise StatementParseError(
            f"{parsed[0].this.upper()} statement not understood in this dialect (sqlglot kept it as text)",
            line=1,
            column=1,
        )
    return parsed[0]


def _kept_as_text(expression: exp.Expr) -> bool:
    """Whether sqlglot fell back to a ``Command`` for a statement that moves data (an INSERT, a CTAS, a CREATE
    TABLE / VIEW …): its lineage would be lost without a word, so it is treated as not parsed (salvage then keeps
    its tables). Other commands (``ADD JAR``, ``EXPLAIN``, ``CREATE FUNCTION``, ``MSCK REPAIR``) move none.

    >>> _kept_as_text(sqlglot.parse_one("CREATE TABLE t (a INT) WEIRD_OPTION 1", read="hive"))
    True
    >>> _kept_as_text(sqlglot.parse_one("ADD JAR udf.jar", read="hive"))
    False
    """
    if not isinstance(expression, exp.Command) or isinstance(expression.expression, exp.Tuple):
        return False
    keyword = str(expression.this).upper()
    if keyword == "CREATE":
        return _CREATES_DATA.match(str(expression.expression or "")) is not None
    return keyword in _DATA_STATEMENTS


def _hive_command(text: str, dialect: str) -> exp.Command | None:
    for name, pattern in _HIVE_COMMANDS.items():
        match = pattern.match(text)
        if match:
            table = exp.to_table(match.group("table").replace("`", ""), dialect=dialect)
            other = match.groupdict().get("path")
            path = (
                exp.Literal.string(other)
                if other is not None
                else exp.to_table(match.group("source").replace("`", ""), dialect=dialect)
            )
            return exp.Command(this=name, expression=exp.Tuple(expressions=[table, path]))
    return None
