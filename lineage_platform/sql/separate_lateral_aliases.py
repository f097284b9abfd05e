"""Pass: give a Hive ``LATERAL VIEW`` that reuses its table's alias an alias of its own."""

from __future__ import annotations

from sqlglot import exp

from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.tracer import own_columns


def separate_lateral_aliases(analysis: StatementAnalysis) -> StatementAnalysis:
    """Rename a lateral view alias equal to a FROM / JOIN alias of the same SELECT, and repoint its columns.

    Hive accepts ``FROM t LATERAL VIEW explode(t.arr) t AS x`` (the generated table lives in a namespace of its
    own), whereas one scope cannot hold the same alias twice for sqlglot. A column qualified with the shared
    alias belongs to the lateral view when it names one of the view's columns, else to the table.

    >>> from lineage_platform.sql.extractor import new_analysis
    >>> from lineage_platform.sql.classify_statement import classify_statement
    >>> a = classify_statement(new_analysis("SELECT t.id, t.x FROM t LATERAL VIEW explode(t.arr) t AS x"))
    >>> separate_lateral_aliases(a).units[0].query.sql("hive")
    'SELECT t.id, t_lv.x FROM t LATERAL VIEW EXPLODE(t.arr) t_lv AS x'
    """
    for unit in analysis.units:
        for select in unit.query.find_all(exp.Select):
            laterals = [lateral for lateral in select.args.get("laterals") or [] if lateral.alias]
            if not laterals:
                continue
            taken = {
                name.lower()
                for source in _sources(select)
                for name in (source.alias_or_name, source.name)
                if name
            }
            for lateral in laterals:
                name = lateral.alias.lower()
                if name in taken:
                    _rename(select, lateral, _fresh(name, taken))
                taken.add(lateral.alias.lower())
    return analysis


def _sources(select: exp.Select) -> list[exp.Expr]:
    """The FROM and JOIN sources of ``select`` (their aliases and table names are taken)."""
    source = select.args.get("from_")
    joins = select.args.get("joins") or []
    return ([source.this] if source is not None else []) + [join.this for join in joins]


def _fresh(name: str, taken: set[str]) -> str:
    """``<name>_lv``, numbered when that is taken too."""
    fresh, number = f"{name}_lv", 1
    while fresh in taken:
        number += 1
        fresh = f"{name}_lv{number}"
    return fresh


def _rename(select: exp.Select, lateral: exp.Lateral, fresh: str) -> None:
    """Give ``lateral`` the alias ``fresh``; columns of ``select`` qualified with the old alias that name one of the
    view's columns follow it."""
    alias = lateral.args["alias"]
    old = alias.name.lower()
    outputs = {column.name.lower() for column in alias.columns}
    alias.set("this", exp.to_identifier(fresh))
    for column in own_columns(select):
        if column.table.lower() == old and column.name.lower() in outputs:
            column.set("table", exp.to_identifier(fresh))
