"""Addresses as integers, and the CSV / nfdump / Parquet readers with malformed records set aside."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lineage_platform.errors import IngestError
from lineage_platform.netflow.generate import FlowProfile, generate
from lineage_platform.netflow.readers import Rejects, read_csv, read_parquet, read_records, write_csv
from lineage_platform.netflow.records import SCHEMA, cidr_range, int_to_ip, ip_to_int

NFDUMP = """ts,te,td,sa,da,sp,dp,pr,flg,fwd,stos,ipkt,ibyt,opkt,obyt,in,out,sas,das,smk,dmk,dtos,dir,nh,nhb,svln,dvln,ismc,odmc,idmc,osmc,mpls1,mpls2,mpls3,mpls4,mpls5,mpls6,mpls7,mpls8,mpls9,mpls10,cl,sl,al,ra,eng,exid,tr
2016-03-08 15:44:47,2016-03-08 15:44:49,2.044,10.0.0.1,192.168.1.20,51234,443,TCP,...AP.SF,0,0,12,4096,0,0,0,0,0,0,0,0,0,0,0.0.0.0,0.0.0.0,0,0,00:00:00:00:00:00,00:00:00:00:00:00,00:00:00:00:00:00,00:00:00:00:00:00,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0.000,0.000,0.000,172.16.0.1,0/0,1,1970-01-01 00:00:00.000
2016-03-08 15:44:50.250,2016-03-08 15:44:50.250,0.000,10.0.0.2,8.8.8.8,5353,53,UDP,........,0,0,1,76,0,0,0,0,0,0,0,0,0,0,0.0.0.0,0.0.0.0,0,0,00:00:00:00:00:00,00:00:00:00:00:00,00:00:00:00:00:00,00:00:00:00:00:00,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0.000,0.000,0.000,172.16.0.1,0/0,1,1970-01-01 00:00:00.000
2016-03-08 15:44:51,2016-03-08 15:44:52,1.0,10.0.0.300,8.8.8.8,5353,53,UDP,........,0,0,1,76,0,0,0,0,0,0,0,0,0,0,0.0.0.0,0.0.0.0,0,0,00:00:00:00:00:00,00:00:00:00:00:00,00:00:00:00:00:00,00:00:00:00:00:00,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0-0-0,0.000,0.000,0.000,172.16.0.1,0/0,1,1970-01-01 00:00:00.000
Summary
flows,bytes,packets,avg_bps,avg_pps,avg_bpp
3,4248,14,0,0,303
"""


def test_addresses_and_blocks_are_integers() -> None:
    assert ip_to_int("10.0.0.1") == 167772161
    assert int_to_ip(167772161) == "10.0.0.1"
    assert cidr_range("192.168.4.7/22") == (ip_to_int("192.168.4.0"), ip_to_int("192.168.7.255"))
    with pytest.raises(IngestError, match="not an IPv4 address"):
        ip_to_int("10.0.0.256")


def test_platform_csv_round_trips_and_sets_bad_rows_aside(tmp_path: Path) -> None:
    records = pa.Table.from_batches(list(generate(3_000, profile=FlowProfile(hours=1, hosts=500))))
    path = tmp_path / "flows.csv"
    write_csv(records.to_batches(), path)
    with path.open("a") as handle:
        handle.write("not,a,record\n")
        handle.write("2026-01-01 00:00:00,2026-01-01 00:00:01,1.2.3.4,5.6.7.8,99999,80,6,1,40,2,1.1.1.1\n")
        handle.write("yesterday,2026-01-01 00:00:01,1.2.3.4,5.6.7.8,1,80,6,1,40,2,1.1.1.1\n")
    rejects = Rejects()
    back = pa.Table.from_batches(list(read_csv(path, rejects)), schema=SCHEMA)
    assert back.equals(records)
    assert rejects.count == 3
    assert sorted(reason for _, reason, _ in rejects.rows) == [
        "bad first_ts",
        "bad src_port",
        "expected 11 fields, got 3",
    ]
    rejects.write(tmp_path / "rejects.csv")
    assert "bad src_port" in (tmp_path / "rejects.csv").read_text()


def test_nfdump_csv_maps_columns_names_and_flags(tmp_path: Path) -> None:
    path = tmp_path / "nfdump.csv"
    path.write_text(NFDUMP)
    rejects = Rejects()
    rows = pa.Table.from_batches(list(read_csv(path, rejects))).to_pylist()
    assert len(rows) == 2
    tcp, udp = rows
    assert (int_to_ip(tcp["src_ip"]), int_to_ip(tcp["dst_ip"]), tcp["dst_port"]) == (
        "10.0.0.1",
        "192.168.1.20",
        443,
    )
    assert tcp["protocol"] == 6 and udp["protocol"] == 17
    assert tcp["tcp_flags"] == 0x10 | 0x08 | 0x02 | 0x01  # A P S F
    assert (tcp["packets"], tcp["bytes"], int_to_ip(tcp["router"])) == (12, 4096, "172.16.0.1")
    assert udp["first_ts"].microsecond == 250_000
    # the bad address is set aside; nfdump's trailing summary block is neither a record nor a rejection
    assert [reason for _, reason, _ in rejects.rows] == ["bad sa"]
    assert rejects.count == 1


def test_parquet_reader_casts_types_and_sets_null_records_aside(tmp_path: Path) -> None:
    records = pa.Table.from_batches(list(generate(100, profile=FlowProfile(hours=1, hosts=50))))
    loose = records.set_column(
        2, "src_ip", pa.array([None, *records.column("src_ip").to_pylist()[1:]], pa.int64())
    )
    pq.write_table(loose, tmp_path / "loose.parquet")
    rejects = Rejects()
    back = pa.Table.from_batches(list(read_records([tmp_path / "loose.parquet"], rejects)))
    assert back.schema == SCHEMA
    assert back.equals(records.slice(1))
    assert rejects.count == 1 and rejects.rows[0][1] == "null field"


def test_unknown_inputs_get_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(IngestError, match="unknown NetFlow file type"):
        list(read_records([tmp_path / "x.json"], Rejects()))
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(IngestError, match="CSV header lacks"):
        list(read_csv(tmp_path / "bad.csv", Rejects()))
    pq.write_table(pa.table({"a": [1]}), tmp_path / "bad.parquet")
    with pytest.raises(IngestError, match="Parquet file lacks"):
        list(read_parquet(tmp_path / "bad.parquet", Rejects()))
