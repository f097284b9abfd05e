"""Sample job logs of a layered warehouse, in the three formats the readers understand.

``generate_sample(out_dir, tables, statements, seed)`` writes, deterministically for a seed:

* ``catalog.json`` — the schemas, ``{db: {table: {column: type}}}`` (sqlglot's nested form);
* ``query-log/queries-<date>.jsonl`` — every query of the day, one JSON record per query (the audit log);
* ``spark-events/<app id>`` — Spark event logs of the queries that ran on Spark;
* ``hive-log/hiveserver2-<host>-<date>.log`` — HiveServer2 operation logs of the queries that ran on Hive.

The scheduled jobs of :mod:`sample_warehouse` run once a day, upstream layers first, for as many days
as it takes to reach ``statements`` query records. Between them sit ad-hoc and housekeeping queries
(SET, USE, SHOW, DESCRIBE, EXPLAIN, and plain SELECTs: count checks and peeks), some runs fail, and each format gets
a few garbage or truncated lines. The formats are described in this package's README.md.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from lineage_platform.errors import IngestError
from lineage_platform.ingest.records import FAILED, SUCCEEDED, iso_time
from lineage_platform.ingest.sample_warehouse import BIZDATE, Job, Warehouse, build_warehouse
from lineage_platform.ingest.statements import split_statements

FIRST_DAY = date(2026, 1, 1)
ANALYSTS = ("alice", "bob", "carol", "dave", "erin")
USERS = ("etl_ods", "dq_bot", *ANALYSTS)
CLUSTERS = ("prod-bj", "prod-sg")
HIVE_HOSTS = ("hs2-01.prod", "hs2-02.prod", "hs2-03.prod")
SPARK_HOSTS = ("gw-01.prod", "gw-02.prod", "gw-03.prod", "gw-04.prod")
LAYER_START_HOUR = {"ods": 0, "dwd": 2, "dws": 4, "ads": 6}
FAILURE_RATE = 0.04
NOISE_RATE = 0.1
GARBAGE_RATE = 0.005
ARCHIVE_EVERY_DAYS = 7
ADHOC_JOB = "adhoc"
SPARK_VERSION = "3.5.1"
SQL_EXECUTION_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
SQL_EXECUTION_END = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd"
FAILURE_MESSAGES = (
    "SemanticException [Error 10001]: Table not found",
    "org.apache.hadoop.yarn.exceptions.YarnException: Failed to submit application: queue is full",
    "java.lang.OutOfMemoryError: GC overhead limit exceeded",
    "AnalysisException: [PATH_NOT_FOUND] Path does not exist",
)


@dataclass(frozen=True)
class JobProfile:
    """Who runs a scheduled job, where, and how its SQL spells the business date."""

    user: str
    engine: str
    host: str
    cluster: str
    queue: str
    uses_variable: bool
    comment: bool


@dataclass(frozen=True)
class LoggedQuery:
    """One query record before it is written out: its statements (rendered) and provenance."""

    script: str
    statements: tuple[str, ...]
    status: str
    user: str
    start: datetime
    end: datetime
    host: str
    cluster: str
    engine: str
    job: str
    queue: str
    error: str | None = None

    def to_json(self) -> dict[str, str | None]:
        """The JSONL query-log layout."""
        return {
            "sql": self.script,
            "user": self.user,
            "start_time": iso_time(self.start),
            "end_time": iso_time(self.end),
            "host": self.host,
            "cluster": self.cluster,
            "engine": self.engine,
            "job": self.job,
            "queue": self.queue,
            "status": self.status,
        }


@dataclass
class SampleSummary:
    """What a generation wrote."""

    out_dir: Path
    tables: int
    jobs: int
    days: int
    records: int
    failed: int
    noise: int
    garbage: Counter[str] = field(default_factory=Counter)
    files: Counter[str] = field(default_factory=Counter)


def _placement(user: str, engine: str, rng: random.Random) -> tuple[str, str]:
    """(host, cluster) of a query: any HiveServer2 for Hive; each user's own Spark gateway and cluster for Spark."""
    if engine == "hive":
        return rng.choice(HIVE_HOSTS), rng.choice(CLUSTERS)
    number = USERS.index(user)
    return SPARK_HOSTS[number % len(SPARK_HOSTS)], CLUSTERS[number % len(CLUSTERS)]


def _profile(job: Job, rng: random.Random) -> JobProfile:
    engine = "hive" if rng.random() < 0.55 else "spark"
    user = "etl_ods" if job.layer == "ods" else rng.choice(ANALYSTS)
    host, cluster = _placement(user, engine, rng)
    return JobProfile(
        user=user,
        engine=engine,
        host=host,
        cluster=cluster,
        queue=f"root.etl.{job.layer}",
        uses_variable=rng.random() < 0.4,
        comment=rng.random() < 0.3,
    )


