"""What a script's earlier statements tell later ones: current database, table schemas, views, variables."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.schema import MappingSchema

from lineage_platform.errors import SqlError

HIVE_DEFAULT_DB = "default"


@dataclass(frozen=True)
class SessionEffect:
    """The change one statement makes to the session; cached with the statement's lineage and replayed."""

    use_db: str | None = None
    variables: tuple[tuple[str, str], ...] = ()
    tables: tuple[tuple[str, tuple[str, ...]], ...] = ()
    views: tuple[tuple[str, str], ...] = ()
    temporary: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any((self.use_db, self.variables, self.tables, self.views, self.temporary, self.dropped))


class Catalog:
    """A table catalog prepared once: normalised, fingerprinted and indexed for sqlglot.

    Pass one to :func:`lineage_platform.sql.extract_lineage` instead of the raw mapping when calling it
    many times (e.g. statement by statement from a log reader): a large metastore is then not re-read on
    every call. Scripts never change a catalog; their DDL goes to a private copy.

    ``views`` maps ``db.view`` to the view's defining query (e.g. a metastore's expanded view text); such
    views are resolved to their base tables like views created earlier in a script.

    >>> catalog = Catalog({"DB": {"T": {"A": "int"}}}, dialect="hive", views={"DB.V": "SELECT a FROM db.t"})
    >>> catalog.columns_of("db.t"), catalog.views
    (('a',), {'db.v': 'SELECT a FROM db.t'})
    """

    def __init__(
        self,
        schema: Mapping[str, Any] | None = None,
        dialect: str = "hive",
        views: Mapping[str, str] | None = None,
    ) -> None:
        self.dialect = dialect
        self.mapping = normalize_schema(schema or {})
        self.views = {name.lower(): query for name, query in (views or {}).items()}
        for name in self.views:
            if "." not in name:
                raise SqlError(f"view {name!r} has no database", hint="name catalog views db.view")
        seed = json.dumps([self.mapping, self.views], sort_keys=True)
        self.fingerprint = hashlib.sha1(seed.encode()).hexdigest()
        self.schema = _sqlglot_schema(self.mapping, dialect)

    def columns_of(self, qualified: str) -> tuple[str, ...] | None:
        """Known column names of ``db.table`` in catalog order, or None when the table is unknown.

        The catalog has two levels, as sqlglot reads it: ``catalog.db.table`` is looked up as ``db.table``.
        """
        db, table = _two_parts(qualified)
        mapping = self.mapping.get(db, {}).get(table)
        return tuple(mapping) if mapping else None

    def add_table(self, qualified: str, columns: tuple[str, ...]) -> None:
        """Record a table a script created (only ever on a :meth:`private_copy`)."""
        db, table = _two_parts(qualified)
        self.mapping.setdefault(db, {})[table] = dict.fromkeys(columns, "string")
        self.schema.add_table(
            exp.table_(table, db), dict.fromkeys(columns, "string"), dialect=self.dialect, normalize=True
        )

    def private_copy(self) -> Catalog:
        """A copy a script may add tables to without touching this catalog (same fingerprint)."""
        copy = Catalog.__new__(Catalog)
        copy.dialect = self.dialect
        copy.mapping = {db: dict(tables) for db, tables in self.mapping.items()}
        copy.views = self.views
        copy.fingerprint = self.fingerprint
        copy.schema = _sqlglot_schema(copy.mapping, self.dialect)
        return copy


@dataclass
class Session:
    """Mutable state of one script run; read by the passes, changed only through :meth:`apply`."""

    dialect: str
    current_db: str
    catalog: Catalog
    variables: dict[str, str] = field(default_factory=dict)
    views: dict[str, str] = field(default_factory=dict)
    temporary: set[str] = field(default_factory=set)
    fingerprint: str = ""
    _private_catalog: bool = False

    @classmethod
    def start(
        cls,
        schema: Mapping[str, Any] | Catalog | None,
        dialect: str,
        default_db: str | None,
        variables: Mapping[str, str] | None,
    ) -> Session:
        """A session over a catalog (a prepared :class:`Catalog` or a ``{db: {table: {column: type}}}`` map)."""
        check_dialect(dialect)
        catalog = schema if isinstance(schema, Catalog) and schema.dialect == dialect else None
        if catalog is None:
            catalog = (
                Catalog(schema.mapping, dialect, schema.views)
                if isinstance(schema, Catalog)
                else Catalog(schema, dialect)
            )
        session = cls(
            dialect=dialect,
            current_db=(default_db or HIVE_DEFAULT_DB).lower(),
            catalog=catalog,
            variables=dict(variables or {}),
            views=dict(catalog.views),
        )
        seed = json.dumps([catalog.fingerprint, session.current_db, sorted(session.variables.items())])
        session.fingerprint = hashlib.sha1(seed.encode()).hexdigest()
        return session

    @property
    def schema(self) -> MappingSchema:
        """The sqlglot schema of every table known so far (catalog plus the script's own DDL)."""
        return self.catalog.schema

    def columns_of(self, qualified: str) -> tuple[str, ...] | None:
        """Known column names of ``db.table`` in catalog order, or None when the table is unknown."""
        return self.catalog.columns_of(qualified)

    def qualify_name(self, name: str) -> str:
        """``db.table`` for a possibly unqualified lower-case table name.

        After ``USE catalog.schema`` the current database has two parts: ``t`` becomes
        ``catalog.schema.t`` and ``s.t`` becomes ``catalog.s.t``.
        """
        parts = name.count(".")
        if parts == 0:
            return f"{self.current_db}.{name}"
        catalog = self.current_catalog
        return f"{catalog}.{name}" if parts == 1 and catalog else name

    @property
    def current_catalog(self) -> str | None:
        """The catalog part of the current database (set by ``USE catalog.schema``), else None."""
        catalog, _, _ = self.current_db.rpartition(".")
        return catalog or None

    def apply(self, effect: SessionEffect) -> None:
        """Record a statement's effect so later statements see it."""
        if not effect:
            return
        if effect.use_db:
            self.current_db = effect.use_db
        self.variables.update(effect.variables)
        for name in effect.dropped:
            self.views.pop(name, None)
            self.temporary.discard(name)
        if effect.tables and not self._private_catalog:
            self.catalog = self.catalog.private_copy()
            self._private_catalog = True
        for name, columns in effect.tables:
            self.catalog.add_table(name, columns)
            self.views.pop(name, None)
        self.views.update(effect.views)
        self.temporary.update(effect.temporary)
        self.fingerprint = hashlib.sha1(f"{self.fingerprint}{effect!r}".encode()).hexdigest()


