"""`lineage collect`: the Kafka collector (or, with --http, the HTTP receiver) turning hook events into lineage."""

from __future__ import annotations

import signal

import click

from lineage_platform.cli import params as p
from lineage_platform.config import ENV_PREFIX
from lineage_platform.ingest.collector import (
    DEFAULT_DEAD_LETTER_TOPIC,
    DEFAULT_GROUP,
    DEFAULT_MAX_EVENT_BYTES,
)
from lineage_platform.ingest.http_receiver import DEFAULT_DEAD_LETTER_FILE


@click.command()
@p.option(
    "--bootstrap-servers",
    envvar=ENV_PREFIX + "KAFKA_BOOTSTRAP",
    default="127.0.0.1:9092",
    show_default=True,
    help="Kafka brokers, host:port[,host:port].",
)
@p.option("--topic", "topics", multiple=True, help="Topic to read (repeat for several).")
@p.option(
    "--http",
    "http_address",
    default=None,
    metavar="HOST:PORT",
    help="Instead of Kafka, serve a Marquez-compatible POST /api/v1/lineage (and /api/v1/lineage/batch) on HOST:PORT.",
)
@p.option(
    "--dead-letter-file",
    type=click.Path(dir_okay=False),
    default=DEFAULT_DEAD_LETTER_FILE,
    show_default=True,
    help="With --http: JSON-lines file keeping refused events with the reason.",
)
@p.option("--group", "group_id", default=DEFAULT_GROUP, show_default=True, help="Kafka consumer group.")
@p.option(
    "--dead-letter-topic",
    default=DEFAULT_DEAD_LETTER_TOPIC,
    show_default=True,
    help="Where unusable events go, with the reason (empty: only count them).",
)
@p.graph_url
@p.schema_file
@p.udf_rules
@p.batch_size
@p.option(
    "--max-records",
    type=click.IntRange(min=1),
    default=500,
    show_default=True,
    help="Most records per poll (each poll is sized to apply in half the max poll interval).",
)
@p.option(
    "--max-poll-interval-ms",
    type=click.IntRange(min=1000),
    default=5000,
    show_default=True,
    help="Longest pause between polls before the group rebalances (also how long a rebalance may wait).",
)
@p.option(
    "--split-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=300.0,
    show_default=True,
    help="Seconds to wait for the missing parts of a split Atlas message before dead-lettering its parts.",
)
@p.option(
    "--idle-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Stop after this many seconds without new events.",
)
@p.option(
    "--max-event-mib",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_MAX_EVENT_BYTES / 2**20,
    show_default=True,
    help="A compressed event inflating past this many MiB is dead-lettered.",
)
@p.option(
    "--progress/--no-progress", default=True, show_default=True, help="Print a JSON progress line per batch."
)
def collect(
    bootstrap_servers: str,
    topics: tuple[str, ...],
    http_address: str | None,
    dead_letter_file: str,
    group_id: str,
    dead_letter_topic: str,
    graph_url: str | None,
    schema_file: str | None,
    udf_rules_file: str | None,
    batch_size: int,
    max_records: int,
    max_poll_interval_ms: int,
    split_timeout: float,
    idle_timeout: float | None,
    max_event_mib: float,
    progress: bool,
) -> None:
    """Consume hook events (platform events, Atlas HookNotifications, OpenLineage RunEvents) into the graph."""
    from lineage_platform.errors import ConfigError
    from lineage_platform.ingest.collector import Collector, CollectorOptions, describe
    from lineage_platform.sql import load_function_rules
    from lineage_platform.sql.schema_file import load_schema

    if http_address is not None:
        from pathlib import Path

        from lineage_platform.graph import connect
        from lineage_platform.ingest.http_receiver import serve

        stats = serve(
            http_address,
            connect(graph_url),
            Path(dead_letter_file),
            schema=load_schema(schema_file) if schema_file else None,
            function_rules=load_function_rules(udf_rules_file) if udf_rules_file else None,
            max_body_bytes=int(max_event_mib * 2**20),
            batch_size=batch_size,
            on_ready=lambda port: click.echo(
                f"listening on {http_address.rpartition(':')[0]}:{port}", err=True
            ),
        )
        click.echo("\n".join(f"{name}: {value}" for name, value in stats.rows()))
        return
    if not topics:
        raise ConfigError("no topic to collect from", hint="pass --topic (several times) or --http HOST:PORT")

    options = CollectorOptions(
        bootstrap_servers=bootstrap_servers,
        topics=topics,
        group_id=group_id,
        dead_letter_topic=dead_letter_topic or None,
        graph_url=graph_url,
        schema=load_schema(schema_file) if schema_file else None,
        function_rules=load_function_rules(udf_rules_file) if udf_rules_file else None,
        batch_size=batch_size,
        max_records=max_records,
        max_poll_interval_ms=max_poll_interval_ms,
        session_timeout_ms=max_poll_interval_ms,
        split_timeout=split_timeout,
        idle_timeout=idle_timeout,
        max_event_bytes=int(max_event_mib * 2**20),
    )
    collector = Collector(
        options, on_batch=(lambda s: click.echo(describe(s), err=True)) if progress else None
    )
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: collector.stop())
    stats = collector.run()
    click.echo("\n".join(f"{name}: {value}" for name, value in stats.rows()))
