"""Table schemas looked up by the names a statement mentions.

The parser normalises whatever schema it is given on every call, so handing it a whole warehouse
catalog (thousands of tables) for each statement costs far more than the parsing. A statement can only
resolve columns of tables it names, so the subset of tables whose name appears among its words gives
the same lineage at a fraction of the cost.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_WORD = re.compile(r"\w+")


class CatalogIndex:
    """A ``{db: {table: {column: type}}}`` catalog indexed by lower-case table name."""

    def __init__(self, schema: Mapping[str, Mapping[str, Any]] | None) -> None:
        self._tables: dict[str, list[tuple[str, str, Any]]] = {}
        for database, tables in (schema or {}).items():
            for table, columns in tables.items():
                self._tables.setdefault(table.lower(), []).append((database, table, columns))

    def subset(self, sql: str) -> dict[str, dict[str, Any]] | None:
        """The part of the catalog holding every table whose name is a word of ``sql`` (None when empty).

        >>> CatalogIndex({"ods": {"users": {"id": "int"}, "orders": {"id": "int"}}}).subset("select id from ods.users")
        {'ods': {'users': {'id': 'int'}}}
        """
        found: dict[str, dict[str, Any]] = {}
        for word in set(_WORD.findall(sql.lower())):
            for database, table, columns in self._tables.get(word, ()):
                found.setdefault(database, {})[table] = columns
        return found or None
