"""Fast checks of the building blocks: protobuf wire codec, AES-CTR with ORC's IVs, chunked compression,
the KMS clients (REST against a local Hadoop-KMS-speaking server), permissions and encryption planning."""

from __future__ import annotations

import os
import socket
import zlib
from pathlib import Path

import cramjam
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from orc_test_kms import LocalHadoopKms

from lineage_platform.errors import SecurityError
from lineage_platform.security.kms import HadoopKms, LocalKeyStore, kms_from_url
from lineage_platform.security.kms.hadoop import KmsUnavailableError, base_url
from lineage_platform.security.orc.authorise import permitted_columns, table_of
from lineage_platform.security.orc.compression import decompress, store_original
from lineage_platform.security.orc.crypto import (
    CtrCipher,
    ctr_decrypt,
    key_length,
    stream_counter,
    stream_iv,
    unwrap_local_key,
)
from lineage_platform.security.orc.encrypt_table import EncryptionRule, plan_encryption
from lineage_platform.security.orc.plain import stream_entries
from lineage_platform.security.orc.protowire import (
    BYTES,
    Message,
    bytes_field,
    decode,
    encode,
    read_varint,
    varints,
    zigzag,
)
from lineage_platform.security.orc.verify import set_bits
from lineage_platform.security.policy import Grant, PolicyStore


def test_protobuf_round_trip_keeps_unknown_fields_and_reads_packed_varints() -> None:
    inner = encode(Message().with_fields([(1, 300), (3, b"abc")]))
    outer = Message().with_fields([(2, inner), (4, encode(Message().with_fields([(1, 1)]))), (99, 7)])
    outer.fields.append((5, 2, bytes([1, 0x96, 0x01, 3])))  # packed varints 1, 150, 3
    parsed = decode(encode(outer))
    assert parsed.fields == outer.fields
    assert parsed.message(2).int(1) == 300 and parsed.message(2).text(3) == "abc"
    assert parsed.packed(5) == [1, 150, 3] and parsed.int(99) == 7
    assert [zigzag(v) for v in (0, 1, 2, 3)] == [0, -1, 1, -2]
    with pytest.raises(SecurityError, match="truncated"):
        decode(encode(outer)[:-3])


def test_stream_iv_layout_is_column_kind_stripe_then_counter() -> None:
    iv = stream_iv(0x010203, 6, 0x0A0B0C)
    assert iv == bytes([1, 2, 3, 0, 6, 10, 11, 12]) + bytes(8)
    with pytest.raises(SecurityError):
        stream_iv(1 << 24, 1, 1)


@pytest.mark.parametrize("offset", [0, 5, 16, 37, 4095])
def test_decrypting_from_an_offset_equals_slicing_the_whole_stream(offset: int) -> None:
    key, iv = os.urandom(32), stream_iv(7, 1, 3)
    plain = os.urandom(5000)
    encryptor = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
    cipher = encryptor.update(plain) + encryptor.finalize()
    assert ctr_decrypt(key, iv, cipher[offset:], offset) == plain[offset:]


def _aes_ctr(key: bytes, counter: int, data: bytes, offset: int) -> bytes:
    """The reference: ``cryptography``'s AES-CTR from the stream's start, sliced at ``offset``."""
    decryptor = Cipher(algorithms.AES(key), modes.CTR(counter.to_bytes(16, "big"))).decryptor()
    return (decryptor.update(bytes(offset) + data) + decryptor.finalize())[offset:]


@pytest.mark.parametrize("size", [16, 32])
def test_one_cipher_deciphers_many_streams_in_one_call_as_aes_ctr_does(size: int) -> None:
    key = os.urandom(size)
    pieces = [
        (stream_counter(7, 1, 3), 0, 1000),  # a whole stream
        (stream_counter(7, 2, 3), 0, 0),  # an empty one
        (stream_counter(8, 6, 3), 37, 5),  # a window inside a block
        (stream_counter(9, 1, 3), 4096, 33),  # a window from a later block
        ((1 << 64) - 2, 16, 70),  # the low 64 bits carry into the high ones
        ((1 << 128) - 1, 0, 48),  # the 128-bit counter wraps to zero
    ]
    data = os.urandom(sum(length for _, _, length in pieces))
    expected, at = b"", 0
    for counter, offset, length in pieces:
        expected += _aes_ctr(key, counter, data[at : at + length], offset)
        at += length
    cipher = CtrCipher(key)
    assert cipher.decrypt(data, pieces) == expected
    assert cipher.decrypt(data[:1000], pieces[:1]) == expected[:1000]  # the context is reused
    assert stream_iv(7, 1, 3) == stream_counter(7, 1, 3).to_bytes(16, "big")


def test_counter_carries_across_the_low_64_bits() -> None:
    key = os.urandom(16)
    iv = bytes(8) + b"\xff" * 8  # the next block carries into the stripe-id bytes
    whole = ctr_decrypt(key, iv, bytes(64))
    assert ctr_decrypt(key, iv, bytes(32), 32) == whole[32:]


