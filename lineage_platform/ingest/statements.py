"""From the SQL text of one logged query to the distinct lineage statements it holds.

A logged query may be a script (``SET hivevar:bizdate=...; USE dwd; INSERT ...``). This module splits
it into statements, applies ``SET`` variables and ``USE`` databases to the statements after them, drops
statements that cannot read or write data (SET, USE, SHOW, DESCRIBE, EXPLAIN, GRANT, ...) counting them by
kind (:func:`statement_kind`), and normalises the rest so that runs of the same scheduled statement on
different days share one key:

* comments are removed, whitespace is collapsed and text outside quotes is lower-cased (Hive and
  Spark identifiers and keywords are case-insensitive, so this keeps the statement's meaning);
* inside string literals, the run's **business date** (ISO ``2026-01-05``, also inside paths, or a
  whole ``yyyymmdd`` literal) becomes ``${bizdate}``: a daily job reads and writes the same tables and
  columns whatever its date, and its per-day runs stay apart as run provenance, not as different
  statements. The business date is the latest date in the statement that is the run's start day or
  the day before (schedulers run a day's job on that day or the next); without a start time no date is.

Every other date is kept as written: ``dt >= '2025-01-01'`` is a fixed start, not the run's day, and
TTL advice must see it as one. Everything else (numbers, other literals, identifiers) is kept too, so
statements that differ in what they read or write never share a key.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta

DATE_PLACEHOLDER = "${bizdate}"
ENGINE_DIALECTS: Mapping[str, str] = {"hive": "hive", "spark": "spark", "presto": "presto", "trino": "trino"}
DEFAULT_DIALECT = "hive"

# first keyword of statements that read or write datasets (a plain SELECT reads: its result is a dataset)
_LINEAGE_KEYWORDS = frozenset(
    {
        "select",
        "with",
        "insert",
        "create",
        "drop",
        "alter",
        "load",
        "export",
        "import",
        "from",
        "merge",
        "update",
        "delete",
        "truncate",
    }
)
# CREATE/DROP of these objects moves no data between datasets
_NON_DATASET_OBJECTS = re.compile(r"^(create|drop)\s+(temporary\s+)?(function|macro|role)\b")
# statement kinds (statement_kind): words that name the kind of object after the leading keyword, words that
# say nothing about the kind, and the action words of ALTER TABLE/VIEW that follow the object's name
_KIND_OBJECTS = frozenset(
    [
        "table",
        "tables",
        "view",
        "views",
        "database",
        "databases",
        "schema",
        "schemas",
        "function",
        "functions",
        "macro",
        "role",
        "roles",
        "index",
        "partitions",
        "columns",
        "repair",
        "create",
        "grants",
        "tblproperties",
        "jar",
        "jars",
        "file",
        "files",
    ]
)
_KIND_FILLERS = frozenset(
    [
        "if",
        "not",
        "exists",
        "temporary",
        "external",
        "global",
        "or",
        "replace",
        "formatted",
        "extended",
        "lazy",
    ]
)
_ALTER_ACTIONS = frozenset(
    [
        "partition",
        "partitions",
        "column",
        "columns",
        "tblproperties",
        "serdeproperties",
        "location",
        "fileformat",
        "serde",
        "owner",
        "to",
    ]
)
_KIND_TOKEN = re.compile(r"""'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`[^`]*`|[\w.${}:]+|\S""")
_ISO_DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
_COMPACT_DATE = re.compile(r"^\d{8}$")
_RUN_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")
_SET_VARIABLE = re.compile(
    r"^set\s+(?:(?:hivevar|hiveconf|spark\.sql\.variable)[:.])?([\w.]+)\s*=\s*(.*)$", re.I | re.S
)
_USE_DATABASE = re.compile(r"^use\s+`?(\w+)`?$", re.I)
_SEGMENT = re.compile(
    r"""(?P<comment>--[^\n]*|/\*.*?(?:\*/|$))
      |(?P<string>'(?:\\.|[^'\\])*(?:'|$)|"(?:\\.|[^"\\])*(?:"|$))
      |(?P<ident>`[^`]*(?:`|$))
      |(?P<code>[^'"`;/-]+|/(?!\*)|-(?!-))
      |(?P<semicolon>;)""",
    re.S | re.X,
)


