"""`lineage ingest …`: sample job logs, and the Spark bulk load of job logs into the lineage graph."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from lineage_platform.cli import params as p
from lineage_platform.config import ENV_PREFIX
from lineage_platform.ingest.budget import DEFAULT_MAX_BYTES, DEFAULT_MAX_SECONDS
from lineage_platform.ingest.readers import AUTO, FORMATS

if TYPE_CHECKING:
    from lineage_platform.ingest.bulk_load import LoadSummary


@click.group()
def ingest() -> None:
    """Load lineage from job logs (query logs, Spark event logs, HiveServer2 logs)."""


@ingest.command()
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@p.option(
    "--tables", type=click.IntRange(min=4), default=240, show_default=True, help="About how many tables."
)
@p.option(
    "--statements", type=click.IntRange(min=1), default=3000, show_default=True, help="Query records to log."
)
@p.option("--seed", type=int, default=42, show_default=True, help="Same seed and sizes give identical logs.")
def sample(out_dir: Path, tables: int, statements: int, seed: int) -> None:
    """Write sample job logs of a layered warehouse (and its catalog.json) into OUT_DIR."""
    from lineage_platform.ingest.sample_logs import generate_sample

    summary = generate_sample(out_dir, tables=tables, statements=statements, seed=seed)
    garbage = ", ".join(f"{fmt} {count}" for fmt, count in sorted(summary.garbage.items())) or "none"
    click.echo(
        f"{summary.records} query records over {summary.days} days ({summary.failed} failed, {summary.noise} ad-hoc) "
        f"from {summary.jobs} jobs on {summary.tables} tables; damaged lines: {garbage}; written to {out_dir}"
    )


@ingest.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@p.option(
    "--format",
    "fmt",
    envvar=ENV_PREFIX + "LOG_FORMAT",
    type=click.Choice(FORMATS),
    default=AUTO,
    show_default=True,
    help="Log format (auto: detected per file).",
)
@p.option(
    "--master",
    envvar=ENV_PREFIX + "SPARK_MASTER",
    default="local[*]",
    show_default=True,
    help="Spark master.",
)
@p.graph_url
@p.schema_file
@p.default_db
@p.udf_rules
@p.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Resume state folder (default: work dir/ingest).",
)
@p.batch_size
@p.option(
    "--checkpoint-every",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Distinct statements per resumable batch.",
)
@p.option(
    "--parse-max-bytes",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_BYTES,
    show_default=True,
    help="Statements longer than this (UTF-8 bytes) are rejected unparsed.",
)
@p.option(
    "--parse-max-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_MAX_SECONDS,
    show_default=True,
    help="Statements whose parse takes longer are rejected.",
)
@p.option("--strict", is_flag=True, help="Exit non-zero when any record or statement was rejected.")
def logs(
    paths: tuple[str, ...],
    fmt: str,
    master: str,
    graph_url: str | None,
    schema_file: str | None,
    default_db: str | None,
    udf_rules_file: str | None,
    state_dir: Path | None,
    batch_size: int,
    checkpoint_every: int,
    parse_max_bytes: int,
    parse_max_seconds: float,
    strict: bool,
) -> LoadSummary:
    """Load job logs at PATHS (files or folders) into the lineage graph with Spark."""
    from lineage_platform.cli.output import console
    from lineage_platform.ingest.budget import ParseBudget
    from lineage_platform.ingest.bulk_load import LoadOptions, bulk_load
    from lineage_platform.ingest.report import RichLoadProgress, summary_table
    from lineage_platform.sql import load_function_rules
    from lineage_platform.sql.schema_file import load_schema

    options = LoadOptions(
        paths=paths,
        fmt=fmt,
        master=master,
        graph_url=graph_url,
        schema=load_schema(schema_file) if schema_file else None,
        default_db=default_db,
        function_rules=load_function_rules(udf_rules_file) if udf_rules_file else None,
        state_dir=state_dir,
        batch_size=batch_size,
        checkpoint_every=checkpoint_every,
        budget=ParseBudget(parse_max_bytes, parse_max_seconds),
    )
    with RichLoadProgress(console(stderr=True)) as progress:
        summary = bulk_load(options, progress)
    console().print(summary_table(summary))
    if strict and (summary.bad_records or summary.parse_failed):
        raise click.ClickException(f"rejected input: see {summary.rejected_file}")
    return summary
