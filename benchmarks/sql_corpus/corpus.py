"""Load and check the hand-written SQL lineage corpus (``benchmarks/sql_corpus/*.yaml``).

Each YAML file is a list of cases; see ``README.md`` next to this module for the format and for how each
expectation is decided (strong vs weak, temporary objects, partitions, MERGE).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

CORPUS_DIR = Path(__file__).resolve().parent
CATALOG_PATH = CORPUS_DIR / "catalog.json"
RESULT = "$result"
DEFAULT_DIALECT = "hive"
"""The dialect of a case that names none (every case of this Hive / Spark corpus)."""
DIALECTS = ("hive", "spark", "trino", "postgres", "snowflake", "mysql", "tsql", "bigquery")
"""Dialect names a case may carry (sqlglot's names; each adapter maps them onto its tool's own)."""

CONSTRUCTS: dict[str, str] = {
    "select": "plain SELECT into $result",
    "where": "WHERE filters",
    "having": "HAVING",
    "order_by": "ORDER BY / SORT BY",
    "distinct": "SELECT DISTINCT",
    "aggregate": "aggregate functions",
    "case_when": "CASE / if conditions",
    "cast_expr": "casts and expressions",
    "cte": "WITH (CTEs)",
    "subquery": "nested subqueries (FROM, WHERE IN/EXISTS, scalar)",
    "join_inner": "INNER JOIN",
    "join_left": "LEFT OUTER JOIN",
    "join_right": "RIGHT OUTER JOIN",
    "join_full": "FULL OUTER JOIN",
    "join_cross": "CROSS JOIN / comma join",
    "join_semi": "LEFT SEMI JOIN",
    "join_anti": "LEFT ANTI JOIN",
    "union": "UNION / UNION ALL",
    "intersect": "INTERSECT",
    "except": "EXCEPT",
    "window": "window functions",
    "lateral_explode": "LATERAL VIEW explode",
    "lateral_posexplode": "LATERAL VIEW posexplode",
    "lateral_json_tuple": "LATERAL VIEW json_tuple",
    "lateral_inline": "LATERAL VIEW inline",
    "grouping_sets": "GROUPING SETS",
    "cube": "CUBE",
    "rollup": "ROLLUP",
    "insert_columns": "INSERT with a column list",
    "static_partition": "static partition spec",
    "dynamic_partition": "dynamic partition spec",
    "insert_into": "INSERT INTO",
    "insert_overwrite": "INSERT OVERWRITE",
    "multi_insert": "Hive multi-insert (FROM t INSERT ... INSERT ...)",
    "catalog_view": "views known in the catalog",
    "create_view": "CREATE VIEW",
    "temp_view": "temporary views created earlier in the script",
    "temp_table": "temporary tables / cached tables created earlier in the script",
    "comments": "comments",
    "set": "SET statements",
    "use": "USE database",
    "star": "* expansion with the catalog",
    "complex_json": "get_json_object / json paths",
    "complex_map": "map['key'] access",
    "complex_struct": "struct.field access",
    "masking": "hashing / masking functions",
    "ctas": "CREATE TABLE AS SELECT",
    "merge": "MERGE INTO (Spark/Delta)",
    "drop": "DROP TABLE / VIEW",
    "alter_rename": "ALTER TABLE ... RENAME TO",
    "load_data": "LOAD DATA INPATH",
}
"""Every construct tag a case may carry, with the description the scorer prints."""


@dataclass(frozen=True)
class Expected:
    """A case's hand-written persistent lineage."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    strong: frozenset[tuple[str, str]]
    weak: frozenset[tuple[str, str]]
    table_edges: frozenset[tuple[str, str]]


@dataclass(frozen=True)
class Case:
    """One corpus entry: a statement or script and its expected lineage."""

    id: str
    file: str
    constructs: tuple[str, ...]
    sql: str
    expected: Expected
    default_db: str | None = None
    temps: tuple[str, ...] = field(default=())
    dialect: str = DEFAULT_DIALECT

    def request(self) -> dict[str, str | None]:
        """The case as an adapter sees it (no expectations)."""
        return {"id": self.id, "sql": self.sql, "default_db": self.default_db, "dialect": self.dialect}


