"""Unit tests of the server's parts: GraphBinary envelope, credentials, sessions, bind safety."""

from __future__ import annotations

import base64
import stat
import uuid
from pathlib import Path

import pytest
from gremlin_python.driver.request import RequestMessage as ClientRequest
from gremlin_python.driver.serializer import GraphBinarySerializersV1
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.strategies import OptionsStrategy
from gremlin_python.process.traversal import Direction, P, T, TextP, Traverser
from gremlin_python.statics import long
from gremlin_python.structure.graph import Edge, Property, Vertex, VertexProperty
from gremlin_python.structure.io.graphbinaryV1 import (
    TIO,
    DirectionIO,
    GraphBinaryWriter,
    IntIO,
    ListIO,
    LongIO,
    MapIO,
    StringIO,
)

from lineage_platform.errors import (
    ConfigError,
    GremlinSyntaxError,
    StoreLockedError,
    TraversalError,
    TraversalInterrupted,
)
from lineage_platform.graph.embedded.server import ServerSettings, add_user, load_authenticator
from lineage_platform.graph.embedded.server.auth import Authenticator, hash_password, load_credentials
from lineage_platform.graph.embedded.server.graphbinary import GraphBinaryCodec, UnserializableResult
from lineage_platform.graph.embedded.server.messages import (
    MalformedRequest,
    ResponseMessage,
    Status,
    split_mime_header,
)
from lineage_platform.graph.embedded.server.operations import RequestOptions, status_for
from lineage_platform.graph.embedded.server.server import is_loopback
from lineage_platform.graph.embedded.server.sessions import SessionError, SessionRegistry

CLIENT = GraphBinarySerializersV1()


def _client_frame(bytecode, **extra_args) -> bytes:
    args = {"gremlin": bytecode, "aliases": {"g": "g"}, **extra_args}
    return CLIENT.serialize_message(uuid.uuid4(), ClientRequest("traversal", "bytecode", args))


def _decode(frame: bytes):
    mime, body = split_mime_header(frame)
    assert mime == "application/vnd.graphbinary-v1.0"
    return GraphBinaryCodec().decode_request(body)


def _options(**configuration) -> OptionsStrategy:
    return OptionsStrategy(configuration)


# -- GraphBinary ---------------------------------------------------------------------------------------


def test_request_with_predicates_and_options_round_trips_from_gremlinpython() -> None:
    source = __.V()
    source.bytecode.source_instructions.append(["withStrategies", _options(batchSize=2)])
    source.has("age", P.gt(30)).has("name", TextP.starting_with("ma")).has("id", P.within(1, 2)).where(
        P.between(1, 5).and_(P.neq(3))
    )
    request = _decode(_client_frame(source.bytecode, batchSize=2))
    steps = request.args["gremlin"].step_instructions
    assert steps[0] == ["V"]
    assert (steps[1][2].operator, steps[1][2].value) == ("gt", 30)
    assert isinstance(steps[2][2], TextP) and steps[2][2].operator == "startingWith"
    assert steps[3][2].operator == "within" and steps[3][2].value == [1, 2]
    combined = steps[4][1]
    assert combined.operator == "and" and combined.value.operator == "between" and combined.other.value == 3
    strategy = request.args["gremlin"].source_instructions[0][1]
    assert strategy.strategy_name == "OptionsStrategy" and strategy.configuration == {"batchSize": 2}
    assert request.args["batchSize"] == 2 and request.op == "bytecode" and request.processor == "traversal"


@pytest.mark.parametrize(
    "frame",
    [b"", b"\x05abc", b"\x20" + b"application/vnd.graphbinary-v1.0" + b"\x81" + b"\x00" * 7],
)
def test_unreadable_frames_are_malformed(frame: bytes) -> None:
    with pytest.raises(MalformedRequest):
        _decode(frame)


def test_truncated_args_keep_the_request_id_for_the_error_reply() -> None:
    frame = _client_frame(__.V().bytecode)
    with pytest.raises(MalformedRequest) as caught:
        _decode(frame[:-6])
    assert caught.value.request_id is not None
    assert caught.value.status == Status.REQUEST_ERROR_SERIALIZATION


