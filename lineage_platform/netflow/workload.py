"""Choosing the clustering attributes from the workload.

A query log is parsed into statements; identical statements (after normalising whitespace and case) are counted,
which gives each distinct query its frequency. The attribute-frequency matrix has one row per distinct query and one
column per clusterable attribute; a cell is the query's frequency when its WHERE clause filters on the attribute.
An attribute's share is its column sum over the total frequency.

Which attributes to cluster on follows from the workload and the data volume (:func:`read_share`): a time bucket holds
C cells (from the volume, ``layout.size_for_volume``), and the k-d tree gives each of k chosen attributes about
log2(C)/k of its cuts, so a query that filters on j of them reads about C^(-j/k) of a bucket (all of it for j = 0).
The chosen set is the one, of at most ``maximum`` attributes, with the smallest expected share of a bucket read over
the workload's queries (ties: fewer attributes). This is the threshold made to adapt: in the simple case of two
attributes filtered by different queries, the second one is chosen once its share exceeds 1/sqrt(C) of the first
one's — a quarter at 16 cells, an eighth at 64 — so the more data, the lower the bar. A fixed ``threshold`` can still
be given: then attributes whose share reaches it are chosen, most used first.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from lineage_platform.errors import SqlError
from lineage_platform.netflow.layout import MIN_CELLS
from lineage_platform.netflow.records import CLUSTERABLE


@dataclass(frozen=True)
class AttributeChoice:
    """The matrix, each attribute's share of the workload, the chosen attributes, and why."""

    queries: list[str]
    weights: list[int]
    matrix: list[list[int]]  # queries x CLUSTERABLE, cell = weight if the query filters on the attribute
    shares: dict[str, float]
    chosen: tuple[str, ...]
    threshold: float | None  # a fixed share given by hand; None: chosen by the read-share model
    skipped: int  # statements that could not be parsed
    cells: int = 0  # cells per time bucket the model assumed
    maximum: int = 2

    def expected_read(self, attributes: tuple[str, ...]) -> float:
        """The workload's average share of a time bucket read when clustered on ``attributes`` (see module doc)."""
        return read_share(
            self.matrix, self.weights, [CLUSTERABLE.index(name) for name in attributes], self.cells
        )

    def explain(self) -> str:
        """A few lines a person can check: every attribute's share and the verdict."""
        total = sum(self.weights)
        head = f"{total} queries ({len(self.queries)} distinct, {self.skipped} unparsable) — "
        if self.threshold is not None:
            head += f"threshold {self.threshold:.0%}"
        else:
            head += (
                f"{self.cells} cells per time bucket: clustered on {', '.join(self.chosen) or 'time only'}, "
                f"a query reads {self.expected_read(self.chosen):.1%} of a bucket on average"
            )
        lines = [head]
        for name in sorted(self.shares, key=lambda item: -self.shares[item]):
            lines.append(
                f"  {name:<9} filtered by {self.shares[name]:6.1%} of queries -> {self._verdict(name)}"
            )
        return "\n".join(lines)

    def _verdict(self, name: str) -> str:
        if name in self.chosen:
            return "chosen"
        if self.threshold is not None:
            if self.shares[name] >= self.threshold:
                return f"not chosen: only the {len(self.chosen)} most used are kept"
            return "not chosen: below the threshold"
        if self.shares[name] == 0:
            return "not chosen: no query filters on it"
        if len(self.chosen) < self.maximum:
            with_it = self.expected_read((*self.chosen, name))
            return f"not chosen: adding it, a query would read {with_it:.1%} of a bucket on average"
        return f"not chosen: at most {self.maximum} attributes"


def parse_query_log(text: str) -> tuple[Counter[str], int]:
    """Distinct normalised statements of a log (``;``-separated) with their counts, and the unparsable count."""
    counts: Counter[str] = Counter()
    skipped = 0
    for statement in filter(None, (piece.strip() for piece in text.split(";"))):
        try:
            parsed = sqlglot.parse_one(statement, read="duckdb")
        except sqlglot.errors.ParseError:
            skipped += 1
            continue
        counts[parsed.sql(dialect="duckdb", normalize=True)] += 1
    return counts, skipped


def filtered_attributes(sql: str) -> set[str]:
    """Clusterable attributes the statement's WHERE clauses refer to (under AND, OR or NOT alike)."""
    parsed = sqlglot.parse_one(sql, read="duckdb")
    names = set()
    for where in parsed.find_all(exp.Where):
        names.update(column.name for column in where.find_all(exp.Column))
    return names & set(CLUSTERABLE)


def read_share(matrix: list[list[int]], weights: list[int], columns: list[int], cells: int) -> float:
    """Average share of a time bucket a query reads with ``cells`` cells cut on the attributes at ``columns``.

    >>> read_share([[1, 0], [0, 1]], [1, 1], [0], 16)  # one query pinned to 1 of 16 cells, one reading all
    0.53125
    """
    if not columns:
        return 1.0
    total = sum(weights)
    read = 0.0
    for row, weight in zip(matrix, weights):
        pinned = sum(1 for column in columns if row[column])
        read += weight * cells ** (-pinned / len(columns))
    return read / total


def choose_attributes(
    log_text: str, *, cells: int = MIN_CELLS, threshold: float | None = None, maximum: int = 2
) -> AttributeChoice:
    """Pick clustering attributes from a query log for a layout of ``cells`` cells per time bucket.

    Without a ``threshold`` the set with the smallest expected read share is chosen (module doc); with one, the
    attributes whose share reaches it, most used first.
    """
    counts, skipped = parse_query_log(log_text)
    if not counts:
        raise SqlError(
            "the query log holds no parsable statement", hint="give SELECT statements separated by ';'"
        )
    queries = list(counts)
    weights = [counts[query] for query in queries]
    matrix = []
    for query, weight in zip(queries, weights):
        used = filtered_attributes(query)
        matrix.append([weight if name in used else 0 for name in CLUSTERABLE])
    total = sum(weights)
    shares = {name: sum(row[i] for row in matrix) / total for i, name in enumerate(CLUSTERABLE)}
    if threshold is not None:
        ranked = sorted(
            (name for name in CLUSTERABLE if shares[name] >= threshold), key=lambda name: -shares[name]
        )
        chosen = tuple(ranked[:maximum])
    else:
        used = sorted((name for name in CLUSTERABLE if shares[name] > 0), key=lambda name: -shares[name])
        options = [
            subset
            for size in range(min(maximum, len(used)) + 1)
            for subset in itertools.combinations(used, size)
        ]
        chosen = min(  # smallest expected read; then fewer attributes; then the most used (options' order)
            options,
            key=lambda subset: (
                round(read_share(matrix, weights, [CLUSTERABLE.index(name) for name in subset], cells), 12),
                len(subset),
            ),
        )
    return AttributeChoice(queries, weights, matrix, shares, chosen, threshold, skipped, cells, maximum)