class CorpusError(ValueError):
    """A corpus file does not follow the format."""


def load_catalog(path: Path = CATALOG_PATH) -> dict[str, dict[str, dict[str, str]]]:
    """The shared warehouse catalog in sqlglot's nested schema form ``{db: {table: {column: type}}}``."""
    return json.loads(path.read_text())


def _pairs(raw: object, where: str) -> frozenset[tuple[str, str]]:
    if not isinstance(raw, list) or not all(isinstance(p, list) and len(p) == 2 for p in raw):
        raise CorpusError(f"{where}: expected a list of [source, target] pairs")
    return frozenset((str(s).lower(), str(t).lower()) for s, t in raw)


def _case(raw: dict, file: str, constructs: Mapping[str, str]) -> Case:
    where = f"{file}: {raw.get('id', '?')}"
    missing = {"id", "constructs", "sql", "expected"} - raw.keys()
    if missing:
        raise CorpusError(f"{where}: missing keys {sorted(missing)}")
    unknown = [c for c in raw["constructs"] if c not in constructs]
    if unknown:
        raise CorpusError(f"{where}: unknown constructs {unknown}; add them to the corpus's CONSTRUCTS")
    dialect = raw.get("dialect", DEFAULT_DIALECT)
    if dialect not in DIALECTS:
        raise CorpusError(f"{where}: unknown dialect {dialect!r}; use one of {', '.join(DIALECTS)}")
    exp = raw["expected"]
    inputs = tuple(name.lower() for name in exp.get("inputs") or ())
    outputs = tuple(name.lower() for name in exp.get("outputs") or ())
    if "table_edges" in exp:
        table_edges = _pairs(exp["table_edges"], f"{where} table_edges")
    elif inputs:
        table_edges = frozenset((i, o) for i in inputs for o in outputs)
    else:
        table_edges = frozenset(("", o) for o in outputs)
    return Case(
        id=raw["id"],
        file=file,
        constructs=tuple(raw["constructs"]),
        sql=raw["sql"],
        default_db=raw.get("default_db"),
        temps=tuple(name.lower() for name in raw.get("temps") or ()),
        dialect=dialect,
        expected=Expected(
            inputs=inputs,
            outputs=outputs,
            strong=_pairs(exp.get("strong") or [], f"{where} strong"),
            weak=_pairs(exp.get("weak") or [], f"{where} weak"),
            table_edges=table_edges,
        ),
    )


def load_corpus(directory: Path = CORPUS_DIR, constructs: Mapping[str, str] = CONSTRUCTS) -> list[Case]:
    """Every case of every ``*.yaml`` file in ``directory``, in file then list order."""
    cases = []
    for path in sorted(directory.glob("*.yaml")):
        raw_cases = yaml.safe_load(path.read_text())
        if not isinstance(raw_cases, list):
            raise CorpusError(f"{path.name}: the file must be a YAML list of cases")
        cases.extend(_case(raw, path.name, constructs) for raw in raw_cases)
    return cases


@dataclass(frozen=True)
class Corpus:
    """A set of cases with the catalog they are written against and their construct vocabulary."""

    name: str
    directory: Path
    constructs: Mapping[str, str]
    catalogs: frozenset[str] = frozenset()
    """Catalog names of three-part names; the scorer drops them so datasets compare as ``schema.table``."""

    def cases(self) -> list[Case]:
        """Every case of the corpus."""
        return load_corpus(self.directory, self.constructs)

    def catalog(self) -> dict[str, dict[str, dict[str, str]]]:
        """The corpus's catalog in sqlglot's nested schema form."""
        return load_catalog(self.directory / "catalog.json")


HIVE_SPARK = Corpus("hive-spark", CORPUS_DIR, CONSTRUCTS)
"""This directory's 278-case Hive / Spark corpus."""
