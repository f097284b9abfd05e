"""Score a tool's per-statement lineage against the corpus's hand-written expectations.

A script's persistent lineage is built from the tool's statements in order: edges into a temporary object
(a name in the case's ``temps``) are kept aside and the edges that later read it are resolved through it
to base columns (strong∘strong stays strong; anything through a weak hop is weak), so tools are compared on
what reaches persistent datasets whether or not they resolve temporary views themselves. A temporary
object is recognised by its table name whatever database a tool puts it in, with or without T-SQL's ``#``
(corpus temps never share a name with a catalog table). A leading catalog (``hive.sales.orders``) is
dropped when it is one of the corpus's catalogs, so datasets compare as ``schema.table``. Self-edges (a
dataset feeding itself, e.g. a MERGE target's own key) are not scored.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.sql_corpus.corpus import Case

CATEGORIES = ("table", "strong", "weak", "column")
"""``column`` is strong and weak edges together, each tagged with its strength."""


@dataclass
class Lineage:
    """A script's persistent lineage in the scorer's normalized form."""

    table: set[tuple[str, str]] = field(default_factory=set)
    strong: set[tuple[str, str]] = field(default_factory=set)
    weak: set[tuple[str, str]] = field(default_factory=set)

    def category(self, name: str) -> set[tuple[str, ...]]:
        """The edge set of one scoring category."""
        if name == "column":
            return {("strong", *e) for e in self.strong} | {("weak", *e) for e in self.weak}
        return getattr(self, name)


def _dataset(column: str) -> str:
    """The dataset part of a ``db.table.column`` (or ``$result.column``) name."""
    return column.rsplit(".", 1)[0]


def _is_path(name: str) -> bool:
    """Whether a dataset name is a file path rather than a table."""
    return "/" in name


class _TempResolver:
    """Maps temporary-object names onto ``temp::name`` and resolves edges through them."""

    def __init__(self, temps: Iterable[str], catalogs: frozenset[str] = frozenset()) -> None:
        self.temps = {name.lstrip("#") for name in temps}
        self.catalogs = catalogs
        self.strong_of: dict[str, set[str]] = defaultdict(set)
        self.weak_of: dict[str, set[str]] = defaultdict(set)
        self.inputs_of: dict[str, set[str]] = defaultdict(set)

    def dataset(self, name: str) -> str:
        """``temp::t`` for a temporary object however a tool qualifies it, else the name without catalog."""
        if _is_path(name):
            return name
        parts = name.split(".")
        if len(parts) >= 3 and parts[0] in self.catalogs:
            name = ".".join(parts[1:])
        table = name.rpartition(".")[2].lstrip("#")
        return f"temp::{table}" if table in self.temps else name

    def column(self, name: str) -> str:
        """A column name with its dataset normalized by :meth:`dataset`."""
        if "." not in name:
            return name
        dataset, column = name.rsplit(".", 1)
        return f"{self.dataset(dataset)}.{column}"

    def sources(self, column: str) -> tuple[set[str], set[str]]:
        """(strong, weak) base columns behind a column; a base column is its own strong source."""
        dataset = _dataset(column)
        if not dataset.startswith("temp::"):
            return {column}, set()
        return set(self.strong_of[column]), set(self.weak_of[dataset])

    def add_statement(self, record: Mapping[str, Any], into: Lineage) -> None:
        """Resolve one statement's edges and add them to ``into`` or keep them as a temp's definition."""
        inputs = {self.dataset(n) for n in record.get("inputs", ())}
        outputs = {self.dataset(n) for n in record.get("outputs", ())}
        base_inputs = set().union(*(self.inputs_of[i] if i.startswith("temp::") else {i} for i in inputs))
        for output in outputs:
            if output.startswith("temp::"):
                self.inputs_of[output] |= base_inputs
                continue
            for source in base_inputs or ({""} if not inputs else set()):
                if source != output:
                    into.table.add((source, output))
        for source, target in record.get("strong", ()):
            strong, weak = self.sources(self.column(source))
            target = self.column(target)
            self._add(strong, target, "strong", into)
            self._add(weak, _dataset(target), "weak", into)
        for source, target in record.get("weak", ()):
            strong, weak = self.sources(self.column(source))
            self._add(strong | weak, self.dataset(target), "weak", into)

    def _add(self, sources: set[str], target: str, strength: str, into: Lineage) -> None:
        target_dataset = target if strength == "weak" else _dataset(target)
        for source in sources:
            if _dataset(source) == target_dataset:
                continue
            if target_dataset.startswith("temp::"):
                (self.strong_of[target] if strength == "strong" else self.weak_of[target]).add(source)
            else:
                (into.strong if strength == "strong" else into.weak).add((source, target))


def resolve(
    case: Case, statements: Iterable[Mapping[str, Any]], catalogs: frozenset[str] = frozenset()
) -> Lineage:
    """The persistent lineage of a tool's per-statement records for one case (``catalogs``: names to drop)."""
    resolver = _TempResolver(case.temps, catalogs)
    lineage = Lineage()
    for record in statements:
        resolver.add_statement(record, lineage)
    return lineage


