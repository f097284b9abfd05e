"""Pass: what later statements of the script learn from this one (table columns, views, drops, renames)."""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.tracer import leftmost_select


def record_effects(analysis: StatementAnalysis) -> StatementAnalysis:
    """Fill ``effect``: written tables' columns, view definitions (qualified SQL), temporary names, drops.

    >>> from lineage_platform.sql.extractor import new_analysis, run_passes
    >>> a = run_passes(new_analysis("CREATE VIEW v AS SELECT a FROM db.t"), until=record_effects)
    >>> a.effect.views
    (('default.v', 'SELECT a FROM db.t AS t'),)
    """
    effect = analysis.effect
    tables = dict(effect.tables)
    views = dict(effect.views)
    temporary = set(effect.temporary)
    dropped = set(effect.dropped)
    operation = analysis.operation
    for dataset in analysis.outputs:
        if operation == "DROP":
            dropped.add(dataset.name)
        elif dataset.columns and operation in (
            "CREATE_TABLE",
            "CREATE_AS_SELECT",
            "CREATE_VIEW",
            "ALTER_RENAME",
        ):
            tables[dataset.name] = dataset.columns
        if dataset.kind == "temp" and operation != "DROP":
            temporary.add(dataset.name)
    if operation == "ALTER_RENAME":
        dropped.update(d.name for d in analysis.inputs)
    if operation == "CREATE_VIEW":
        for unit in analysis.units:
            views[unit.target.name] = _definition(unit.query, unit.target_columns).sql(analysis.dialect)
    analysis.effect = replace(
        effect,
        tables=tuple(tables.items()),
        views=tuple(views.items()),
        temporary=tuple(sorted(temporary)),
        dropped=tuple(sorted(dropped)),
    )
    return analysis


def _definition(query: exp.Query, columns: tuple[str, ...] | None) -> exp.Query:
    """The view's query with its outputs renamed to the view's declared column list, if it has one.

    ``col AS col`` becomes ``col``: sqlglot cannot re-qualify ``SELECT a AS a … GROUP BY a`` over a table of
    unknown schema (it cannot tell the alias from the column), and the view is qualified again where used.
    """
    renamed = query.copy()
    for alias in list(renamed.find_all(exp.Alias)):
        if isinstance(alias.this, exp.Column) and alias.this.name == alias.alias and alias.parent_select:
            alias.replace(alias.this)
    select = leftmost_select(renamed)
    for projection, name in zip(select.selects, columns or ()):
        projection.replace(exp.alias_(projection.unalias().copy(), name))
    return renamed