def _archive_job(job: Job) -> Job:
    """A weekly rotation of an ADS table's snapshot: DROP, ALTER ... RENAME, CREATE TABLE AS SELECT."""
    source = job.outputs[0]
    last, prev = f"archive.{source.name}_last", f"archive.{source.name}_prev"
    sql = (
        f"DROP TABLE IF EXISTS {prev};\nALTER TABLE {last} RENAME TO {prev};\n"
        f"CREATE TABLE {last} AS SELECT * FROM {source.qualified_name} WHERE dt = '{BIZDATE}'"
    )
    return Job(f"archive_{source.name}", "ads", (), sql)


class _Scheduler:
    """Turns the warehouse's jobs into a deterministic stream of logged queries, day after day."""

    def __init__(self, warehouse: Warehouse, rng: random.Random) -> None:
        self.rng = rng
        self.jobs = warehouse.jobs
        self.profiles = {job.name: _profile(job, rng) for job in self.jobs}
        ads = [job for job in self.jobs if job.layer == "ads" and job.outputs[0].name.startswith("ads_")]
        self.archives = [_archive_job(job) for job in ads[:3]]
        for archive, job in zip(self.archives, ads):
            self.profiles[archive.name] = self.profiles[job.name]
        self.tables = sorted(warehouse.tables)

    def day(self, number: int) -> list[LoggedQuery]:
        """The queries of one day: every scheduled job once, with noise between them."""
        day = FIRST_DAY + timedelta(days=number)
        jobs = self.jobs + (self.archives if number % ARCHIVE_EVERY_DAYS == ARCHIVE_EVERY_DAYS - 1 else [])
        queries = []
        for job in jobs:
            queries.append(self._run(job, day))
            if self.rng.random() < NOISE_RATE:
                queries.append(self._noise(day))
        return queries

    def _start(self, layer: str, day: date) -> datetime:
        minutes = LAYER_START_HOUR[layer] * 60 + self.rng.randrange(120)
        base = datetime(day.year, day.month, day.day, tzinfo=UTC)
        return base + timedelta(
            minutes=minutes, seconds=self.rng.randrange(60), milliseconds=self.rng.randrange(1000)
        )

    def _run(self, job: Job, day: date) -> LoggedQuery:
        profile = self.profiles[job.name]
        resolved = job.template.replace(BIZDATE, day.isoformat())
        if profile.uses_variable:
            script = f"SET hivevar:bizdate={day.isoformat()};\n" + job.template.replace(BIZDATE, "${bizdate}")
            statements = (f"SET hivevar:bizdate={day.isoformat()}", *split_statements(resolved))
        else:
            script, statements = resolved, tuple(split_statements(resolved))
        if profile.comment:
            script = f"-- {job.name}: scheduled daily, owner {profile.user}\n{script}"
        start = self._start(job.layer, day)
        failed = self.rng.random() < FAILURE_RATE
        return LoggedQuery(
            script=script,
            statements=statements,
            status=FAILED if failed else SUCCEEDED,
            user=profile.user,
            start=start,
            end=start + timedelta(seconds=self.rng.randrange(20, 900), milliseconds=self.rng.randrange(1000)),
            host=profile.host,
            cluster=profile.cluster,
            engine=profile.engine,
            job=job.name,
            queue=profile.queue,
            error=self.rng.choice(FAILURE_MESSAGES) if failed else None,
        )

    def _noise(self, day: date) -> LoggedQuery:
        table = self.rng.choice(self.tables)
        database = table.split(".", 1)[0]
        choices: tuple[str, ...] = (
            f"SHOW PARTITIONS {table}",
            f"SELECT count(1) FROM {table} WHERE dt = '{day.isoformat()}'",
            f"DESCRIBE FORMATTED {table}",
            f"USE {database};\nSHOW TABLES",
            f"SET mapreduce.job.queuename=root.adhoc;\nSELECT * FROM {table} WHERE dt = '{day.isoformat()}' LIMIT 100",
            f"EXPLAIN SELECT * FROM {table} WHERE dt = '{day.isoformat()}'",
        )
        script = self.rng.choice(choices)
        engine = self.rng.choice(("hive", "spark"))
        user = self.rng.choice(("dq_bot", *ANALYSTS))
        host, cluster = _placement(user, engine, self.rng)
        start = self._start("ads", day)
        return LoggedQuery(
            script=script,
            statements=tuple(split_statements(script)),
            status=SUCCEEDED,
            user=user,
            start=start,
            end=start + timedelta(seconds=self.rng.randrange(1, 30)),
            host=host,
            cluster=cluster,
            engine=engine,
            job=ADHOC_JOB,
            queue="root.adhoc",
        )