def expected_lineage(case: Case) -> Lineage:
    """The hand-written expectation in the same form as :func:`resolve`'s result."""
    exp = case.expected
    return Lineage(
        table={p for p in exp.table_edges if p[0] != p[1]}, strong=set(exp.strong), weak=set(exp.weak)
    )


@dataclass
class Tally:
    """True positives, false positives and false negatives of one category."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, expected: set, found: set) -> None:
        """Count one case's edges."""
        self.tp += len(expected & found)
        self.fp += len(found - expected)
        self.fn += len(expected - found)

    @property
    def precision(self) -> float:
        """TP / (TP + FP); 1.0 when nothing was found and nothing expected."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else float(self.fn == 0)

    @property
    def recall(self) -> float:
        """TP / (TP + FN); 1.0 when nothing was expected."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class CaseScore:
    """One case's expected and found lineage."""

    case: Case
    expected: Lineage
    found: Lineage
    error: str | None = None

    def misses(self, category: str) -> tuple[set, set]:
        """(missing, extra) edges of one category."""
        expected, found = self.expected.category(category), self.found.category(category)
        return expected - found, found - expected


def score_case(
    case: Case, result: Mapping[str, Any] | None, catalogs: frozenset[str] = frozenset()
) -> CaseScore:
    """Score one case from an adapter's result (``None`` when the tool produced nothing for it)."""
    result = result or {"statements": [], "error": "no result"}
    found = resolve(case, result["statements"], catalogs)
    return CaseScore(case, expected_lineage(case), found, result.get("error"))


def tally(scores: Iterable[CaseScore]) -> dict[str, Tally]:
    """Micro-averaged counts per category over the given case scores."""
    totals = {category: Tally() for category in CATEGORIES}
    for score in scores:
        for category, counts in totals.items():
            counts.add(score.expected.category(category), score.found.category(category))
    return totals


def by_construct(scores: Iterable[CaseScore]) -> dict[str, tuple[int, dict[str, Tally]]]:
    """Per construct tag: the number of cases and their micro-averaged counts."""
    grouped: dict[str, list[CaseScore]] = defaultdict(list)
    for score in scores:
        for construct in score.case.constructs:
            grouped[construct].append(score)
    return {construct: (len(group), tally(group)) for construct, group in sorted(grouped.items())}


def by_dialect(scores: Iterable[CaseScore]) -> dict[str, tuple[int, dict[str, Tally]]]:
    """Per case dialect: the number of cases and their micro-averaged counts."""
    grouped: dict[str, list[CaseScore]] = defaultdict(list)
    for score in scores:
        grouped[score.case.dialect].append(score)
    return {dialect: (len(group), tally(group)) for dialect, group in sorted(grouped.items())}
