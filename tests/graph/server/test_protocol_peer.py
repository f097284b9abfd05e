"""The same client checks against `lineage graph serve` and the reference TinkerPop Gremlin Server.

What a gremlinpython client can observe — results, batching, bindings, status codes of failures, request
options — must not tell the two apart, in each serializer both serve (GraphBinary 1.0, GraphSON 3.0 and 2.0).
(Transactions differ by design: TinkerGraph has none; see tests/graph/test_writer.py. Authentication is tested
on the project's server only: the reference is not configured for it.)
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.serializer import (
    GraphBinarySerializersV1,
    GraphSONSerializersV2d0,
    GraphSONSerializersV3d0,
)
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __


@pytest.fixture(
    params=[GraphBinarySerializersV1, GraphSONSerializersV3d0, GraphSONSerializersV2d0],
    ids=["graphbinary", "graphson3", "graphson2"],
)
def serializer(request: pytest.FixtureRequest) -> object:
    """Every serializer both servers serve: the checks below must pass alike in each."""
    return request.param()


@pytest.fixture
def client(peer_url: str, serializer: object) -> Iterator[Client]:
    c = Client(peer_url, "g", message_serializer=serializer)
    c.submit("g.V().drop()").all().result()
    yield c
    c.close()


def _status(client: Client, script: str, **options: object) -> int:
    with pytest.raises(GremlinServerError) as failure:
        client.submit(script, request_options=options or None).all().result()
    return failure.value.status_code


def test_scripts_with_bindings_give_the_same_results(client: Client) -> None:
    assert client.submit("g.inject(x, y)", {"x": 41, "y": "a"}).all().result() == [41, "a"]
    client.submit("g.addV('person').property('name', n)", {"n": "marko"}).all().result()
    assert client.submit("g.V().has('person', 'name', 'marko').count()").all().result() == [1]


def test_many_results_arrive_whole_and_in_order_across_batches(client: Client) -> None:
    values = list(range(1_000))
    script = "g.inject(" + ", ".join(map(str, values)) + ")"
    assert client.submit(script, request_options={"batchSize": 64}).all().result() == values


def test_bytecode_through_a_remote_connection(peer_url: str, serializer: object) -> None:
    from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection

    connection = DriverRemoteConnection(peer_url, "g", message_serializer=serializer)
    try:
        g = traversal().with_remote(connection)
        g.V().drop().iterate()
        g.add_v("a").property("n", 1).as_("x").add_v("b").property("n", 2).add_e("e").from_("x").iterate()
        assert g.V().has_label("a").out("e").values("n").to_list() == [2]
        assert g.V().group().by(__.label()).by(__.values("n").sum_()).next() == {"a": 1, "b": 2}
        with pytest.raises(GremlinServerError) as failure:
            g.inject(1).fail("stop here").iterate()
        assert failure.value.status_code == 595
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("script", "status"),
    [
        ("g.V(.", 597),  # does not parse
        ("g.inject(1).fail('stop here')", 595),  # the fail() step
        ("g.inject(1).math('_ + ')", 597),  # a bad math() expression
    ],
)
def test_failures_get_the_same_status_codes(client: Client, script: str, status: int) -> None:
    assert _status(client, script) == status


def test_an_evaluation_timeout_in_the_request_gives_598(client: Client) -> None:
    # TinkerPop answers 598 but lets this loop run on in its worker thread: 10^7 rounds (about 1 s there) keep the
    # leftover work short, so the next test's requests do not queue behind it
    script = "g.inject(1).repeat(__.identity()).times(10000000).count()"
    assert _status(client, script, evaluationTimeout=100) == 598


def test_a_session_keeps_its_requests_on_one_graph(peer_url: str, serializer: object) -> None:
    session = Client(peer_url, "g", session=str(uuid.uuid4()), message_serializer=serializer)
    try:
        assert session.submit("g.inject(1, 2).count()").all().result() == [2]
    finally:
        session.close()
