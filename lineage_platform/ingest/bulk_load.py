"""The Spark bulk load: job logs -> distinct lineage statements -> parsed lineage -> graph.

Stages (each Spark step runs in the executors; only counts, bad records and, for an embedded graph, the
parsed batches come back to the driver):

1. read: ``wholeTextFiles`` hands each log file to one task, whose reader (``readers/``) yields query
   records or bad records; failed queries are counted and dropped; each succeeded query is split into
   statements and those that cannot read or write data (SET, USE, SHOW, GRANT ...) are counted by kind and
   dropped (``statements.prepare_query``).
2. de-duplicate: statements are keyed by their normalised text (see ``statements.py``); every run of a
   statement keeps its own provenance (a ``RunInfo``), joined back to the one distinct statement.
3. batch: the distinct statements are spread over ``ceil(distinct / checkpoint_every)`` numbered batches
   by a hash of their key (the same batches in every run over the same input); batches already marked
   done in the state folder (``state.py``) are left out.
4. parse: ``extract_lineage`` runs in the executors, a batch per task, each statement within its parse
   budget (``budget.py``: a size and a time limit); failures are kept with their reason; statements the
   parser finds reading and writing nothing (``ALTER TABLE ... ADD PARTITION``, ``MSCK REPAIR``,
   ``CREATE DATABASE`` ...) are counted by kind, like those dropped before parsing.
5. write: with an embedded graph (one process may open it) the driver pulls the parsed batches one
   partition at a time (``toLocalIterator`` with prefetch, one batch per partition), so the executors
   parse the next batch while the driver writes this one; with a ``ws://`` graph every executor
   connects and writes the batches it parsed. After a batch is written its marker is renamed into
   place, so a killed run resumes where it stopped, and the writer's keyed upserts make re-writing
   anything harmless.
6. count: the vertices, edges, processes and runs the load added are counted in the graph, against the
   counts the load's first run found there (kept in the state folder), so a resumed run reports what
   the killed run wrote too. Other writers to the same graph during the load are counted with it.

Bad records and unparseable statements end in the state folder's side file ``rejected.jsonl``.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lineage_platform.config import load_settings
from lineage_platform.graph.vocabulary import VertexLabel
from lineage_platform.ingest.budget import ParseBudget
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.readers import AUTO, read_text, reader_for
from lineage_platform.ingest.records import FAILED, BadRecord
from lineage_platform.ingest.spark import session
from lineage_platform.ingest.state import LoadState, fingerprint, list_inputs
from lineage_platform.ingest.statements import Statement, prepare_query, statement_kind
from lineage_platform.model import RESULT_DATASET, RunInfo, StatementLineage

if TYPE_CHECKING:
    from lineage_platform.graph.writer import LineageWriter
    from lineage_platform.sql.function_rules import FunctionRule

DEFAULT_CHECKPOINT_EVERY = 200
DEFAULT_BUDGET = ParseBudget()
_TALLY = "tally"  # key of the per-partition counts; statement keys are hex digests, so never equal


class LoadProgress(Protocol):
    """What the load reports while it runs (the CLI shows it with rich)."""

    def phase(self, name: str, total: int | None = None) -> None:
        """A new phase starts; ``total`` is its number of steps when known."""

    def advance(self, steps: int = 1) -> None:
        """Steps of the current phase are done."""


@dataclass(frozen=True)
class LoadOptions:
    """What to load, from where, into which graph."""

    paths: tuple[str, ...]
    fmt: str = AUTO
    master: str = "local[*]"
    graph_url: str | None = None
    schema: Mapping[str, Any] | None = None
    default_db: str | None = None
    # lineage rules of user UDFs (shipped to the executors with the parse tasks)
    function_rules: Mapping[str, FunctionRule] | None = None
    state_dir: Path | None = None
    batch_size: int = 500
    checkpoint_every: int = DEFAULT_CHECKPOINT_EVERY
    budget: ParseBudget = DEFAULT_BUDGET


@dataclass
class LoadSummary:
    """Counts of one load. Parse and write counts cover every batch of the input, also those a resumed run
    found already done; vertices, edges, processes and runs are what the graph gained since the load's
    first run started."""

    files: int = 0
    records: int = 0
    bad_records: int = 0
    failed_queries: int = 0
    statements: int = 0
    without_lineage: Counter[str] = field(default_factory=Counter)  # statement kind -> statements
    distinct: int = 0
    parsed: int = 0
    parse_failed: int = 0
    batches: int = 0
    batches_resumed: int = 0
    vertices: int = 0
    edges: int = 0
    processes: int = 0
    runs: int = 0
    parse_seconds: float = 0.0
    write_seconds: float = 0.0
    seconds: float = 0.0
    state_dir: str = ""
    rejected_file: str = ""

    def rows(self) -> list[tuple[str, str]]:
        """(name, value) pairs for display; statements without lineage as a total and one row per kind."""
        rows = []
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, Counter):
                rows.append(("statements without lineage", str(value.total())))
                rows += [(f"  {kind}", str(count)) for kind, count in sorted(value.items())]
            else:
                rows.append(
                    (item.name.replace("_", " "), f"{value:.2f}" if isinstance(value, float) else str(value))
                )
        return rows


@dataclass(frozen=True)
class ParsedStatement:
    """A distinct statement after parsing: its lineage (empty on failure, or when it reads and writes nothing:
    then ``without_lineage`` is its kind) and every run of it."""

    statement: Statement
    runs: tuple[RunInfo, ...]
    lineage: tuple[StatementLineage, ...]
    error: str | None = None  # why it was rejected, as a predicate of "statement": "does not parse: ..."
    without_lineage: str | None = None


@dataclass(frozen=True)
class ParsedBatch:
    """The statements of one numbered batch, parsed, and how long parsing took."""

    number: int
    statements: tuple[ParsedStatement, ...]
    parse_seconds: float


# ---- executor-side functions (module level, so Spark can pickle them) --------------------------------


def _local_path(uri: str) -> str:
    return uri[len("file:") :] if uri.startswith("file:") else uri


def read_partition(
    files: Iterable[tuple[str, str]], fmt: str, default_db: str | None
) -> Iterator[tuple[str, Any]]:
    """Runs of lineage statements in one partition's logs, as ``(key, (statement, (run,)))``, then one
    ``(_TALLY, (counts, kinds without lineage, bad records))`` item; the counts are named like the LoadSummary
    fields they add to."""
    counts: Counter[str] = Counter()
    without_lineage: Counter[str] = Counter()
    bad: list[dict[str, Any]] = []
    for uri, text in files:
        for record in read_text(text, _local_path(uri), fmt):
            if isinstance(record, BadRecord):
                bad.append(record.to_dict())
                continue
            counts["records"] += 1
            if record.status == FAILED:
                counts["failed_queries"] += 1
                continue
            prepared = prepare_query(record.sql, record.engine, default_db, record.start_time)
            without_lineage.update(prepared.without_lineage)
            counts["statements"] += len(prepared.statements)
            run = record.run_info()
            for statement in prepared.statements:
                yield statement.key, (statement, (run,))
    counts["bad_records"] = len(bad)
    yield _TALLY, (counts, without_lineage, bad)


def batch_of(key: str, batches: int) -> int:
    """The batch a statement key belongs to: a stable hash partition, the same in every run over the same input."""
    return int(key[:12], 16) % batches


_Runs = tuple[Statement, tuple[RunInfo, ...]]


def _merge_runs(left: _Runs, right: _Runs) -> _Runs:
    return left[0], left[1] + right[1]


def parse_statement(
    statement: Statement,
    runs: Iterable[RunInfo],
    catalog: CatalogIndex,
    function_rules: Mapping[str, FunctionRule] | None = None,
    *,
    budget: ParseBudget = DEFAULT_BUDGET,
) -> ParsedStatement:
    """The lineage of one distinct statement within ``budget``; any failure is kept as the reason, never raised.

    A statement that does not parse is a failure even when table names were recovered from its tokens (a guess
    is no lineage to record as fact); one that parses but reads and writes nothing (DDL such as ADD PARTITION,
    a SELECT of constants) is counted by its kind.
    """
    from lineage_platform.sql import extract_lineage

    ordered = tuple(sorted(runs, key=lambda run: (run.start_time or "", run.source or "")))
    try:
        budget.check_size(statement.sql)
        with budget.timer():
            lineage = extract_lineage(
                statement.sql,
                schema=catalog.subset(statement.sql),
                dialect=statement.dialect,
                default_db=statement.default_db,
                function_rules=function_rules,
            )
    except Exception as exc:  # a bulk load keeps going: any parser failure becomes a rejected statement
        return ParsedStatement(statement, ordered, (), f"could not be analysed: {type(exc).__name__}: {exc}")
    parse_issues = "; ".join(i.message for item in lineage for i in item.errors if i.kind == "parse")
    if parse_issues:
        return ParsedStatement(statement, ordered, (), f"does not parse: {parse_issues}")
    # a SELECT of constants (``select 1``, health checks) only writes its temporary result: nothing to record
    useful = tuple(
        item for item in lineage if item.inputs or any(d.name != RESULT_DATASET for d in item.outputs)
    )
    if useful:
        return ParsedStatement(statement, ordered, useful)
    issues = "; ".join(issue.message for item in lineage for issue in item.errors)
    if issues:
        return ParsedStatement(statement, ordered, (), f"has no lineage: {issues}")
    return ParsedStatement(statement, ordered, (), without_lineage=statement_kind(statement.sql))


def parse_batch(
    number: int,
    items: Iterable[tuple[str, _Runs]],
    catalog: CatalogIndex,
    function_rules: Mapping[str, FunctionRule] | None = None,
    *,
    budget: ParseBudget = DEFAULT_BUDGET,
) -> ParsedBatch:
    """Parse the statements of one batch, in key order, each within ``budget``."""
    started = time.perf_counter()
    parsed = tuple(
        parse_statement(statement, runs, catalog, function_rules, budget=budget)
        for _, (statement, runs) in sorted(items, key=lambda i: i[0])
    )
    return ParsedBatch(number, parsed, time.perf_counter() - started)


def _rejected_row(item: ParsedStatement) -> dict[str, Any]:
    source, _, line = (item.runs[0].source or "").rpartition(":") if item.runs else ("", "", "0")
    return {
        "source": source,
        "line": int(line or 0),
        "reason": f"statement {item.error}",
        "raw": item.statement.sql,
    }


def write_batch(writer: LineageWriter, batch: ParsedBatch, state: LoadState) -> dict[str, Any]:
    """Write one parsed batch, then mark it done in the state folder; returns the marker's content."""
    pairs = [(lineage, run) for item in batch.statements for lineage in item.lineage for run in item.runs]
    written = writer.write_together(pairs)  # one transaction per batch: one durable commit
    failures = [_rejected_row(item) for item in batch.statements if item.error]
    without_lineage: Counter[str] = Counter()
    for item in batch.statements:
        if item.without_lineage:
            without_lineage[item.without_lineage] += len(item.runs)
    result = {
        "batch": batch.number,
        "statements": len(batch.statements),
        "parsed": len(batch.statements) - len(failures),
        "parse_failed": len(failures),
        "failures": failures,
        "without_lineage": dict(without_lineage),
        "vertices": written.vertices,
        "edges": written.edges,
        "processes": written.processes,
        "runs": written.runs,
        "parse_seconds": batch.parse_seconds,
        "write_seconds": written.seconds,
    }
    state.mark_done(batch.number, result)
    return result


