"""The work item every pass receives and returns: one statement being analysed."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from lineage_platform.model import ColumnEdge, Dataset, IssueKind, Operation, Predicate, SqlIssue
from lineage_platform.sql.session import Session, SessionEffect


@dataclass
class QueryUnit:
    """One query and the dataset it writes; a Hive multi-insert has one unit per INSERT."""

    target: Dataset
    query: exp.Query
    target_columns: tuple[str, ...] | None = None
    static_partitions: tuple[str, ...] = ()
    dynamic_partitions: tuple[str, ...] = ()
    scope: Scope | None = None
    conflict_keys: tuple[str, ...] = ()
    """Target columns of Postgres ``ON CONFLICT (k)``: what flows into them decides insert vs update."""
    columns_qualified: bool = True
    """Whether qualification placed the query's columns (False when only its tables could be qualified)."""

    def output_names(self) -> tuple[str, ...]:
        """Names of the written columns: explicit target columns, else the query's output names."""
        if self.target_columns is not None:
            return self.target_columns
        names = tuple(n.lower() for n in self.query.named_selects)
        if self.dynamic_partitions and len(names) >= len(self.dynamic_partitions):
            names = names[: len(names) - len(self.dynamic_partitions)] + self.dynamic_partitions
        return names


@dataclass
class StatementAnalysis:
    """A statement on its way through the passes: parsed tree in, lineage records out."""

    index: int
    sql: str
    expression: exp.Expr | None
    session: Session
    operation: Operation = "OTHER"
    units: list[QueryUnit] = field(default_factory=list)
    inputs: list[Dataset] = field(default_factory=list)
    outputs: list[Dataset] = field(default_factory=list)
    edges: list[ColumnEdge] = field(default_factory=list)
    predicates: list[Predicate] = field(default_factory=list)
    issues: list[SqlIssue] = field(default_factory=list)
    effect: SessionEffect = field(default_factory=SessionEffect)

    @property
    def dialect(self) -> str:
        """The session's SQL dialect."""
        return self.session.dialect

    def issue(self, message: str, kind: IssueKind = "unresolved", node: exp.Expr | None = None) -> None:
        """Record a problem, positioned at ``node`` when it carries a position (lines relative to the statement)."""
        line, column = _position(node)
        self.issues.append(SqlIssue(self.index, line, column, message, kind))


def _position(node: exp.Expr | None) -> tuple[int, int]:
    """1-based (line, column) of the first positioned token under ``node``, else (1, 1)."""
    if node is not None:
        for child in node.walk():
            if child.meta.get("line"):
                return child.meta["line"], child.meta.get("col", 1)
    return 1, 1