@dataclass(frozen=True)
class Statement:
    """One distinct lineage statement: normalised SQL, the dialect to parse it with and its default db."""

    sql: str
    dialect: str
    default_db: str | None

    @property
    def key(self) -> str:
        """Stable identity of the statement: equal for every run of it, whatever its date or layout."""
        text = f"{self.dialect}\0{self.default_db or ''}\0{self.sql}"
        return hashlib.sha1(text.encode()).hexdigest()


@dataclass(frozen=True)
class PreparedQuery:
    """What one logged query holds: its lineage statements, and the statements without lineage by kind."""

    statements: tuple[Statement, ...]
    without_lineage: Counter[str] = field(default_factory=Counter)


def _segments(sql: str) -> Iterator[tuple[str, str]]:
    """(kind, text) pieces of SQL: comment, string, ident, code or semicolon."""
    for match in _SEGMENT.finditer(sql):
        kind = match.lastgroup
        assert kind is not None
        yield kind, match.group()


def split_statements(sql: str) -> list[str]:
    """Split a script on semicolons outside quotes and comments; empty statements are left out.

    >>> split_statements("SET a=1; SELECT ';' -- x;\\n; INSERT INTO t SELECT 1")
    ['SET a=1', "SELECT ';' -- x;", 'INSERT INTO t SELECT 1']
    """
    statements, current = [], []
    for kind, text in _segments(sql):
        if kind == "semicolon":
            statements.append("".join(current).strip())
            current = []
        else:
            current.append(text)
    statements.append("".join(current).strip())
    return [statement for statement in statements if statement and not _is_only_comments(statement)]


def _is_only_comments(statement: str) -> bool:
    return all(kind == "comment" or not text.strip() for kind, text in _segments(statement))


def _date_of(text: str) -> date | None:
    """The date an ISO (``2026-01-05``) or compact (``20260105``) spelling names, None if it names none."""
    try:
        return (
            date.fromisoformat(text) if "-" in text else date(int(text[:4]), int(text[4:6]), int(text[6:8]))
        )
    except ValueError:
        return None


def _dates_in(literal: str) -> Iterator[date]:
    body = literal[1:-1]
    spellings = [body] if _COMPACT_DATE.match(body) else _ISO_DATE.findall(body)
    yield from (day for day in map(_date_of, spellings) if day is not None)


def business_date(statement: str, start_time: str | None) -> date | None:
    """The run's business date as the statement spells it: its latest date that is the run's start day or the day
    before; None without a start time or without such a date.

    >>> business_date("insert into t select * from s where dt >= '2025-01-01' and dt <= '2026-01-04'",
    ...               "2026-01-05T02:00:00.000Z")
    datetime.date(2026, 1, 4)
    >>> business_date("insert into t select * from s where dt >= '2025-01-01'", "2026-01-05T02:00:00.000Z")
    """
    day = _RUN_DAY.match(start_time or "")
    if day is None or (run_day := _date_of(day.group(1))) is None:
        return None
    candidates = {run_day, run_day - timedelta(days=1)}
    found = [d for kind, text in _segments(statement) if kind == "string" for d in _dates_in(text)]
    return max((d for d in found if d in candidates), default=None)


def _normalise_string(literal: str, bizdate: date | None) -> str:
    quote, body = literal[0], literal[1:-1]
    if bizdate is None:
        return literal
    if _COMPACT_DATE.match(body):
        return f"{quote}{DATE_PLACEHOLDER}{quote}" if _date_of(body) == bizdate else literal
    day = bizdate.isoformat()
    return quote + _ISO_DATE.sub(lambda m: DATE_PLACEHOLDER if m.group() == day else m.group(), body) + quote


def normalise(statement: str, bizdate: date | None = None) -> str:
    """The statement without comments, with collapsed whitespace, lower-cased outside quotes, and the business
    date ``bizdate`` (if given) spelt ``${bizdate}`` inside string literals; other dates stay as written.

    >>> normalise("INSERT  OVERWRITE TABLE T -- daily\\n PARTITION (dt='2026-01-05') SELECT 'A', '2025-01-01'",
    ...           date(2026, 1, 5))
    "insert overwrite table t partition (dt='${bizdate}') select 'A', '2025-01-01'"
    """
    parts = []
    for kind, text in _segments(statement):
        if kind == "comment":
            parts.append(" ")
        elif kind == "string":
            parts.append(_normalise_string(text, bizdate))
        elif kind == "ident":
            parts.append(text.lower())
        else:
            parts.append(re.sub(r"\s+", " ", text.lower()))
    return re.sub(r"\s+", " ", "".join(parts)).strip()