def test_response_carries_element_properties_unless_tokens() -> None:
    vertex = Vertex(
        long(2**40), "table", [VertexProperty(7, "name", "db.t", None, [Property("since", 3, None)])]
    )
    other = Vertex(9, "column")
    edge = Edge(11, vertex, "hasColumn", other, [Property("weight", 0.5, None)])
    response = ResponseMessage(uuid.uuid4(), Status.SUCCESS, data=[Traverser(vertex, 2), Traverser(edge, 1)])
    codec = GraphBinaryCodec()

    message = CLIENT.deserialize_message(codec.encode_response(response))
    read_vertex, read_edge = (t.object for t in message["result"]["data"])
    assert message["status"]["code"] == 200 and message["result"]["data"][0].bulk == 2
    assert read_vertex.id == 2**40
    (name,) = read_vertex.properties
    assert (name.label, name.value, name.properties[0].key, name.properties[0].value) == (
        "name",
        "db.t",
        "since",
        3,
    )
    assert (read_edge.outV.id, read_edge.inV.id, read_edge.properties[0].value) == (2**40, 9, 0.5)

    tokens = CLIENT.deserialize_message(codec.encode_response(response, materialize=False))
    assert tokens["result"]["data"][0].object.properties == []


def test_integers_are_widened_to_fit_and_tuples_and_frozensets_are_written() -> None:
    response = ResponseMessage(uuid.uuid4(), Status.SUCCESS, data=[1, 2**40, 2**70, (1, "a"), frozenset({2})])
    message = CLIENT.deserialize_message(GraphBinaryCodec().encode_response(response))
    assert message["result"]["data"] == [1, 2**40, 2**70, [1, "a"], {2}]


def test_common_values_are_written_byte_for_byte_as_gremlinpython_writes_them() -> None:
    """The codec writes str, int, list and dict inline (the bulk of every answer); the bytes are those of
    gremlinpython's own serializers."""
    stock = GraphBinaryWriter()
    nested = {"qualifiedName": "db.t", "n": [1, -2, "ü✓"], "m": {"k": [{"deep": None}, True, 1.5]}}
    for value, serializer in [
        ("", StringIO),
        ("数据 ✓", StringIO),
        (-(2**31), IntIO),
        (2**31 - 1, IntIO),
        (2**31, LongIO),
        (-(2**63), LongIO),
        ([1, "a", None, [2]], ListIO),
        (nested, MapIO),
        (T.id, TIO),
        (Direction.OUT, DirectionIO),
    ]:
        expected = serializer.dictify(value, stock, bytearray())
        response = ResponseMessage(uuid.uuid4(), Status.SUCCESS, data=value)
        codec = GraphBinaryCodec()
        for _ in range(2):  # enum members are written once, then copied
            assert codec.encode_response(response).endswith(bytes(expected)), value


def test_values_without_a_wire_type_are_refused() -> None:
    response = ResponseMessage(uuid.uuid4(), Status.SUCCESS, data=[object()])
    with pytest.raises(UnserializableResult, match="object"):
        GraphBinaryCodec().encode_response(response)


def test_error_and_no_content_frames_match_the_protocol() -> None:
    request_id = uuid.uuid4()
    codec = GraphBinaryCodec()
    no_content = codec.encode_response(ResponseMessage(request_id, Status.NO_CONTENT))
    assert no_content == b"\x81\x00" + request_id.bytes + b"\x00\x00\x00\xcc\x01" + b"\x00" * 8 + b"\xfe\x01"
    error = CLIENT.deserialize_message(
        codec.encode_response(ResponseMessage(None, Status.SERVER_ERROR, "boom"))
    )
    assert error["status"] == {"code": 500, "message": "boom", "attributes": {}}


def test_request_options_validate_their_values() -> None:
    options = RequestOptions.from_args({"evaluationTimeout": 1500}, batch_size=64, timeout=30.0)
    assert (options.batch_size, options.timeout, options.materialize) == (64, 1.5, True)
    # a request may shorten the server's limit, never lengthen or remove it
    for millis, server, expected in (
        (0, 30.0, 30.0),
        (60_000, 30.0, 30.0),
        (0, None, None),
        (1500, None, 1.5),
    ):
        options = RequestOptions.from_args({"evaluationTimeout": millis}, batch_size=64, timeout=server)
        assert options.timeout == expected
    for bad in (
        {"batchSize": 0},
        {"batchSize": "2"},
        {"evaluationTimeout": -1},
        {"materializeProperties": "x"},
    ):
        with pytest.raises(Exception, match="must be"):
            RequestOptions.from_args(bad, batch_size=64, timeout=30.0)


def test_engine_failures_map_to_gremlin_server_statuses() -> None:
    assert status_for(StoreLockedError("held by pid 7"), script=False) == Status.SERVER_ERROR_TEMPORARY
    assert status_for(TraversalError("bad value"), script=False) == Status.SERVER_ERROR
    assert status_for(TraversalError("bad value"), script=True) == Status.SERVER_ERROR_EVALUATION
    assert status_for(TraversalInterrupted("past its timeout"), script=True) == Status.SERVER_ERROR_TIMEOUT
    assert (
        status_for(GremlinSyntaxError("no", line=1, column=2), script=False) == Status.SERVER_ERROR_EVALUATION
    )


