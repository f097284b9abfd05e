"""Pass: the datasets each query reads (every base table in its scopes) and the dataset it writes."""

from __future__ import annotations

from sqlglot import exp

from lineage_platform.model import Dataset
from lineage_platform.sql.analysis import StatementAnalysis
from lineage_platform.sql.tracer import file_path, table_name


def collect_datasets(analysis: StatementAnalysis) -> StatementAnalysis:
    """Add the tables read by each unit to ``inputs`` and its target (with column names) to ``outputs``.

    >>> from lineage_platform.sql.extractor import new_analysis, run_passes
    >>> a = run_passes(new_analysis("INSERT INTO db.o SELECT a FROM db.t JOIN db.u ON t.k = u.k"), until=collect_datasets)
    >>> [d.name for d in a.inputs], [(d.name, d.columns) for d in a.outputs]
    (['db.t', 'db.u'], [('db.o', ('a',))])
    """
    session = analysis.session
    for unit in analysis.units:
        if unit.scope is not None:
            for scope in unit.scope.traverse():
                for source in scope.sources.values():
                    if isinstance(source, exp.Table) and (source.name or file_path(source)):
                        name = table_name(source)
                        kind = (
                            "path" if file_path(source) else "temp" if name in session.temporary else "table"
                        )
                        analysis.inputs.append(Dataset(name, kind, session.columns_of(name) or ()))
        names = tuple(dict.fromkeys(n for n in unit.output_names() if n != "*"))
        analysis.outputs.append(Dataset(unit.target.name, unit.target.kind, names))
    return analysis
