"""Table-level lineage recovered from the tokens of a statement sqlglot cannot parse."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

_NAME_TOKENS = {TokenType.VAR, TokenType.IDENTIFIER}
_READS_AFTER = {TokenType.FROM, TokenType.JOIN, TokenType.USING}
_WRITES_AFTER = {TokenType.TABLE, TokenType.INTO, TokenType.VIEW}
_SKIPPED_BEFORE_NAME = {"IF", "NOT", "EXISTS", "TABLE"}
_WRITING_STATEMENTS = {
    TokenType.INSERT,
    TokenType.CREATE,
    TokenType.WITH,
    TokenType.MERGE,
    TokenType.REPLACE,
    TokenType.LOAD,  # Hive LOAD DATA … INTO TABLE t
}


@dataclass(frozen=True)
class SalvagedTables:
    """Tables named after FROM/JOIN/USING (read) and after INSERT … TABLE/INTO, CREATE … TABLE/VIEW, MERGE INTO,
    LOAD DATA … INTO TABLE, UPDATE or DELETE … FROM (written)."""

    reads: tuple[str, ...]
    writes: tuple[str, ...]


def salvage_tables(text: str, dialect: str, current_db: str) -> SalvagedTables | None:
    """Read and written tables of an unparseable statement, or None when even its tokens are unreadable.

    >>> salvage_tables("INSERT OVERWRITE TABLE o SELECT a FROM db.s JOIN t ON x ??? y", "hive", "dw")
    SalvagedTables(reads=('db.s', 'dw.t'), writes=('dw.o',))
    """
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(text)
    except SqlglotError:
        return None
    first = tokens[0].token_type if tokens else None
    writing = first in _WRITING_STATEMENTS
    ctes = _cte_names(tokens)
    reads: dict[str, None] = {}
    writes: dict[str, None] = {}
    target = _target_of_change(tokens)
    if target:
        writes[_qualified(target[0], current_db)] = None
    for position, token in enumerate(tokens):
        if target and position == target[1]:
            continue  # DELETE FROM t: t is written, not read
        if token.token_type in _READS_AFTER:
            name = _name_at(tokens, position + 1)
            if name and name not in ctes:
                reads[_qualified(name, current_db)] = None
        elif writing and token.token_type in _WRITES_AFTER and not writes:
            name = _name_at(tokens, position + 1)
            if name:
                writes[_qualified(name, current_db)] = None
    return SalvagedTables(tuple(reads), tuple(writes))


def _target_of_change(tokens: list[Token]) -> tuple[str, int] | None:
    """(table, position of the keyword naming it) of ``UPDATE t …`` or ``DELETE [x] FROM t …``, else None."""
    if not tokens or tokens[0].token_type not in (TokenType.UPDATE, TokenType.DELETE):
        return None
    if tokens[0].token_type == TokenType.UPDATE:
        name = _name_at(tokens, 1)
        return (name, 0) if name else None
    position = next((i for i, t in enumerate(tokens) if t.token_type == TokenType.FROM), None)
    name = _name_at(tokens, position + 1) if position is not None else None
    return (name, position) if name and position is not None else None


def _cte_names(tokens: list[Token]) -> set[str]:
    """Names defined as ``name AS (`` (CTEs) anywhere in the statement."""
    return {
        tokens[i].text.lower()
        for i in range(len(tokens) - 2)
        if tokens[i].token_type in _NAME_TOKENS
        and tokens[i + 1].token_type == TokenType.ALIAS
        and tokens[i + 2].token_type == TokenType.L_PAREN
    }


def _name_at(tokens: list[Token], position: int) -> str | None:
    """The dotted name starting at ``position`` (after IF NOT EXISTS / TABLE words), if there is one."""
    while position < len(tokens) and tokens[position].text.upper() in _SKIPPED_BEFORE_NAME:
        position += 1
    parts: list[str] = []
    while position < len(tokens) and tokens[position].token_type in _NAME_TOKENS:
        parts.append(tokens[position].text.lower())
        if position + 1 < len(tokens) and tokens[position + 1].token_type == TokenType.DOT:
            position += 2
        else:
            break
    return ".".join(parts) or None


def _qualified(name: str, current_db: str) -> str:
    return name if "." in name else f"{current_db}.{name}"