def _garbage(rng: random.Random, line: str, summary: SampleSummary, fmt: str) -> str | None:
    """Sometimes a damaged version of ``line`` to write instead of it: junk text or the line cut short."""
    if rng.random() >= GARBAGE_RATE:
        return None
    summary.garbage[fmt] += 1
    if rng.random() < 0.5:
        return "\x00\x00#### log rotated, truncated write ####"
    return line[: rng.randrange(1, max(2, len(line) - 1))]


def _write_query_log(
    queries: list[LoggedQuery], path: Path, rng: random.Random, summary: SampleSummary
) -> None:
    with path.open("w", encoding="utf-8") as out:
        for query in queries:
            line = json.dumps(query.to_json(), ensure_ascii=False)
            junk = _garbage(rng, line, summary, "jsonl")
            out.write((line if junk is None else junk) + "\n")
    summary.files["jsonl"] += 1


def _hive_timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S,") + f"{moment.microsecond // 1000:03d}"


def _write_hive_logs(
    queries: list[LoggedQuery], out_dir: Path, day: date, rng: random.Random, summary: SampleSummary
) -> None:
    by_host: dict[str, list[LoggedQuery]] = {}
    for query in queries:
        if query.engine == "hive":
            by_host.setdefault(query.host, []).append(query)
    for host, host_queries in sorted(by_host.items()):
        lines = [
            f"{_hive_timestamp(datetime(day.year, day.month, day.day, tzinfo=UTC))} INFO  [main] server.HiveServer2: Starting HiveServer2"
        ]
        for number, query in enumerate(sorted(host_queries, key=lambda q: q.start)):
            thread = f"HiveServer2-Handler-Pool: Thread-{40 + number % 16}"
            for position, statement in enumerate(query.statements):
                query_id = f"hive_{query.start:%Y%m%d%H%M%S}_{rng.getrandbits(48):012x}"
                header = (
                    f"{_hive_timestamp(query.start)} INFO  [{thread}] ql.Driver: Executing command(queryId={query_id}): "
                    f"user={query.user} host={query.host} cluster={query.cluster} job={query.job} queue={query.queue}"
                )
                lines.append(header)
                sql_lines = statement.splitlines()
                if rng.random() < GARBAGE_RATE:  # the log ends mid-statement: no completion line follows
                    summary.garbage["hive-log"] += 1
                    lines.extend(sql_lines[: max(1, len(sql_lines) // 2)])
                    continue
                lines.extend(sql_lines)
                lines.append(
                    f"{_hive_timestamp(query.start)} INFO  [{thread}] session.SessionState: Resetting thread name to {thread}"
                )
                failed = query.status == FAILED and position == len(query.statements) - 1
                if failed:
                    lines.append(
                        f"{_hive_timestamp(query.end)} ERROR [{thread}] ql.Driver: FAILED: command(queryId={query_id}): {query.error}"
                    )
                else:
                    took = (query.end - query.start).total_seconds()
                    lines.append(
                        f"{_hive_timestamp(query.end)} INFO  [{thread}] ql.Driver: Completed executing command(queryId={query_id}); "
                        f"Time taken: {took:.3f} seconds"
                    )
        (out_dir / f"hiveserver2-{host}-{day.isoformat()}.log").write_text(
            "\n".join(lines) + "\n", encoding="utf-8"
        )
        summary.files["hive-log"] += 1


def _millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _spark_application(queries: list[LoggedQuery], app_id: str, app_name: str) -> list[dict]:
    """The events of one Spark application running ``queries`` one after the other."""
    first, last = queries[0], queries[-1]
    events: list[dict] = [
        {"Event": "SparkListenerLogStart", "Spark Version": SPARK_VERSION},
        {
            "Event": "SparkListenerApplicationStart",
            "App Name": app_name,
            "App ID": app_id,
            "Timestamp": _millis(first.start),
            "User": first.user,
        },
        {
            "Event": "SparkListenerEnvironmentUpdate",
            "JVM Information": {"Java Version": "17.0.15"},
            "Spark Properties": {
                "spark.master": "yarn",
                "spark.app.name": app_name,
                "spark.driver.host": first.host,
                "spark.yarn.queue": first.queue,
            },
            "Hadoop Properties": {"yarn.resourcemanager.cluster-id": first.cluster},
            "System Properties": {},
            "Classpath Entries": {},
        },
    ]
    execution_id = job_id = 0
    for query in queries:
        for position, statement in enumerate(query.statements):
            events.append(
                {
                    "Event": SQL_EXECUTION_START,
                    "executionId": execution_id,
                    "rootExecutionId": execution_id,
                    "description": statement,
                    "details": "org.apache.spark.sql.SparkSession.sql",
                    "physicalPlanDescription": "== Physical Plan ==\n...",
                    "sparkPlanInfo": {
                        "nodeName": "Execute",
                        "simpleString": "Execute",
                        "children": [],
                        "metadata": {},
                        "metrics": [],
                    },
                    "time": _millis(query.start),
                    "modifiedConfigs": {},
                    "jobTags": [],
                }
            )
            failed = query.status == FAILED and position == len(query.statements) - 1
            events.append(
                {
                    "Event": "SparkListenerJobStart",
                    "Job ID": job_id,
                    "Submission Time": _millis(query.start),
                    "Stage Infos": [],
                    "Stage IDs": [],
                    "Properties": {
                        "spark.sql.execution.id": str(execution_id),
                        "spark.jobGroup.id": query.job,
                    },
                }
            )
            result = (
                {"Result": "JobFailed", "Exception": {"Message": query.error}}
                if failed
                else {"Result": "JobSucceeded"}
            )
            events.append(
                {
                    "Event": "SparkListenerJobEnd",
                    "Job ID": job_id,
                    "Completion Time": _millis(query.end),
                    "Job Result": result,
                }
            )
            end: dict = {"Event": SQL_EXECUTION_END, "executionId": execution_id, "time": _millis(query.end)}
            if failed:
                end["errorMessage"] = query.error
            events.append(end)
            execution_id += 1
            job_id += 1
    events.append({"Event": "SparkListenerApplicationEnd", "Timestamp": _millis(last.end)})
    return events


def _write_spark_logs(
    queries: list[LoggedQuery], out_dir: Path, day: date, rng: random.Random, summary: SampleSummary
) -> None:
    """One application per day and (user, host, cluster, queue): a user's scheduled Spark SQL batch."""
    apps: dict[tuple[str, str, str, str], list[LoggedQuery]] = {}
    for query in queries:
        if query.engine == "spark":
            apps.setdefault((query.user, query.host, query.cluster, query.queue), []).append(query)
    day_millis = _millis(datetime(day.year, day.month, day.day, tzinfo=UTC))
    for number, (key, app_queries) in enumerate(sorted(apps.items())):
        app_id = f"application_{day_millis}_{number + 1:04d}"
        app_name = f"{key[0]}_{key[3].rsplit('.', 1)[-1]}_daily"
        lines = []
        for event in _spark_application(sorted(app_queries, key=lambda q: q.start), app_id, app_name):
            line = json.dumps(event, ensure_ascii=False)
            junk = _garbage(rng, line, summary, "spark-events")
            lines.append(line if junk is None else junk)
        (out_dir / app_id).write_text("\n".join(lines) + "\n", encoding="utf-8")
        summary.files["spark-events"] += 1


FORMAT_DIRS: dict[str, str] = {"jsonl": "query-log", "spark-events": "spark-events", "hive-log": "hive-log"}


def generate_sample(
    out_dir: Path | str,
    tables: int = 240,
    statements: int = 3000,
    seed: int = 42,
    progress: Callable[[int], None] | None = None,
) -> SampleSummary:
    """Write a sample warehouse's catalog and ``statements`` query records in the three log formats.

    Args:
        out_dir: a new or empty directory to write into.
        tables: about how many tables the warehouse has.
        statements: how many query records the JSONL audit log holds (scheduled runs plus noise).
        seed: same seed, same arguments -> byte-identical output.
        progress: called with the number of records written so far, once per day.
    """
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise IngestError(f"{out} is not empty", hint="give a new or empty directory for the sample logs")
    dirs = {fmt: out / name for fmt, name in FORMAT_DIRS.items()}
    for directory in dirs.values():
        directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    warehouse = build_warehouse(tables, seed)
    (out / "catalog.json").write_text(json.dumps(warehouse.catalog(), indent=1), encoding="utf-8")
    scheduler = _Scheduler(warehouse, rng)
    summary = SampleSummary(out, len(warehouse.tables), len(warehouse.jobs), 0, 0, 0, 0)
    while summary.records < statements:
        day = FIRST_DAY + timedelta(days=summary.days)
        queries = scheduler.day(summary.days)[: statements - summary.records]
        _write_query_log(queries, dirs["jsonl"] / f"queries-{day.isoformat()}.jsonl", rng, summary)
        _write_hive_logs(queries, dirs["hive-log"], day, rng, summary)
        _write_spark_logs(queries, dirs["spark-events"], day, rng, summary)
        summary.records += len(queries)
        summary.failed += sum(query.status == FAILED for query in queries)
        summary.noise += sum(query.job == ADHOC_JOB for query in queries)
        summary.days += 1
        if progress:
            progress(summary.records)
    return summary