# -- credentials ---------------------------------------------------------------------------------------


def _sasl(user: str, password: str) -> str:
    return base64.b64encode(f"\0{user}\0{password}".encode()).decode()


def test_add_user_writes_a_private_file_of_hashes_only(tmp_path: Path) -> None:
    path = tmp_path / "creds.txt"
    add_user(path, "spark", "s3cret")
    add_user(path, "analyst", "pw")
    add_user(path, "spark", "rotated")
    text = path.read_text()
    assert "s3cret" not in text and "rotated" not in text
    assert sorted(load_credentials(path)) == ["analyst", "spark"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    auth = Authenticator.from_file(path)
    assert auth.authenticate(_sasl("spark", "rotated")) == "spark"
    assert auth.authenticate(_sasl("spark", "s3cret")) is None
    assert auth.authenticate(_sasl("nobody", "pw")) is None
    assert auth.authenticate("not base64!") is None


def test_bad_credentials_files_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "creds.txt"
    path.write_text(f"# comment\nok:{hash_password('x')}\nbroken:plaintext\n")
    with pytest.raises(ConfigError, match="line 3"):
        load_credentials(path)
    with pytest.raises(ConfigError, match="invalid user name"):
        add_user(tmp_path / "other.txt", "a:b", "pw")
    with pytest.raises(ConfigError, match="cannot read"):
        Authenticator.from_file(tmp_path / "missing.txt")


def test_non_loopback_bind_needs_credentials(tmp_path: Path) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    assert load_authenticator(ServerSettings(host="127.0.0.1")) is None
    with pytest.raises(
        ConfigError, match=r"refusing to serve the graph on 0\.0\.0\.0 without credentials"
    ) as caught:
        load_authenticator(ServerSettings(host="0.0.0.0"))
    assert "--credentials" in caught.value.hint
    path = tmp_path / "creds.txt"
    add_user(path, "spark", "pw")
    assert load_authenticator(ServerSettings(host="0.0.0.0", credentials=path)) is not None


# -- sessions ------------------------------------------------------------------------------------------


class _Tx:
    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.is_open = True

    def commit(self) -> None:
        self.is_open = False
        self.log.append("commit")

    def rollback(self) -> None:
        self.is_open = False
        self.log.append("rollback")


class _Graph:
    def __init__(self) -> None:
        self.log: list[str] = []

    def begin(self) -> _Tx:
        self.log.append("begin")
        return _Tx(self.log)

    def execute(self, bytecode, tx=None, cancellation=None):
        if tx is None:
            raise TraversalError("expected a transaction")
        return []


def test_sessions_belong_to_their_connection_and_end_with_a_rollback() -> None:
    graph = _Graph()
    registry = SessionRegistry(graph, max_sessions=2, idle_timeout=60)
    session = registry.acquire("s1", owner=1)
    session.submit(session.execute, __.V().bytecode).result()
    assert registry.acquire("s1", owner=1) is session
    with pytest.raises(SessionError, match="another connection"):
        registry.acquire("s1", owner=2)
    registry.acquire("s2", owner=2)
    with pytest.raises(SessionError, match="too many open sessions"):
        registry.acquire("s3", owner=3)

    for done in registry.end_owned_by(1, "its client disconnected"):
        done.result()
    assert graph.log == ["begin", "rollback"]
    with pytest.raises(SessionError, match="its client disconnected"):
        registry.acquire("s1", owner=1)


def test_idle_sessions_expire_but_busy_ones_do_not() -> None:
    registry = SessionRegistry(_Graph(), max_sessions=8, idle_timeout=5)
    idle = registry.acquire("idle", owner=1)
    busy = registry.acquire("busy", owner=1)
    busy.active_requests = 1
    assert registry.end_idle(now=idle.last_used + 6) == ["idle"]
    assert len(registry) == 1
    with pytest.raises(SessionError, match="idle for more than 5 s"):
        registry.acquire("idle", owner=1)


def test_closing_by_the_client_allows_the_id_again() -> None:
    registry = SessionRegistry(_Graph(), max_sessions=8, idle_timeout=5)
    registry.acquire("s", owner=1)
    with pytest.raises(SessionError):
        registry.close("s", owner=2)
    registry.close("s", owner=1).result()
    assert registry.close("s", owner=1) is None
    assert registry.acquire("s", owner=1).owner == 1
