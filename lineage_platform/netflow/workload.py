"""Choosing the clustering attributes from the workload.

A query log is parsed into statements; identical statements (after normalising whitespace and case) are counted,
which gives each distinct query its frequency. The attribute-frequency matrix has one row per distinct query and one
column per clusterable attribute; a cell is the query's frequency when its WHERE clause filters on the attribute.
An attribute's share is its column sum over the total frequency; attributes whose share reaches the threshold are
chosen, most used first, up to a maximum (each one multiplies the partitions per time bucket).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from lineage_platform.errors import SqlError
from lineage_platform.netflow.records import CLUSTERABLE


@dataclass(frozen=True)
class AttributeChoice:
    """The matrix, each attribute's share of the workload, the chosen attributes, and why."""

    queries: list[str]
    weights: list[int]
    matrix: list[list[int]]  # queries x CLUSTERABLE, cell = weight if the query filters on the attribute
    shares: dict[str, float]
    chosen: tuple[str, ...]
    threshold: float
    skipped: int  # statements that could not be parsed

    def explain(self) -> str:
        """A few lines a person can check: every attribute's share and the verdict."""
        total = sum(self.weights)
        lines = [
            f"{total} queries ({len(self.queries)} distinct, {self.skipped} unparsable) — threshold {self.threshold:.0%}"
        ]
        for name in sorted(self.shares, key=lambda item: -self.shares[item]):
            if name in self.chosen:
                verdict = "chosen"
            elif self.shares[name] >= self.threshold:
                verdict = f"not chosen: only the {len(self.chosen)} most used are kept"
            else:
                verdict = "not chosen: below the threshold"
            lines.append(f"  {name:<9} filtered by {self.shares[name]:6.1%} of queries -> {verdict}")
        return "\n".join(lines)


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


def choose_attributes(log_text: str, *, threshold: float = 0.25, maximum: int = 2) -> AttributeChoice:
    """Pick clustering attributes from a query log."""
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
    ranked = sorted(
        (name for name in CLUSTERABLE if shares[name] >= threshold), key=lambda name: -shares[name]
    )
    return AttributeChoice(queries, weights, matrix, shares, tuple(ranked[:maximum]), threshold, skipped)
