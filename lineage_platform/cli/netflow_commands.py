"""`lineage netflow …`: generate records, choose clustering attributes, ingest, query and maintain the catalog."""

from __future__ import annotations

from pathlib import Path

import click

from lineage_platform.cli import params as p

dataset_option = p.option(
    "--dataset", default="netflow.flows", show_default=True, help="Qualified name of the NetFlow dataset."
)

cells_option = p.option(
    "--cells",
    type=click.IntRange(min=1),
    default=None,
    help="Cells per time bucket (default: cells of ~131k records, at least 8, from the data rate).",
)
bucket_minutes_option = p.option(
    "--bucket-minutes",
    type=click.IntRange(min=1),
    default=None,
    help="Time bucket (default: the shortest divisor of a day holding 8 such cells).",
)

spark_master_option = p.option(
    "--master",
    "spark_master",
    envvar="LINEAGE_SPARK_MASTER",
    default="local[*]",
    show_default=True,
    help="Spark master (engine spark).",
)


@click.group()
def netflow() -> None:
    """NetFlow partition catalog: clustered ingest and pruned queries."""


@netflow.command()
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@p.option(
    "--records", type=click.IntRange(min=1), default=1_000_000, show_default=True, help="How many records."
)
@p.option(
    "--hours", type=click.IntRange(min=1), default=24, show_default=True, help="Time span of the records."
)
@p.option(
    "--seed", type=int, default=0, show_default=True, help="Same seed and sizes give identical records."
)
def generate(out: Path, records: int, hours: int, seed: int) -> None:
    """Write synthetic NetFlow records (skewed, with a daily cycle) to OUT (.parquet or .csv)."""
    from lineage_platform.netflow.generate import FlowProfile, write_records

    count = write_records(out, records, FlowProfile(hours=hours), seed)
    click.echo(f"{count} records over {hours} h written to {out}")


@netflow.command()
@click.argument("query_log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@p.option(
    "--cells",
    command="netflow choose",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Cells per time bucket the data will get (ingest sizes it from the data volume).",
)
@p.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=None,
    help="Fixed minimum share instead of the read-share model.",
)
@p.option(
    "--max-attributes", type=click.IntRange(min=1), default=2, show_default=True, help="At most this many."
)
def choose(query_log: Path, cells: int, threshold: float | None, max_attributes: int) -> None:
    """Pick clustering attributes from a log of NetFlow queries (';'-separated) and explain the choice."""
    from lineage_platform.netflow.workload import choose_attributes

    choice = choose_attributes(
        query_log.read_text(), cells=cells, threshold=threshold, maximum=max_attributes
    )
    click.echo(choice.explain())
    click.echo(f"clustering attributes: {','.join(choice.chosen) or '(none: time only)'}")


@netflow.command()
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@dataset_option
@p.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=None, help="Where partition files go."
)
@p.option(
    "--attributes", default=None, help="Clustering attributes, comma-separated (default src_ip,dst_ip)."
)
@p.option(
    "--workload",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Choose the attributes from this query log instead.",
)
@cells_option
@bucket_minutes_option
@p.option(
    "--engine",
    command="netflow ingest",
    type=click.Choice(["arrow", "spark"]),
    default="arrow",
    show_default=True,
    help="arrow: pipelined single-machine path; spark: PySpark job (Parquet inputs).",
)
@spark_master_option
@p.option(
    "--rejects",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write malformed records here (CSV).",
)
@p.option("--strict", is_flag=True, help="Exit non-zero when any record was rejected.")
@p.graph_url
def ingest(
    paths: tuple[Path, ...],
    dataset: str,
    root: Path | None,
    attributes: str | None,
    workload: Path | None,
    cells: int | None,
    bucket_minutes: int | None,
    engine: str,
    spark_master: str,
    rejects: Path | None,
    strict: bool,
    graph_url: str | None,
) -> None:
    """Partition NetFlow files (CSV, nfdump CSV, Parquet) and catalogue the partitions in the graph."""
    from lineage_platform.graph import connect
    from lineage_platform.netflow.maintenance import ingest_command

    report = ingest_command(
        connect(graph_url),
        dataset,
        list(paths),
        root=root,
        attributes=attributes,
        workload=workload,
        cells=cells,
        bucket_minutes=bucket_minutes,
        engine=engine,
        spark_master=spark_master,
        rejects_path=rejects,
    )
    click.echo(report.text)
    if strict and report.rejected:
        raise click.ClickException(
            f"{report.rejected} malformed records" + (f": see {rejects}" if rejects else "")
        )


@netflow.command()
@click.argument("sql")
@dataset_option
@p.option("--explain", is_flag=True, help="Also print the boxes and what was pruned.")
@p.option(
    "--engine",
    "query_engine",
    command="netflow query",
    type=click.Choice(["duckdb", "arrow", "spark"]),
    default="duckdb",
    show_default=True,
    help="duckdb: DuckDB reads the candidate files; arrow: pyarrow reads exactly the indexed blocks; "
    "spark: Spark executors scan the candidate files, rows stream back to this process.",
)
@spark_master_option
@p.graph_url
def query(
    sql: str, dataset: str, explain: bool, query_engine: str, spark_master: str, graph_url: str | None
) -> None:
    """Run SQL over the dataset, reading only the partitions and blocks its WHERE clause can match."""
    from lineage_platform.graph import connect
    from lineage_platform.netflow.query import format_streamed, plan_query

    plan = plan_query(connect(graph_url), dataset, sql)
    batches = None
    if query_engine == "spark":
        from lineage_platform.ingest.spark import session
        from lineage_platform.netflow.spark_query import spark_batches

        batches = spark_batches(session(spark_master, "lineage-netflow-query"), plan)
    click.echo(format_streamed(plan, engine=query_engine, explain=explain, batches=batches))


@netflow.command()
@dataset_option
@p.graph_url
def partitions(dataset: str, graph_url: str | None) -> None:
    """List the catalogued partitions of the dataset."""
    from lineage_platform.graph import connect
    from lineage_platform.netflow.catalog import format_partitions

    click.echo(format_partitions(connect(graph_url), dataset))


@netflow.command()
@click.argument("keep_from")
@dataset_option
@p.graph_url
def retain(keep_from: str, dataset: str, graph_url: str | None) -> None:
    """Drop partitions whose records all start before KEEP_FROM ('YYYY-MM-DD HH:MM:SS', UTC)."""
    from lineage_platform.graph import connect
    from lineage_platform.netflow.maintenance import apply_retention, parse_time

    dropped = apply_retention(connect(graph_url), dataset, parse_time(keep_from))
    click.echo(f"dropped {len(dropped)} partitions ({sum(item.records for item in dropped)} records)")


@netflow.command()
@dataset_option
@p.option("--attributes", required=True, help="New clustering attributes, comma-separated.")
@cells_option
@bucket_minutes_option
@p.graph_url
def repartition(
    dataset: str, attributes: str, cells: int | None, bucket_minutes: int | None, graph_url: str | None
) -> None:
    """Re-write the dataset with a new layout and replace its partitions in the catalog."""
    from lineage_platform.graph import connect
    from lineage_platform.netflow.maintenance import LayoutRequest, parse_attributes
    from lineage_platform.netflow.maintenance import repartition as run_repartition

    request = LayoutRequest(parse_attributes(attributes), cells, bucket_minutes and bucket_minutes * 60_000)
    summary = run_repartition(connect(graph_url), dataset, request)
    click.echo(f"{summary.records} records re-written into {len(summary.files)} partition files")
