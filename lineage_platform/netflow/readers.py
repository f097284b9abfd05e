"""Readers of NetFlow records: this platform's CSV, nfdump's ``-o csv`` output, and Parquet.

Every reader yields clean :data:`~lineage_platform.netflow.records.SCHEMA` batches. A malformed row (wrong field
count, an unparsable address, time, port or number) never stops a read: it is counted and kept, with its reason,
in a :class:`Rejects` collector that can be written to a side file.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from lineage_platform.errors import IngestError
from lineage_platform.netflow.records import COLUMNS, IP_COLUMNS, SCHEMA, TIME_COLUMNS, ips_to_uint32

TIMESTAMP_PATTERN = r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,9})?$"
PROTOCOL_NAMES = {"ICMP": 1, "IGMP": 2, "TCP": 6, "UDP": 17, "GRE": 47, "ESP": 50, "ICMP6": 58, "SCTP": 132}
TCP_FLAG_BITS = {"F": 0x01, "S": 0x02, "R": 0x04, "P": 0x08, "A": 0x10, "U": 0x20, "E": 0x40, "C": 0x80}
# nfdump -o csv column -> record column (ts/te start and end, sa/da addresses, sp/dp ports, pr protocol,
# flg flags, ipkt/ibyt input packets/bytes, ra the exporting router)
NFDUMP_COLUMNS = {
    "ts": "first_ts",
    "te": "last_ts",
    "sa": "src_ip",
    "da": "dst_ip",
    "sp": "src_port",
    "dp": "dst_port",
    "pr": "protocol",
    "ipkt": "packets",
    "ibyt": "bytes",
    "flg": "tcp_flags",
    "ra": "router",
}


@dataclass
class Rejects:
    """Malformed records set aside during a read: a count and the rows with their reasons."""

    count: int = 0
    rows: list[tuple[str, str, str]] = field(default_factory=list)  # (where, reason, record text)
    keep: int = 10_000

    def add(self, where: str, reason: str, text: str) -> None:
        """Count one malformed record and keep it (up to ``keep`` of them) for the side file."""
        self.count += 1
        if len(self.rows) < self.keep:
            self.rows.append((where, reason, text))

    def write(self, path: Path) -> None:
        """Write the kept records as CSV (where, reason, record)."""
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["where", "reason", "record"])
            writer.writerows(self.rows)


def read_csv(
    path: Path, rejects: Rejects, *, flavour: str = "auto", block_bytes: int = 16 << 20
) -> Iterator[pa.RecordBatch]:
    """Stream records from a CSV file; ``flavour`` is ``platform`` (our columns), ``nfdump`` or ``auto``."""
    header = _header(path)
    if flavour == "auto":
        flavour = "nfdump" if {"ts", "sa", "da"} <= set(header) else "platform"
    mapping = NFDUMP_COLUMNS if flavour == "nfdump" else {name: name for name in COLUMNS}
    missing = [name for name in mapping if name not in header]
    if missing:
        raise IngestError(
            f"{path}: CSV header lacks {', '.join(missing)}",
            hint=f"the first line must name the columns ({', '.join(mapping)})",
        )

    trailer = []  # nfdump ends its CSV with a "Summary" block: those lines are not records

    def set_aside(row: pacsv.InvalidRow) -> str:
        if flavour == "nfdump" and (trailer or (row.text or "").startswith("Summary")):
            trailer.append(row.text)
            return "skip"
        where = f"{path}:{row.number}" if row.number is not None else str(path)
        rejects.add(where, f"expected {row.expected_columns} fields, got {row.actual_columns}", row.text)
        return "skip"

    reader = pacsv.open_csv(
        path,
        read_options=pacsv.ReadOptions(block_size=block_bytes),
        parse_options=pacsv.ParseOptions(invalid_row_handler=set_aside),
        convert_options=pacsv.ConvertOptions(
            include_columns=list(mapping), column_types={name: pa.string() for name in mapping}
        ),
    )
    convert = _nfdump_field if flavour == "nfdump" else _platform_field
    for batch in reader:
        yield _clean(batch, mapping, convert, str(path), rejects)


def read_parquet(path: Path, rejects: Rejects, *, batch_rows: int = 1 << 20) -> Iterator[pa.RecordBatch]:
    """Stream records from a Parquet file with the record columns (any compatible integer/timestamp types)."""
    parquet = pq.ParquetFile(path)
    missing = [name for name in COLUMNS if name not in parquet.schema_arrow.names]
    if missing:
        raise IngestError(
            f"{path}: Parquet file lacks {', '.join(missing)}", hint="write the NetFlow record columns"
        )
    for batch in parquet.iter_batches(batch_size=batch_rows, columns=list(COLUMNS)):
        columns = [batch.column(name) for name in COLUMNS]
        valid = np.ones(batch.num_rows, bool)
        for column in columns:
            valid &= ~column.is_null().to_numpy(zero_copy_only=False)
        table = pa.Table.from_arrays(columns, names=list(COLUMNS))
        for index in np.flatnonzero(~valid):
            rejects.add(f"{path}:{index}", "null field", str(table.slice(int(index), 1).to_pylist()[0]))
        yield pa.RecordBatch.from_arrays(
            [
                column.filter(pa.array(valid)).cast(SCHEMA.field(name).type)
                for name, column in zip(COLUMNS, columns)
            ],
            schema=SCHEMA,
        )


def read_records(paths: Iterable[Path], rejects: Rejects) -> Iterator[pa.RecordBatch]:
    """Records of several files, each read by the reader its suffix names (.csv, .parquet)."""
    for path in paths:
        suffix = path.suffix.lower()
        if suffix == ".csv":
            yield from read_csv(path, rejects)
        elif suffix in (".parquet", ".pq"):
            yield from read_parquet(path, rejects)
        else:
            raise IngestError(
                f"{path}: unknown NetFlow file type", hint="use .csv (platform or nfdump) or .parquet"
            )


def write_csv(batches: Iterable[pa.RecordBatch], path: Path) -> int:
    """Write records as this platform's CSV (dotted addresses, ISO times); returns the record count."""
    count = 0
    with pacsv.CSVWriter(path, _text_schema()) as writer:
        for batch in batches:
            writer.write_batch(_as_text(batch))
            count += batch.num_rows
    return count