@pytest.mark.parametrize("size", [16, 32])
def test_unwrap_is_aes_ctr_with_the_wrapped_keys_first_block_as_iv(size: int) -> None:
    master, wrapped = os.urandom(size), os.urandom(size)
    expected = Cipher(algorithms.AES(master), modes.CTR(wrapped[:16])).decryptor().update(wrapped)
    assert unwrap_local_key(master, wrapped) == expected


def test_unknown_algorithm_names_the_column() -> None:
    assert key_length(1, "ssn") == 16 and key_length(2, "ssn") == 32
    with pytest.raises(SecurityError, match="column ssn: unknown encryption algorithm 3"):
        key_length(3, "ssn")


def _chunk(payload: bytes, original: bool) -> bytes:
    header = len(payload) << 1 | original
    return bytes((header & 0xFF, header >> 8 & 0xFF, header >> 16)) + payload


def test_chunked_streams_decompress_for_every_codec() -> None:
    plain = b"orc " * 5000
    deflater = zlib.compressobj(wbits=-15)
    chunks = {
        1: _chunk(deflater.compress(plain) + deflater.flush(), False),
        2: _chunk(bytes(cramjam.snappy.compress_raw(plain)), False),
        4: _chunk(bytes(cramjam.lz4.compress_block(plain, store_size=False)), False),
        5: _chunk(bytes(cramjam.zstd.compress(plain)), False),
    }
    for codec, chunk in chunks.items():
        assert (
            decompress(chunk + store_original(b"tail", codec), codec, 256 * 1024, "test") == plain + b"tail"
        )
    with pytest.raises(SecurityError, match="test: truncated compression chunk"):
        decompress(chunks[5][:-4], 5, 256 * 1024, "test")
    with pytest.raises(SecurityError, match="cannot decompress"):
        decompress(_chunk(os.urandom(64), False), 5, 256 * 1024, "test")
    with pytest.raises(SecurityError, match="lzo is not supported"):
        decompress(chunks[1], 3, 256 * 1024, "test")


def test_local_key_store_unwraps_and_refuses_unsafe_files(tmp_path: Path) -> None:
    master = [os.urandom(16), os.urandom(16)]
    store = LocalKeyStore(LocalKeyStore.write(tmp_path / "keys.json", {"pii": master}))
    wrapped = os.urandom(16)
    assert store.key_info("pii").versions == 2 and store.key_info("pii").bits == 128
    assert store.decrypt_local_key("pii", 0, wrapped) == unwrap_local_key(master[0], wrapped)
    assert store.decrypt_local_key("pii", 1, wrapped) != store.decrypt_local_key("pii", 0, wrapped)
    with pytest.raises(SecurityError, match="no version 2"):
        store.decrypt_local_key("pii", 2, wrapped)
    with pytest.raises(SecurityError, match="'secret' is not in"):
        store.decrypt_local_key("secret", 0, wrapped)
    os.chmod(store.path, 0o644)
    with pytest.raises(SecurityError, match="readable by other users"):
        store.key_info("pii")


def test_hadoop_kms_client_unwraps_through_the_rest_api() -> None:
    keys = {"pii": [os.urandom(16), os.urandom(16)], "secret": [os.urandom(32)]}
    kms = LocalHadoopKms(keys).start()
    try:
        client = kms_from_url(kms.hadoop_uri, user="ann")
        assert isinstance(client, HadoopKms) and client.url == f"http://127.0.0.1:{kms.port}/kms"
        assert client.key_info("secret").bits == 256 and client.key_info("pii").versions == 2
        wrapped = os.urandom(32)
        assert client.decrypt_local_key("secret", 0, wrapped) == unwrap_local_key(keys["secret"][0], wrapped)
        assert "POST /kms/v1/keyversion/secret%400/_eek" in kms.requests
        with pytest.raises(SecurityError, match="refused"):
            client.decrypt_local_key("nope", 0, wrapped)
    finally:
        kms.stop()


def test_a_kms_that_is_down_is_a_transient_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = HadoopKms(f"kms://http@127.0.0.1:{port}/kms", timeout=2)
    with pytest.raises(KmsUnavailableError, match="unreachable") as caught:
        client.key_info("pii")
    assert caught.value.transient
    assert base_url("kms://https@kms1;kms2:9600/kms") == "https://kms1:9600/kms"
    with pytest.raises(SecurityError):
        kms_from_url("s3://bucket/keys")


