"""`lineage cdc`: stream the graph's committed changes to Kafka and keep mirrors in sync."""

from __future__ import annotations

import signal
import threading

import click

from lineage_platform.cli import params as p
from lineage_platform.config import ENV_PREFIX

bootstrap_servers = p.option(
    "--bootstrap-servers",
    envvar=ENV_PREFIX + "KAFKA_BOOTSTRAP",
    default="127.0.0.1:9092",
    show_default=True,
    help="Kafka brokers, host:port[,host:port].",
)
topic = p.option(
    "--topic",
    envvar=ENV_PREFIX + "CDC_TOPIC",
    default="lineage.changes",
    show_default=True,
    help="Change topic.",
)
once = p.option(
    "--once",
    envvar=ENV_PREFIX + "CDC_ONCE",
    is_flag=True,
    help="Stop when caught up instead of following until interrupted.",
)


def _stop_on_signals() -> threading.Event:
    """An event set by SIGTERM or Ctrl-C, so the loops finish their batch and save their position."""
    stop = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())
    return stop


@click.group()
def cdc() -> None:
    """Change capture: relay committed graph changes to Kafka (Avro) and mirror them elsewhere."""


@cdc.command()
@p.store
@p.graph_url
@bootstrap_servers
@topic
@p.option(
    "--checkpoint",
    envvar=ENV_PREFIX + "CDC_CHECKPOINT",
    type=click.Path(dir_okay=False),
    required=True,
    help="File keeping the last published SCN (one per relay).",
)
@p.option(
    "--start-scn",
    envvar=ENV_PREFIX + "CDC_START_SCN",
    type=click.IntRange(min=0),
    default=None,
    help="Publish the changes after this SCN, ignoring the checkpoint.",
)
@once
def relay(
    store: str | None,
    graph_url: str | None,
    bootstrap_servers: str,
    topic: str,
    checkpoint: str,
    start_scn: int | None,
    once: bool,
) -> None:
    """Publish committed changes: tail the embedded store's log (--store) or read the writer's outbox (--graph)."""
    from lineage_platform.cdc.service import log_relay, outbox_relay

    if store:
        publisher = log_relay(store, bootstrap_servers, topic, checkpoint, start_scn=start_scn)
    elif graph_url:
        publisher = outbox_relay(graph_url, bootstrap_servers, topic, checkpoint, start_scn=start_scn)
    else:
        raise click.UsageError("pass --store PATH (log tailing) or --graph URL (outbox)")
    try:
        summary = publisher.catch_up() if once else publisher.run(_stop_on_signals())
    finally:
        publisher.close()
    click.echo(
        f"published {summary.events} events of {summary.transactions} transactions up to SCN {summary.last_scn}"
        f" ({summary.unlabelled} without a known label)"
    )


@cdc.command()
@p.option(
    "--mirror",
    "mirror_path",
    envvar=ENV_PREFIX + "CDC_MIRROR",
    type=click.Path(dir_okay=False),
    required=True,
    help="SQLite file of the mirror.",
)
@p.store
@p.graph_url
@bootstrap_servers
@topic
@p.option(
    "--since-scn",
    envvar=ENV_PREFIX + "CDC_SINCE_SCN",
    type=click.IntRange(min=0),
    default=None,
    help="Without --store: start a new mirror empty, with the changes after this SCN.",
)
@p.option(
    "--rebootstrap", is_flag=True, help="Reload the mirror from a new snapshot (after a BootstrapRequired)."
)
@once
def mirror(
    mirror_path: str,
    store: str | None,
    graph_url: str | None,
    bootstrap_servers: str,
    topic: str,
    since_scn: int | None,
    rebootstrap: bool,
    once: bool,
) -> None:
    """Keep a SQLite copy of the graph (views: datasets, lineage_edges) in sync with the change topic.

    A new mirror starts from a snapshot of --store (log relay), or empty after --since-scn, or from a snapshot
    of --graph read through Gremlin (outbox relay)."""
    from lineage_platform.cdc.service import mirror_subscriber

    subscriber = mirror_subscriber(
        mirror_path,
        bootstrap_servers,
        topic,
        store=store,
        graph_url=graph_url,
        since_scn=since_scn,
        rebootstrap=rebootstrap,
    )
    try:
        summary = subscriber.run_until_idle() if once else subscriber.run(_stop_on_signals())
    finally:
        subscriber.close()
    click.echo(
        f"applied {summary.applied} events (dropped {summary.duplicates} duplicates); mirror at SCN "
        f"{summary.last_scn}, bootstrapped at SCN {summary.snapshot_scn}"
    )