def has_lineage(normalised: str) -> bool:
    """Whether a normalised statement may read or write datasets (so it is worth parsing).

    The parser has the last word: DDL such as ``alter table t add partition (...)`` passes here and comes back
    without datasets.
    """
    first = normalised.lstrip("(").split(" ", 1)[0]
    return first in _LINEAGE_KEYWORDS and not _NON_DATASET_OBJECTS.match(normalised)


def statement_kind(normalised: str) -> str:
    """What kind of statement this is, in upper-case keywords: how statements without lineage are counted.

    The leading keyword, the kind of object it acts on and, for ALTER TABLE/VIEW, the action after the name.

    >>> statement_kind("alter table dwd.t add if not exists partition (dt='${bizdate}')")
    'ALTER TABLE ADD PARTITION'
    >>> statement_kind("alter table t partition (dt='x') set location 'hdfs://nn/t/x'")
    'ALTER TABLE SET LOCATION'
    >>> statement_kind("msck repair table t"), statement_kind("create temporary function f as 'a.F'")
    ('MSCK REPAIR TABLE', 'CREATE FUNCTION')
    >>> statement_kind("grant select on table t to user bob"), statement_kind("refresh t")
    ('GRANT', 'REFRESH')
    """
    tokens = [token for token in _KIND_TOKEN.findall(normalised) if token not in _KIND_FILLERS]
    if not tokens:
        return "EMPTY"
    kind, rest = [tokens[0]], tokens[1:]
    while rest and rest[0] in _KIND_OBJECTS:
        kind.append(rest.pop(0))
    if kind[0] == "alter" and len(kind) > 1 and rest:
        rest = _after_partition_spec(rest[1:])  # the object's name, then an optional partition (...)
        if rest and rest[0].isalpha():
            kind.append(rest.pop(0))
            if rest and rest[0] in _ALTER_ACTIONS:
                kind.append(rest[0])
    return " ".join(kind).upper()


def _after_partition_spec(tokens: list[str]) -> list[str]:
    """``tokens`` without a leading ``partition (...)``."""
    if len(tokens) < 2 or tokens[0] != "partition" or tokens[1] != "(":
        return tokens
    depth = 0
    for position, token in enumerate(tokens[1:], start=1):
        depth += {"(": 1, ")": -1}.get(token, 0)
        if depth == 0:
            return tokens[position + 1 :]
    return []


def _substitute(statement: str, variables: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        return variables.get(match.group(2), match.group(0))

    return re.sub(r"\$\{(hivevar:|hiveconf:)?([\w.]+)\}", value, statement)


def dialect_for(engine: str | None) -> str:
    """The sqlglot dialect for a log's engine name (Hive when unknown)."""
    return ENGINE_DIALECTS.get((engine or "").lower(), DEFAULT_DIALECT)


def prepare_query(
    sql: str, engine: str | None = None, default_db: str | None = None, start_time: str | None = None
) -> PreparedQuery:
    """Split a logged query into its distinct lineage statements, applying SET variables and USE; ``start_time``
    (ISO) of the run tells its business date (see :func:`business_date`).

    >>> prepared = prepare_query("SET hivevar:d=2026-01-05; USE dwd; INSERT INTO t SELECT * FROM s WHERE dt='${d}'",
    ...                          start_time="2026-01-05T03:00:00.000Z")
    >>> [(s.sql, s.default_db) for s in prepared.statements], dict(prepared.without_lineage)
    ([("insert into t select * from s where dt='${bizdate}'", 'dwd')], {'SET': 1, 'USE': 1})
    """
    dialect = dialect_for(engine)
    variables: dict[str, str] = {}
    statements: list[Statement] = []
    without_lineage: Counter[str] = Counter()
    for raw in split_statements(sql):
        text = _substitute(raw, variables)
        if assignment := _SET_VARIABLE.match(text):
            variables[assignment.group(1)] = assignment.group(2).strip()
        elif use := _USE_DATABASE.match(text):
            default_db = use.group(1).lower()
        normalised = normalise(text, business_date(text, start_time))
        if has_lineage(normalised):
            statements.append(Statement(normalised, dialect, default_db))
        else:
            without_lineage[statement_kind(normalised)] += 1
    return PreparedQuery(tuple(statements), without_lineage)