def test_permitted_columns_need_a_grant_for_every_row() -> None:
    store = PolicyStore(
        grants=[
            Grant("role:analyst", "hr", "people", frozenset({"id", "ssn"})),
            Grant("user:ann", "hr", "people", frozenset({"salary"}), rows=(object(),)),  # type: ignore[arg-type]
            Grant("user:ann", "hr", "other"),
        ],
        roles={"analyst": {"ann"}},
    )
    columns = ["id", "ssn", "salary", "email"]
    assert permitted_columns(store, "ann", "hr.people", columns) == {"id", "ssn"}
    assert permitted_columns(store, "bob", "hr.people", columns) == set()
    with pytest.raises(SecurityError, match="needs its database"):
        permitted_columns(store, "ann", "people", columns)
    assert table_of("/warehouse/hr.db/people/part=1/f.orc") == "hr.people"


def test_encryption_plan_follows_labels_and_avoids_masks_that_crash_orc() -> None:
    labels = {"hr.people.ssn": ["PII"], "hr.people.notes": ["SENSITIVITY=high"], "hr.people.tags": ["PII"]}
    rules = [EncryptionRule.parse("PII:pii:redact"), EncryptionRule.parse("SENSITIVITY=high:secret")]
    plan = plan_encryption(
        "hr.people",
        [("id", "bigint"), ("ssn", "string"), ("notes", "string"), ("tags", "array<string>")],
        labels,
        rules,
    )
    assert plan.orc_options() == {
        "orc.encrypt": "pii:ssn,tags;secret:notes",
        "orc.mask": "nullify:ssn,notes,tags",
    }
    assert len(plan.notes) == 2 and "ssn: redact on string" in plan.notes[0]
    assert plan_encryption("hr.people", [("id", "bigint")], labels).orc_options() == {}
    with pytest.raises(SecurityError, match="LABEL:KEY"):
        EncryptionRule.parse("PII")


def test_present_bits_are_counted_from_byte_runs_and_literals() -> None:
    # byte RLE: header 0..127 = a run of header + 3 copies of the next byte; 128..255 = 256 - header literals
    run_of_five_ff = bytes([2, 0xFF])  # 40 bits set
    two_literals = bytes([256 - 2, 0b1010_0000, 0b1100_0001])
    data = run_of_five_ff + two_literals
    assert set_bits(data, 40, "s") == 40
    assert set_bits(data, 43, "s") == 42  # only the first 3 bits (1, 0, 1) of the literal 0b1010_0000
    assert set_bits(data, 56, "s") == 40 + 2 + 3
    with pytest.raises(SecurityError, match="s holds 56 bits for 57 rows"):
        set_bits(data, 57, "s")


def test_varints_of_one_and_several_bytes_decode_alike() -> None:
    assert read_varint(bytes([0x05, 0x01]), 0) == (5, 1)
    assert read_varint(bytes([0x96, 0x01]), 0) == (150, 2)
    assert decode(encode(Message().with_fields([(1, 127), (2, 128), (3, 0)]))).fields == [
        (1, 0, 127),
        (2, 0, 128),
        (3, 0, 0),
    ]
    with pytest.raises(SecurityError, match="truncated protobuf varint"):
        decode(bytes([0x08, 0x96]))


def test_varint_only_messages_decode_to_a_dict_and_refuse_other_wire_types() -> None:
    stream = encode(Message().with_fields([(1, 6), (2, 300), (3, 1 << 40), (2, 5)]))
    assert varints(stream) == {1: 6, 2: 5, 3: 1 << 40}  # the last value wins, as in protobuf
    with pytest.raises(SecurityError, match="field 2 has wire type 2 where a varint belongs"):
        varints(encode(Message().with_fields([(1, 6), (2, b"x")])))
    with pytest.raises(SecurityError, match="truncated protobuf varint"):
        varints(bytes([0x08, 0x96]))


def test_stream_entries_of_every_shape_parse_as_the_protobuf_decoder_reads_them() -> None:
    shaped = (
        [(1, 6), (2, 3), (3, 20)],
        [(1, 9), (3, 1 << 20)],
        [(1, 1), (2, 200), (3, 7)],
    )  # placeholder: no column
    other = (
        [(3, 9), (1, 1), (2, 4)],
        [(1, 0), (2, 1), (3, 2), (7, 1)],
    )  # fields out of order; an unknown field
    messages = [encode(Message().with_fields(f)) for f in (*shaped, *other)]
    encoding = encode(Message().with_fields([(1, 2)]))
    footer = (
        b"".join(bytes_field(1, m) for m in messages[:4])
        + bytes_field(2, encoding)
        + bytes_field(1, messages[4])
    )
    entries, rest = stream_entries(footer)
    expected = []
    for message in messages:
        fields = varints(message)
        expected.append((fields.get(2, 0), fields.get(1, 0), fields.get(3, 0), bytes_field(1, message)))
    assert entries == expected
    assert rest.fields == [(2, BYTES, encoding)]
    longer = messages[0] + bytes([4 << 3, 1])  # the usual shape, then an unknown field 4: size 8, not 6
    assert stream_entries(bytes_field(1, longer))[0] == [(3, 6, 20, bytes_field(1, longer))]