def check_dialect(dialect: str) -> None:
    """Refuse a dialect sqlglot does not know, naming the closest ones."""
    try:
        Dialect.get_or_raise(dialect)
    except ValueError as error:
        raise SqlError(
            str(error),
            hint="pass a sqlglot dialect: hive, spark, databricks, trino, postgres, snowflake, ...",
        ) from error


@functools.cache
def folds_upper(dialect: str) -> bool:
    """Whether the dialect folds unquoted names to upper case (Snowflake, Oracle); others fold to lower case
    or keep the case (then the catalog, lower case, is matched by lower-casing the query's names)."""
    return Dialect.get_or_raise(dialect).NORMALIZATION_STRATEGY is NormalizationStrategy.UPPERCASE


@functools.cache
def folds_lower(dialect: str) -> bool:
    """Whether sqlglot lower-cases the dialect's unquoted table and column names (Hive, Spark, Postgres, Trino,
    T-SQL; not BigQuery or MySQL, whose table names keep their case)."""
    probe = exp.to_table("Ab.Cd")
    parts = [probe.args["this"], probe.args["db"], exp.to_identifier("Ef")]
    normalize = Dialect.get_or_raise(dialect).normalize_identifier
    return all(normalize(part).name.islower() for part in parts)


def _sqlglot_schema(mapping: dict[str, dict[str, dict[str, str]]], dialect: str) -> MappingSchema:
    """sqlglot's view of a lower-case catalog: keys upper-cased where the dialect folds names up (Snowflake,
    Oracle), as its ``qualify`` does to the query."""
    return MappingSchema(mapping, dialect=dialect, normalize=folds_upper(dialect))


def _two_parts(qualified: str) -> tuple[str, str]:
    """(db, table) of ``db.table`` or ``catalog.db.table``: the two levels the catalog keeps."""
    head, _, table = qualified.rpartition(".")
    return head.rpartition(".")[2], table


def normalize_schema(schema: Mapping[str, Any]) -> dict[str, dict[str, dict[str, str]]]:
    """Lower-cased ``{db: {table: {column: type}}}``; a flat ``{"db.table": {...}}`` form is accepted too.

    Three-level catalogs (``{catalog: {db: {table: {...}}}}`` or ``"catalog.db.table"`` keys) are kept under
    their last two levels, as the catalog looks three-part names up.

    >>> normalize_schema({"DB.T": {"A": "int"}, "c": {"s": {"u": {"B": "int"}}}})
    {'db': {'t': {'a': 'int'}}, 's': {'u': {'b': 'int'}}}
    """
    nested: dict[str, dict[str, dict[str, str]]] = {}
    for key, value in schema.items():
        if not isinstance(value, Mapping):
            raise SqlError(
                f"schema entry {key!r} is not a mapping",
                hint='use the nested form {"db": {"table": {"column": "type"}}}',
            )
        if "." in key:
            db, table = _two_parts(key.lower())
            nested.setdefault(db, {})[table] = _columns(key, value)
            continue
        for table, columns in value.items():
            if not isinstance(columns, Mapping):
                raise SqlError(
                    f"schema entry {key}.{table} is not a column mapping",
                    hint='use the nested form {"db": {"table": {"column": "type"}}}',
                )
            if columns and all(isinstance(c, Mapping) for c in columns.values()):  # catalog.db.table
                for name, table_columns in columns.items():
                    nested.setdefault(table.lower(), {})[name.lower()] = _columns(
                        f"{key}.{table}.{name}", table_columns
                    )
                continue
            nested.setdefault(key.lower(), {})[table.lower()] = _columns(f"{key}.{table}", columns)
    return nested


def _columns(table: str, columns: Mapping[str, Any]) -> dict[str, str]:
    result: dict[str, str] = {}
    for column, type_ in columns.items():
        if isinstance(type_, Mapping):
            raise SqlError(
                f"schema entry {table}.{column} has a nested mapping where a type name belongs",
                hint='use the nested form {"db": {"table": {"column": "type"}}} with type names as strings',
            )
        result[str(column).lower()] = str(type_)
    return result