def open_writer(graph_url: str, batch_size: int) -> LineageWriter:
    """A lineage writer on the graph at ``graph_url``."""
    from lineage_platform.graph import connect
    from lineage_platform.graph.writer import LineageWriter

    return LineageWriter(connect(graph_url), batch_size=batch_size)


def write_partition(
    batches: Iterable[ParsedBatch], graph_url: str, batch_size: int, state: LoadState
) -> None:
    """Executor side of a ``ws://`` load: connect and write this partition's batches."""
    writer = open_writer(graph_url, batch_size)
    for batch in batches:
        write_batch(writer, batch, state)


# ---- driver ------------------------------------------------------------------------------------------


class _Quiet:
    def phase(self, name: str, total: int | None = None) -> None:
        """No progress display."""

    def advance(self, steps: int = 1) -> None:
        """No progress display."""


_COUNTED = {"vertices": None, "processes": VertexLabel.PROCESS, "runs": VertexLabel.RUN}


def graph_counts(graph_url: str) -> dict[str, int]:
    """Vertices, edges, processes and runs in the graph at ``graph_url``."""
    from lineage_platform.graph import connect

    g = connect(graph_url)
    counts = {
        name: (g.V() if label is None else g.V().has_label(label)).count().next()
        for name, label in _COUNTED.items()
    }
    counts["edges"] = g.E().count().next()
    return counts


