"""`lineage orc …`: read ORC files with column encryption as a user, inspect them, write them from Spark."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from lineage_platform.cli import params as p
from lineage_platform.errors import SecurityError

if TYPE_CHECKING:
    from lineage_platform.security.kms.base import KeyManagementService
    from lineage_platform.security.policy import PolicyStore

kms_url = p.option(
    "--kms",
    "kms_url",
    default=None,
    help="KMS: kms://http@HOST:PORT/kms (Hadoop/Ranger KMS) or local:PATH (a local key store file).",
)
table_name = p.option(
    "--table", "table_name", default=None, help="DB.TABLE the file belongs to (default: from a Hive path)."
)


@click.group()
def orc() -> None:
    """ORC files with column encryption: clear values only for the columns a user may see."""


def _rows(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    start, sep, stop = text.partition(":")
    if not sep or not start.isdigit() or not stop.isdigit() or int(stop) < int(start):
        raise SecurityError(f"bad --rows {text!r}", hint="write START:STOP, e.g. 1000:2000")
    return int(start), int(stop)


@orc.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@p.user
@p.policy_file
@p.graph_url
@kms_url
@table_name
@p.option(
    "--columns", default=None, help="Comma-separated top-level columns (default: all the user may see)."
)
@p.option(
    "--where", default=None, help="ANDed `column op constant` tests, e.g. \"id >= 10 AND city = 'Oslo'\"."
)
@p.option("--rows", "row_range", default=None, help="Row range START:STOP (file row numbers).")
@p.output_format(
    "orc read",
    ["table", "jsonl", "parquet"],
    "table",
    "Output: aligned text table, JSON lines, or a Parquet file (needs --output).",
)
@p.option(
    "--output",
    command="orc read",
    default=None,
    help="File to write (required for parquet; default stdout otherwise).",
)
def read(
    path: str,
    user: str,
    policy_file: str | None,
    graph_url: str | None,
    kms_url: str | None,
    table_name: str | None,
    columns: str | None,
    where: str | None,
    row_range: str | None,
    output_format: str,
    output: str | None,
) -> None:
    """Print the rows of PATH as USER may see them: clear permitted columns, masked other encrypted ones."""
    from lineage_platform.security.orc.authorise import read_as_user
    from lineage_platform.security.orc.output import write_rows

    store = _policy_store(policy_file, graph_url)
    kms = _kms(kms_url, user)
    names = [c.strip() for c in columns.split(",")] if columns else None
    rows, report = read_as_user(
        path, user, store, kms, table=table_name, columns=names, where=where, rows=_rows(row_range)
    )
    write_rows(rows, output_format, output)
    click.echo(
        f"{rows.num_rows} rows; clear: {', '.join(report.clear) or '-'}; masked: {', '.join(report.masked) or '-'}; "
        f"not shown: {', '.join(report.hidden) or '-'}; stripes read: {report.stripes}",
        err=True,
    )


@orc.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@kms_url
@p.option("--unlock", default=None, help="Comma-separated encrypted columns whose clear statistics to show.")
def inspect(path: str, kms_url: str | None, unlock: str | None) -> None:
    """Show schema, encryption variants, keys and versions, masks, statistics and leak warnings (JSON)."""
    from lineage_platform.security.orc.inspect import describe
    from lineage_platform.security.orc.reader import EncryptedOrcReader

    reader = EncryptedOrcReader(path, _kms(kms_url, None))
    if unlock:
        reader.unlock([c.strip() for c in unlock.split(",")])
    click.echo(json.dumps(describe(reader), indent=2))


@orc.command("encrypt-table")
@click.argument("table")
@click.argument("target")
@p.graph_url
@p.option(
    "--kms",
    "kms_uri",
    required=True,
    help="Hadoop key provider URI for ORC Java, e.g. kms://http@HOST:PORT/kms.",
)
@p.option(
    "--rule",
    "rules",
    multiple=True,
    help="LABEL:KEY[:MASK] (repeatable; default PII:pii, SENSITIVITY=high:secret).",
)
@p.option("--compression", default="zstd", show_default=True, help="none, zlib, snappy, lz4 or zstd.")
@p.option("--master", default="local[*]", show_default=True, help="Spark master.")
def encrypt_table(
    table: str,
    target: str,
    graph_url: str | None,
    kms_uri: str,
    rules: tuple[str, ...],
    compression: str,
    master: str,
) -> None:
    """Write Spark table TABLE to TARGET as ORC, encrypting columns by their labels in the graph."""
    from lineage_platform.graph import connect
    from lineage_platform.ingest.spark import session
    from lineage_platform.security.orc.encrypt_table import DEFAULT_RULES, EncryptionRule
    from lineage_platform.security.orc.encrypt_table import encrypt_table as run

    chosen = [EncryptionRule.parse(r) for r in rules] or list(DEFAULT_RULES)
    plan = run(
        session(master), connect(graph_url), table, target, kms_uri, rules=chosen, compression=compression
    )
    click.echo(json.dumps({"options": plan.orc_options(), "notes": plan.notes}, indent=2))


def _policy_store(policy_file: str | None, graph_url: str | None) -> PolicyStore:
    """The policy file's grants, or the grants stored in the graph."""
    from lineage_platform.security.policy import load_policy

    if policy_file:
        return load_policy(policy_file)
    from lineage_platform.graph import connect
    from lineage_platform.security.policy_graph import load_policy_graph

    return load_policy_graph(connect(graph_url))


def _kms(url: str | None, user: str | None) -> KeyManagementService | None:
    """The KMS client for ``--kms`` (None without one: encrypted columns stay masked)."""
    if url is None:
        return None
    from lineage_platform.security.kms import kms_from_url

    return kms_from_url(url, user=user)
