"""Script text handling: split a script into statements, substitute Hive variables, normalise for caching."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp

from lineage_platform.sql.parsing import StatementParseError, parse_statement

_VARIABLE = re.compile(r"\$\{(?:(hivevar|hiveconf|system|env|define):)?([A-Za-z_][\w.\-]*)\}")
_QUOTED_OR_SPACE = re.compile(r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`)|\s+")
_NAME_WITH_VARIABLE = re.compile(r"(?:\w|\$\{[^}\s]*\})*\$\{[^}\s]*\}(?:\w|\$\{[^}\s]*\})*")
_SHELL_VARIABLE = re.compile(r"(?<![\w$])\$([A-Za-z_]\w*)")
"""``$name``: a shell variable of a job script that embeds its SQL (``hive -e "… FROM $APP.ods_log"``)."""
_NAME_WITH_SHELL_VARIABLE = re.compile(
    r"(?:\w|\$\{[^}\s]*\}|\$[A-Za-z_]\w*)*(?:\$\{[^}\s]*\}|(?<![\w$])\$[A-Za-z_]\w*)(?:\w|\$\{[^}\s]*\})*"
)
_SHELL_QUOTED_NAME = re.compile(r'"(\$\{?[A-Za-z_]\w*\}?)"(?=\.)|(\$\{?[A-Za-z_]\w*\}?)""(?=\.)')
"""A shell variable quoted by the job script around a name part (``"$APP".t``, ``$APP"".t``): the shell drops the quotes."""
_TEMPLATE_VARIABLE = re.compile(
    r"\{\{\s*([A-Za-z_][\w.]*)\s*(?:\|\s*[A-Za-z_]\w*\s*(?:\([^{}()]*\)\s*)?)*\}\}"
)
"""``{{ ds }}``, ``{{ params.db }}``, ``{{ schema | sqlsafe }}``: a scheduler's (Airflow, JinjaSQL) template placeholder,
filters included, read as ``${ds}``."""
_HASH_VARIABLE = re.compile(r"#\{([A-Za-z_][\w.\-]*)\}")
"""``#{bizdate}``: a job scheduler's placeholder in Hive / Spark scripts, read as ``${bizdate}``."""
SHELL_DIALECTS = frozenset({"hive", "spark", "spark2", "databricks"})
"""Dialects whose scripts are commonly embedded in shell jobs, so ``$name`` is a variable rather than a name."""
_BEFORE_TABLE_NAME = re.compile(r"\b(?:FROM|JOIN|TABLE|INTO|UPDATE|VIEW|EXISTS|USE|USING)\s+$", re.I)
_GO = re.compile(r"^[ \t]*GO(?:[ \t]+\d+)?[ \t]*$", re.I | re.M)
"""T-SQL's batch separator: a line holding only ``GO`` (optionally a repeat count)."""
_STATEMENT_START = re.compile(
    r"\n[ \t]*(?=(?:INSERT|UPDATE|DELETE|MERGE|SELECT|WITH|CREATE|DROP|ALTER|TRUNCATE|EXEC|EXECUTE|DECLARE|USE)\b)",
    re.I,
)
"""A line that may begin a new statement (T-SQL scripts often end statements without a semicolon)."""
_COMMENT_OR_QUOTED = re.compile(r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`)|--[^\n]*|/\*.*?\*/", re.S)
_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_]\w*)?\$")
"""The opening of a dollar-quoted body (``$$ … $$``, ``$fn$ … $fn$``): Postgres, Snowflake, DuckDB, Redshift."""
_CELL_SEPARATOR = re.compile(r"--[ \t]*COMMAND[ \t]*-{3,}[ \t]*$", re.I)
"""A Databricks notebook exported as SQL: ``-- COMMAND ----------`` lines end cells, written without ``;``."""


@dataclass(frozen=True)
class ScriptStatement:
    """One statement's text and where it starts in the script (1-based line and column)."""

    text: str
    line: int
    column: int


def split_statements(script: str, dialect: str | None = None) -> list[ScriptStatement]:
    """Split a script on top-level semicolons, skipping quotes and comments; empty statements are dropped.

    A dollar-quoted body (``CREATE FUNCTION f() … AS $$ BEGIN …; END $$``) stays in its statement, and a
    Databricks notebook's ``-- COMMAND ----------`` line ends a statement as a semicolon does.

    T-SQL (``dialect="tsql"``) also ends statements at ``GO`` batch separators and where a statement is written
    without a semicolon (``SELECT … INTO #t FROM s`` on one line, ``INSERT …`` on the next): a piece that does not
    parse is cut before a line starting a new statement, where the text before parses on its own.

    >>> [s.text for s in split_statements("USE db; -- a; comment\\nSELECT ';' FROM t;")]
    ['USE db', "-- a; comment\\nSELECT ';' FROM t"]
    >>> [s.text for s in split_statements("DO $$ BEGIN DELETE FROM t; END $$; SELECT 1\\n-- COMMAND ---\\nSELECT 2")]
    ['DO $$ BEGIN DELETE FROM t; END $$', 'SELECT 1', 'SELECT 2']
    >>> [s.text for s in split_statements("DELETE FROM t\\nINSERT INTO t SELECT a FROM s\\nGO", "tsql")]
    ['DELETE FROM t', 'INSERT INTO t SELECT a FROM s']
    """
    if dialect == "tsql":
        script = _GO.sub(lambda m: ";" + " " * (len(m.group()) - 1), script)  # same length: positions hold
    statements: list[ScriptStatement] = []
    start = 0
    i = 0
    n = len(script)
    while i < n:
        ch = script[i]
        if ch in "'\"`":
            i = _skip_quoted(script, i)
            continue
        if script.startswith("--", i):
            end = script.find("\n", i)
            end = n if end < 0 else end
            if _CELL_SEPARATOR.match(script, i, end) and not script[script.rfind("\n", 0, i) + 1 : i].strip():
                _append(statements, script, start, i)
                start = end
            i = end
            continue
        if ch == "$":
            i = _skip_dollar_quoted(script, i)
            continue
        if script.startswith("/*", i):
            end = script.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if ch == ";":
            _append(statements, script, start, i)
            start = i + 1
        i += 1
    _append(statements, script, start, n)
    if dialect == "tsql":
        return [piece for statement in statements for piece in _split_unterminated(statement, dialect)]
    return statements


def _split_unterminated(statement: ScriptStatement, dialect: str) -> list[ScriptStatement]:
    """``statement`` cut into the statements it holds without semicolons, or itself when it parses or no cut
    leaves every piece parseable."""
    text = statement.text
    cuts = [m.end() for m in _STATEMENT_START.finditer(text)]
    if not cuts or _parses(text, dialect):
        return [statement]
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in cuts:
        if _parses(text[start:cut], dialect):
            spans.append((start, cut))
            start = cut
    if not spans or not _parses(text[start:], dialect):
        return [statement]
    spans.append((start, len(text)))
    pieces = []
    for begin, end in spans:
        raw = text[begin:end]
        offset = begin + len(raw) - len(raw.lstrip())
        newline = text.rfind("\n", 0, offset)
        line = statement.line + text.count("\n", 0, offset)
        column = offset - newline if newline >= 0 else statement.column + offset
        pieces.append(ScriptStatement(raw.strip(), line, column))
    return pieces


def clear_cache() -> None:
    """Forget which statement texts were found to parse (see :func:`split_statements`)."""
    _parses.cache_clear()


@functools.lru_cache(maxsize=4096)  # a job log repeats its statements: decide each once
def _parses(text: str, dialect: str) -> bool:
    """Whether ``text`` is one complete statement (an INSERT needs its rows: ``INSERT INTO t (a)`` is a head)."""
    try:
        statement = parse_statement(text, dialect)
    except StatementParseError:
        return False
    return not (isinstance(statement, exp.Insert) and statement.expression is None)


def _skip_quoted(script: str, i: int) -> int:
    """Index just past the quoted literal opening at ``i`` (backslash escapes and doubled quotes honoured)."""
    quote = script[i]
    i += 1
    while i < len(script):
        ch = script[i]
        if ch == "\\" and quote != "`":
            i += 2
            continue
        if ch == quote:
            if script.startswith(quote * 2, i):
                i += 2
                continue
            return i + 1
        i += 1
    return i


def _skip_dollar_quoted(script: str, i: int) -> int:
    """Index just past the dollar-quoted body opening at ``i`` (a function or procedure body holding ``;``), or
    ``i + 1`` when the ``$`` opens none (``$1``, ``${var}``, a ``$`` inside a name such as ``metadata$filename``)."""
    tag = _DOLLAR_TAG.match(script, i)
    if tag is None or (i > 0 and (script[i - 1].isalnum() or script[i - 1] in "_$")):
        return i + 1
    end = script.find(tag.group(), tag.end())
    return len(script) if end < 0 else end + len(tag.group())


def _append(statements: list[ScriptStatement], script: str, start: int, end: int) -> None:
    raw = script[start:end]
    text = raw.strip()
    if not strip_comments(text).strip():
        return
    offset = start + (len(raw) - len(raw.lstrip()))
    line = script.count("\n", 0, offset) + 1
    column = offset - (script.rfind("\n", 0, offset) + 1) + 1
    statements.append(ScriptStatement(text, line, column))


def strip_comments(text: str) -> str:
    """The text without ``--`` and ``/* */`` comments (quoted literals untouched).

    >>> strip_comments("SELECT 1 -- one\\n/* two */")
    'SELECT 1 \\n'
    """
    return _COMMENT_OR_QUOTED.sub(lambda m: m.group(1) or "", text)


def substitute_variables(text: str, variables: Mapping[str, str], *, shell: bool = False) -> str:
    """Replace ``${x}``, ``${hivevar:x}``, ``${hiveconf:x}`` (with ``shell``, also ``$x``) by known values; unknown
    ones stay as written. Scheduler placeholders ``{{ name }}`` (and with ``shell``, ``#{name}``) are read as ``${name}``;
    with ``shell``, the quotes a job script puts around a variable in a name are dropped.

    >>> substitute_variables("dt = '${hivevar:d}' AND h = ${h}", {"d": "2024-01-01"})
    "dt = '2024-01-01' AND h = ${h}"
    >>> substitute_variables("FROM $APP.log WHERE dt = '$day'", {"APP": "gmall"}, shell=True)
    "FROM gmall.log WHERE dt = '$day'"
    >>> substitute_variables('INTO TABLE "$APP".a, $APP"".b', {}, shell=True)  # quotes the job's shell removes
    'INTO TABLE $APP.a, $APP.b'
    >>> substitute_variables("FROM {{ params.db }}.t WHERE ds = '{{ ds }}' AND h = #{hour}", {"ds": "2024-01-01"}, shell=True)
    "FROM ${params.db}.t WHERE ds = '2024-01-01' AND h = ${hour}"
    >>> substitute_variables("FROM hive.{{ schema | sqlsafe }}.t WHERE y = {{year}}", {"schema": "acct1"})
    'FROM hive.acct1.t WHERE y = ${year}'
    """
    if "{{" in text:
        text = _TEMPLATE_VARIABLE.sub(r"${\1}", text)
    if shell and "#{" in text:
        text = _HASH_VARIABLE.sub(r"${\1}", text)
    if "${" in text:

        def replace(match: re.Match[str]) -> str:
            name = match.group(2)
            qualified = f"{match.group(1)}:{name}" if match.group(1) else name
            value = variables.get(qualified, variables.get(name))
            return match.group(0) if value is None else value

        text = _VARIABLE.sub(replace, text)
    if shell and "$" in text:
        text = _SHELL_QUOTED_NAME.sub(lambda match: match.group(1) or match.group(2), text)
        text = _SHELL_VARIABLE.sub(lambda match: variables.get(match.group(1), match.group(0)), text)
    return text


def normalize_text(text: str) -> str:
    """Collapse whitespace outside quoted literals and drop a trailing semicolon: the statement cache key.

    >>> normalize_text("SELECT  a,\\n b FROM t WHERE c = 'x  y' ;")
    "SELECT a, b FROM t WHERE c = 'x  y'"
    """
    collapsed = _QUOTED_OR_SPACE.sub(lambda m: m.group(1) or " ", strip_comments(text)).strip()
    return collapsed.rstrip(";").rstrip()


def quote_variable_names(
    text: str, *, shell: bool = False, dialect: str = "hive"
) -> tuple[str, tuple[str, ...]]:
    """Quote names that still hold an unknown variable (``${db}.t``, ``db_${env}``, ``FROM ${t}``; with
    ``shell``, ``$APP.t`` too) the way ``dialect`` quotes identifiers.

    Such names then parse as identifiers spelt with the variable, instead of sqlglot reading ``${db}`` or
    ``$APP`` as a parameter and losing it. Variables in value positions (``dt = ${day}``) stay as they are in
    Hive / Spark / Databricks, whose parsers read them; other dialects' parsers do not (a parse error, or Trino
    reading ``${day}`` as a column ``day``), so there they become the string ``'${day}'``.
    Returns the text and the quoted names.

    >>> quote_variable_names("INSERT INTO ${db}.t SELECT a FROM db_${env}.s WHERE dt = ${day}")
    ('INSERT INTO `${db}`.t SELECT a FROM `db_${env}`.s WHERE dt = ${day}', ('${db}', 'db_${env}'))
    >>> quote_variable_names("INSERT INTO $APP.t SELECT a FROM $src WHERE dt = $day", shell=True)[0]
    'INSERT INTO `$APP`.t SELECT a FROM `$src` WHERE dt = $day'
    >>> print(quote_variable_names("DELETE FROM hive.${schema}.t WHERE year = ${year}", dialect="trino")[0])
    DELETE FROM hive."${schema}".t WHERE year = '${year}'
    """
    if "${" not in text and not (shell and _SHELL_VARIABLE.search(text)):
        return text, ()
    names = _NAME_WITH_SHELL_VARIABLE if shell else _NAME_WITH_VARIABLE
    values_as_text = dialect not in SHELL_DIALECTS
    quoted: list[str] = []
    pieces: list[str] = []
    position = 0
    for match in _COMMENT_OR_QUOTED.finditer(text):
        pieces.append(_quote_names(text[position : match.start()], quoted, names, dialect, values_as_text))
        pieces.append(match.group(0))
        position = match.end()
    pieces.append(_quote_names(text[position:], quoted, names, dialect, values_as_text))
    return "".join(pieces), tuple(quoted)


def _quote_names(
    chunk: str, quoted: list[str], names: re.Pattern[str], dialect: str, values_as_text: bool
) -> str:
    """Quote the variable-holding names of a chunk of text that has no quotes or comments (and, with
    ``values_as_text``, turn a variable in a value position into a string)."""

    def replace(match: re.Match[str]) -> str:
        name, start, end = match.group(0), match.start(), match.end()
        is_name = (
            chunk[start - 1 : start] == "."
            or chunk[end : end + 1] == "."
            or not (_VARIABLE.fullmatch(name) or _SHELL_VARIABLE.fullmatch(name))
            or _BEFORE_TABLE_NAME.search(chunk[:start]) is not None
        )
        if not is_name:
            return f"'{name}'" if values_as_text and _VARIABLE.fullmatch(name) else name
        quoted.append(name)
        return (
            exp.to_identifier(name, quoted=True).sql(dialect)
            if dialect not in SHELL_DIALECTS
            else f"`{name}`"
        )

    return names.sub(replace, chunk)
