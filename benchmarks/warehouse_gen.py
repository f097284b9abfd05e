"""A deterministic warehouse of the issue-21 shape: layered tables, scheduled INSERT … SELECT jobs, daily runs.

At scale 1 (the issue's mid-size company): 50,000 tables of 30 columns (1.5M columns), 100,000 jobs whose
statements give ~5M column edges, each job run once a day for 365 days (36.5M runs). ``scale`` multiplies the
tables, the jobs and the days (1/100: 500 tables, 1,000 jobs, 4 days).

Tables sit on ``LEVELS`` levels: level 0 is ODS (loaded from outside, read only), levels 1-8 DWD, 9-16 DWS and
17-23 ADS. A job writes one table of level L (one partition per day) from a table of level L-1 joined to one of
any lower level, so table lineage is ``LEVELS - 1`` hops deep and a 20-hop trace exists. Each target column is
a source column or an expression of one or two source columns; the join key and the partition filter give weak
(condition) edges. Same seed and sizes, same bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

FULL_TABLES = 50_000
FULL_DAYS = 365
COLUMNS = 30  # per table: id, c1 … c29 (and the partition column dt)
JOBS_PER_TABLE = 2
ODS_SHARE = 0.2
LEVELS = 24
FIRST_DAY = date(2026, 1, 1)
LAYERS = ((0, "ods"), (1, "dwd"), (9, "dws"), (17, "ads"))  # (first level, database)
EXPRESSIONS = (
    "{a}",
    "{a}",
    "coalesce({a}, 0)",
    "{a} + {b}",
    "cast({a} AS string)",
    "case when {a} > 0 then {b} else {a} end",
    "upper({a})",
)


@dataclass(frozen=True)
class Job:
    """One scheduled statement: ``sql`` with ``{day}`` where the run's business date goes."""

    name: str
    level: int
    target: str
    sql: str


@dataclass(frozen=True)
class Warehouse:
    """Tables by level (qualified names), their catalog and the scheduled jobs."""

    levels: list[list[str]]
    jobs: list[Job]
    days: int

    @property
    def tables(self) -> list[str]:
        """Every table, upstream levels first."""
        return [table for level in self.levels for table in level]

    def catalog(self) -> dict[str, dict[str, dict[str, str]]]:
        """sqlglot's nested schema form: ``{db: {table: {column: type}}}``."""
        columns = {"id": "bigint", **{f"c{n}": "bigint" for n in range(1, COLUMNS)}, "dt": "string"}
        result: dict[str, dict[str, dict[str, str]]] = {}
        for table in self.tables:
            db, name = table.split(".")
            result.setdefault(db, {})[name] = columns
        return result


def _database(level: int) -> str:
    return [db for first, db in LAYERS if first <= level][-1]


def _job_sql(rng: random.Random, target: str, near: str, far: str, feed: int) -> str:
    """INSERT OVERWRITE of one partition of ``target`` from ``near`` joined to ``far``."""
    items = ["a.id"]
    for n in range(1, COLUMNS):
        a = f"{rng.choice('ab')}.c{rng.randrange(1, COLUMNS)}"
        b = f"{rng.choice('ab')}.c{rng.randrange(1, COLUMNS)}"
        items.append(f"{rng.choice(EXPRESSIONS).format(a=a, b=b)} AS c{n}")
    return (
        f"INSERT OVERWRITE TABLE {target} PARTITION (dt='{{day}}')\n"
        f"SELECT {', '.join(items)}\n"
        f"FROM {near} a JOIN {far} b ON a.id = b.id\n"
        f"WHERE a.dt = '{{day}}' AND b.dt = '{{day}}' AND b.c{1 + feed % (COLUMNS - 1)} IS NOT NULL"
    )


def build(tables: int, days: int, seed: int, jobs_per_table: int = JOBS_PER_TABLE) -> Warehouse:
    """A warehouse of ``tables`` tables over ``LEVELS`` levels and ``jobs_per_table × tables`` jobs, spread over
    the tables above ODS."""
    rng = random.Random(seed)
    ods = max(1, round(tables * ODS_SHARE))
    upper = max(LEVELS - 1, tables - ods)
    levels = [[f"ods.t{n}" for n in range(ods)]]
    for level in range(1, LEVELS):
        count = upper // (LEVELS - 1) + (1 if level - 1 < upper % (LEVELS - 1) else 0)
        levels.append([f"{_database(level)}.l{level}_t{n}" for n in range(count)])
    targets = [(level, table) for level in range(1, LEVELS) for table in levels[level]]
    feeds = [0] * len(targets)
    jobs = []
    for number in range(jobs_per_table * tables):  # round robin over the tables above ODS
        level, target = targets[number % len(targets)]
        feed, feeds[number % len(targets)] = feeds[number % len(targets)], feeds[number % len(targets)] + 1
        lower = levels[rng.randrange(level)]
        near, far = rng.choice(levels[level - 1]), rng.choice(lower)
        sql = _job_sql(rng, target, near, far, feed)
        jobs.append(Job(f"{target.replace('.', '_')}_{feed}", level, target, sql))
    jobs.sort(key=lambda job: job.level)  # upstream levels run first
    return Warehouse(levels, jobs, days)


def run_records(warehouse: Warehouse, day_number: int, seed: int) -> Iterator[dict]:
    """The audit-log records (JSONL reader fields) of one day's runs, upstream levels first."""
    rng = random.Random(seed * 1_000_003 + day_number)
    day = FIRST_DAY + timedelta(days=day_number)
    start = datetime(day.year, day.month, day.day)
    for number, job in enumerate(warehouse.jobs):
        began = start + timedelta(seconds=number * 86_000 // max(1, len(warehouse.jobs)))
        yield {
            "sql": job.sql.format(day=day.isoformat()),
            "status": "SUCCEEDED",
            "user": f"etl_{job.target.split('.')[0]}",
            "start_time": began.isoformat() + "Z",
            "end_time": (began + timedelta(seconds=rng.randrange(20, 900))).isoformat() + "Z",
            "host": f"gw-{rng.randrange(1, 9):02d}.prod",
            "cluster": "prod-bj",
            "engine": "hive",
            "job": job.name,
            "queue": f"root.etl.{job.target.split('.')[0]}",
        }


def write_logs(warehouse: Warehouse, out_dir: Path, seed: int) -> tuple[Path, int]:
    """Write ``catalog.json`` and one JSONL audit log per day; returns (log directory, records written)."""
    logs = out_dir / "query-log"
    logs.mkdir(parents=True, exist_ok=True)
    (out_dir / "catalog.json").write_text(json.dumps(warehouse.catalog()), encoding="utf-8")
    records = 0
    for day_number in range(warehouse.days):
        path = logs / f"queries-{(FIRST_DAY + timedelta(days=day_number)).isoformat()}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for record in run_records(warehouse, day_number, seed):
                out.write(json.dumps(record) + "\n")
                records += 1
    return logs, records