def _state_for(options: LoadOptions, files: list[Path], graph_url: str) -> LoadState:
    root = options.state_dir or load_settings().work_dir / "ingest"
    key = fingerprint(
        files,
        fmt=options.fmt,
        default_db=options.default_db,
        schema=options.schema,
        function_rules=options.function_rules,
        graph=graph_url,
        checkpoint_every=options.checkpoint_every,
        budget=options.budget,
    )
    return LoadState(root, key).create()


def bulk_load(options: LoadOptions, progress: LoadProgress | None = None) -> LoadSummary:
    """Load job logs into the lineage graph with Spark; see the module docstring for the stages."""
    started = time.perf_counter()
    progress = progress or _Quiet()
    if options.fmt != AUTO:
        reader_for(options.fmt)  # unknown formats fail here, before Spark starts
    files = list_inputs(options.paths)
    graph_url = options.graph_url or load_settings().graph_url
    state = _state_for(options, files, graph_url)
    from lineage_platform.graph import backend_facts

    driver_writer = (
        None if backend_facts(graph_url).shared else open_writer(graph_url, options.batch_size)
    )  # a shared server is written by the executors; a locked in-process store fails here
    baseline = state.baseline(lambda: graph_counts(graph_url))
    spark = session(options.master)
    context = spark.sparkContext

    progress.phase(f"reading {len(files)} log files")
    fmt, default_db = options.fmt, options.default_db
    paths = ",".join(str(path) for path in files)
    tagged = (
        context.wholeTextFiles(paths, minPartitions=context.defaultParallelism)
        .mapPartitions(lambda part: read_partition(part, fmt, default_db))
        .cache()
    )
    distinct = tagged.filter(lambda item: item[0] != _TALLY).reduceByKey(_merge_runs).cache()
    try:
        summary = LoadSummary(files=len(files), state_dir=str(state.dir))
        bad_records: list[dict[str, Any]] = []
        for counts, without_lineage, bad in tagged.filter(lambda item: item[0] == _TALLY).values().collect():
            for name, count in counts.items():
                setattr(summary, name, getattr(summary, name) + count)
            summary.without_lineage.update(without_lineage)
            bad_records.extend(bad)
        summary.distinct = distinct.count()
        summary.batches = batches = math.ceil(summary.distinct / options.checkpoint_every)
        done = state.done() & set(range(batches))
        summary.batches_resumed = len(done)
        todo = batches - len(done)
        catalog = context.broadcast(CatalogIndex(options.schema))
        rules = options.function_rules  # small: pickled with the parse closure into every task
        budget = options.budget
        # the driver pulls one partition per batch, so parsing the next overlaps writing this one
        partitions = max(1, todo if driver_writer else min(todo, 4 * context.defaultParallelism))
        parsed = (
            distinct.map(lambda item: (batch_of(item[0], batches), item))
            .filter(lambda pair: pair[0] not in done)
            .groupByKey(numPartitions=partitions)
            .map(lambda pair: parse_batch(pair[0], pair[1], catalog.value, rules, budget=budget))
        )
        progress.phase(f"parsing and writing {todo} batches", batches)
        progress.advance(len(done))
        if driver_writer is None:
            batch_size = options.batch_size
            parsed.foreachPartition(lambda part: write_partition(part, graph_url, batch_size, state))
        else:
            for batch in parsed.toLocalIterator(prefetchPartitions=True):
                write_batch(driver_writer, batch, state)
                progress.advance()
    finally:
        distinct.unpersist()
        tagged.unpersist()
    _finish(summary, state, bad_records)
    now = graph_counts(graph_url)
    for name in now:
        setattr(summary, name, max(0, now[name] - baseline.get(name, 0)))
    summary.seconds = time.perf_counter() - started
    return summary


_BATCH_TOTALS = ("parsed", "parse_failed", "parse_seconds", "write_seconds")


def _finish(summary: LoadSummary, state: LoadState, bad_records: list[dict[str, Any]]) -> None:
    rejected: list[dict[str, Any]] = list(bad_records)
    for result in state.results():
        for name in _BATCH_TOTALS:
            setattr(summary, name, getattr(summary, name) + result[name])
        summary.without_lineage.update(result.get("without_lineage", {}))
        rejected.extend(result["failures"])
    summary.rejected_file = str(state.write_rejected(rejected))