def _text_schema() -> pa.Schema:
    return pa.schema([(name, pa.string()) for name in COLUMNS])


def _as_text(batch: pa.RecordBatch) -> pa.RecordBatch:
    columns = []
    for name in COLUMNS:
        column = batch.column(name)
        if name in IP_COLUMNS:
            values = column.to_numpy().astype(np.uint32)
            octets = [pc.cast(pa.array((values >> shift) & 0xFF), pa.string()) for shift in (24, 16, 8, 0)]
            text = pc.binary_join_element_wise(*octets, ".")
        elif name in TIME_COLUMNS:
            text = pc.strftime(column, format="%Y-%m-%d %H:%M:%S")
        else:
            text = pc.cast(column, pa.string())
        columns.append(text)
    return pa.RecordBatch.from_arrays(columns, schema=_text_schema())


FieldConverter = Callable[[str, pa.Array], tuple[pa.Array, np.ndarray]]


def _clean(
    batch: pa.RecordBatch, mapping: dict[str, str], convert: FieldConverter, where: str, rejects: Rejects
) -> pa.RecordBatch:
    """Convert text fields to record types; rows with any bad field go to ``rejects``."""
    converted: dict[str, pa.Array] = {}
    valid = np.ones(batch.num_rows, bool)
    reasons = np.full(batch.num_rows, "", object)
    for source, target in mapping.items():
        values, ok = convert(target, batch.column(source))
        reasons[~ok & valid] = f"bad {source}"
        valid &= ok
        converted[target] = values
    if not valid.all():
        bad = np.flatnonzero(~valid)
        text = batch.take(pa.array(bad)).to_pylist()
        for index, row in zip(bad, text):
            rejects.add(where, str(reasons[index]), ",".join(str(value) for value in row.values()))
    keep = pa.array(valid)
    return pa.RecordBatch.from_arrays([converted[name].filter(keep) for name in COLUMNS], schema=SCHEMA)


def _platform_field(column: str, text: pa.Array) -> tuple[pa.Array, np.ndarray]:
    text = pc.utf8_trim_whitespace(text)
    if column in IP_COLUMNS:
        values, valid = ips_to_uint32(text)
        return pa.array(values), valid
    if column in TIME_COLUMNS:
        return _timestamps(text)
    return _integers(text, SCHEMA.field(column).type)


def _nfdump_field(column: str, text: pa.Array) -> tuple[pa.Array, np.ndarray]:
    text = pc.utf8_trim_whitespace(text)
    if column == "protocol":
        names = pc.utf8_upper(text)
        known = pa.array(list(PROTOCOL_NAMES))
        index = pc.index_in(names, value_set=known).to_numpy(zero_copy_only=False)
        number, numeric_ok = _integers(text, pa.uint8())
        by_name = np.array(list(PROTOCOL_NAMES.values()), np.uint8)[np.nan_to_num(index, nan=0).astype(int)]
        named = ~np.isnan(index.astype(float))
        return pa.array(np.where(named, by_name, number.to_numpy(zero_copy_only=False))), named | numeric_ok
    if column == "tcp_flags":
        letters = (
            pc.match_substring_regex(text, r"^[.UAPRSFCE]{6,8}$")
            .fill_null(False)
            .to_numpy(zero_copy_only=False)
        )
        flags, numeric = _integers(text, pa.uint8())  # some nfdump builds print the flags as a number
        flags = flags.to_numpy(zero_copy_only=False).copy()
        flags[letters] = 0
        for letter, bit in TCP_FLAG_BITS.items():
            present = pc.match_substring(text, letter).fill_null(False).to_numpy(zero_copy_only=False)
            flags[letters & present] |= np.uint8(bit)
        return pa.array(flags), letters | numeric
    return _platform_field(column, text)


def _timestamps(text: pa.Array) -> tuple[pa.Array, np.ndarray]:
    valid = pc.match_substring_regex(text, TIMESTAMP_PATTERN).fill_null(False)
    safe = pc.if_else(valid, text, "1970-01-01 00:00:00")
    stamps = pc.cast(pc.cast(safe, pa.timestamp("ns")), pa.timestamp("ms"), safe=False)
    return stamps, valid.to_numpy(zero_copy_only=False)


def _integers(text: pa.Array, target: pa.DataType) -> tuple[pa.Array, np.ndarray]:
    digits = pc.match_substring_regex(text, r"^\d{1,19}$").fill_null(False)
    numbers = pc.cast(pc.if_else(digits, text, "0"), pa.uint64()).to_numpy(zero_copy_only=False)
    limit = np.iinfo(target.to_pandas_dtype()).max
    valid = digits.to_numpy(zero_copy_only=False) & (numbers <= limit)
    return pa.array(np.where(valid, numbers, 0).astype(target.to_pandas_dtype())), valid


def _header(path: Path) -> list[str]:
    try:
        with path.open(newline="") as handle:
            return [name.strip() for name in next(csv.reader(handle), [])]
    except OSError as exc:
        raise IngestError(f"cannot read {path}: {exc}", hint="check the path and permissions") from exc
