"""Clients that speak GraphSON (gremlin-javascript's and graph-notebook's default, gremlinpython's
GraphSONSerializersV3d0/V2d0) against `lineage graph serve` and the reference TinkerPop Gremlin Server alike."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from gremlin_python.driver.client import Client
from gremlin_python.driver.driver_remote_connection import DriverRemoteConnection
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.driver.serializer import GraphSONSerializersV2d0, GraphSONSerializersV3d0
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import Cardinality, P, T

from lineage_platform.graph.embedded.server import Authenticator, add_user

JS_DIR = Path(__file__).parent / "js"
GRAPHSON_SERIALIZERS = [GraphSONSerializersV3d0, GraphSONSerializersV2d0]
V3 = b"application/vnd.gremlin-v3.0+json"


def _request(op: str, args: dict[str, Any], processor: str = "") -> dict[str, Any]:
    return {"requestId": str(uuid.uuid4()), "op": op, "processor": processor, "args": args}


@pytest.fixture(scope="session")
def gremlin_js(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A node_modules folder holding gremlin-javascript as pinned by js/package-lock.json, installed with
    ``npm ci`` into pytest's cache (once per lock file), or into a temporary folder without the cache."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("gremlin-javascript checks need node and npm on PATH")
    lock = (JS_DIR / "package-lock.json").read_bytes()
    name = f"gremlin-js-{uuid.uuid5(uuid.NAMESPACE_OID, lock.hex()).hex[:12]}"
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir(name) if cache is not None else tmp_path_factory.mktemp(name)
    if not (folder / "node_modules" / "gremlin" / "package.json").is_file():
        for name in ("package.json", "package-lock.json"):
            shutil.copy(JS_DIR / name, folder / name)
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=folder, check=True, capture_output=True, timeout=300
        )
    return folder / "node_modules"


@pytest.mark.parametrize("serializer", GRAPHSON_SERIALIZERS, ids=["graphson3", "graphson2"])
def test_gremlinpython_graphson_gets_the_same_answers(peer_url: str, serializer: type) -> None:
    connection = DriverRemoteConnection(peer_url, "g", message_serializer=serializer())
    client = Client(peer_url, "g", message_serializer=serializer())
    try:
        g = traversal().with_remote(connection)
        g.V().drop().iterate()
        marko = g.add_v("person").property("name", "marko").property(Cardinality.single, "age", 29).next()
        assert marko.label == "person"
        g.add_v("software").property("name", "lop").as_("s").V(marko.id).add_e("created").to("s").iterate()
        assert g.V().has("person", "name", "marko").out("created").values("name").to_list() == ["lop"]
        assert g.V().has("name", P.within("marko", "lop")).count().next() == 2
        assert g.V().has("age", P.between(20, 30)).values("name").to_list() == ["marko"]
        assert g.V().group().by(T.label).by(__.count()).next() == {"person": 1, "software": 1}
        assert g.with_("evaluationTimeout", 5000).V(marko.id).value_map("name").to_list() == [
            {"name": ["marko"]}
        ]
        assert g.inject(2**40, 1.5, "x", [1, 2]).to_list() == [2**40, 1.5, "x", [1, 2]]
        assert client.submit("g.inject(x, y)", {"x": 41, "y": "a"}).all().result() == [41, "a"]
        numbers = list(range(300))
        script = "g.inject(" + ", ".join(map(str, numbers)) + ")"
        assert client.submit(script, request_options={"batchSize": 64}).all().result() == numbers
        with pytest.raises(GremlinServerError) as failure:
            g.inject(1).fail("stop here").iterate()
        assert failure.value.status_code == 595
        with pytest.raises(GremlinServerError) as failure:
            client.submit("g.V().foo_no_such_step()").all().result()
        assert failure.value.status_code == 597
    finally:
        connection.close()
        client.close()


def test_gremlin_javascript_defaults_get_the_same_answers(peer_url: str, gremlin_js: Path) -> None:
    run = subprocess.run(
        ["node", str(JS_DIR / "client_checks.js"), peer_url],
        env={**os.environ, "NODE_PATH": str(gremlin_js)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "addVLabel": "person",
        "created": ["lop"],
        "ages": [29],
        "within": 2,
        "byLabel": {"person": 1, "software": 1},
        "failStatus": 595,
        "script": [41, "a"],
        "batchedInOrder": True,
        "scriptErrorStatus": 597,
        "subgraph": [],
        "matched": [{"a": "marko", "b": "lop"}],
        "tenantNames": ["ana"],
    }


def test_text_frames_are_read_as_graphson3_and_answered_in_text(peer_url: str, raw_client) -> None:
    client = raw_client(peer_url)
    client.send_text(json.dumps(_request("eval", {"gremlin": "g.inject(1, 'two')"})))
    answer = client.read()
    assert answer["status"]["code"] == 200
    assert answer["result"]["data"] == [1, "two"]


def test_graphson2_frame_is_answered_in_graphson2(peer_url: str, raw_client) -> None:
    client = raw_client(peer_url)
    body = json.dumps(_request("eval", {"gremlin": "g.inject(1)"})).encode()
    client.send_frame(b"\x21application/vnd.gremlin-v2.0+json" + body)
    answer = client.read()
    assert answer["status"]["code"] == 200
    assert answer["result"]["data"] == [1]


def test_an_unknown_serializer_is_answered_with_a_graphbinary_error(peer_url: str, raw_client) -> None:
    client = raw_client(peer_url)
    body = json.dumps(_request("eval", {"gremlin": "g.inject(1)"})).encode()
    client.send_frame(b"\x0bapp/unknown" + body)
    answer = client.read()  # GraphBinary: the format Gremlin Server falls back to
    assert answer["status"]["code"] == 499
    client.send("", "eval", {"gremlin": "g.inject(3)"})  # the connection still serves
    assert client.read()["result"]["data"] == [3]


def test_unknown_serializer_error_names_the_served_ones(served_url: str, raw_client) -> None:
    client = raw_client(served_url)
    client.send_frame(b"\x0bapp/unknown" + b"{}")
    message = client.read()["status"]["message"]
    assert "app/unknown is not served" in message and "application/vnd.gremlin-v3.0+json" in message


def test_graphson_sessions_commit_and_roll_back(served_url: str) -> None:
    connection = DriverRemoteConnection(served_url, "g", message_serializer=GraphSONSerializersV3d0())
    try:
        g = traversal().with_remote(connection)
        tx = g.tx()
        gtx = tx.begin()
        gtx.add_v("table").property("name", "kept").iterate()
        tx.commit()
        tx = g.tx()
        gtx = tx.begin()
        gtx.add_v("table").property("name", "dropped").iterate()
        assert gtx.V().has("name", "dropped").count().next() == 1
        tx.rollback()
        assert g.V().values("name").to_list() == ["kept"]
    finally:
        connection.close()


def test_graphson_clients_log_in_with_sasl_plain(serve_graph, embedded_graph, tmp_path: Path) -> None:
    credentials = tmp_path / "creds.txt"
    add_user(credentials, "spark", "s3cret")
    server = serve_graph(embedded_graph, Authenticator.from_file(credentials))
    for serializer in GRAPHSON_SERIALIZERS:
        client = Client(server.url, "g", message_serializer=serializer(), username="spark", password="s3cret")
        try:
            assert client.submit("g.inject(7)").all().result() == [7]
        finally:
            client.close()
    intruder = Client(
        server.url, "g", message_serializer=GraphSONSerializersV3d0(), username="spark", password="x"
    )
    try:
        with pytest.raises(GremlinServerError, match="401: Username and/or password are incorrect"):
            intruder.submit("g.inject(1)").all().result()
    finally:
        intruder.close()


def test_graphson_before_the_login_is_held_to_the_login_frame_cap(
    serve_graph, embedded_graph, raw_client, tmp_path: Path
) -> None:
    credentials = tmp_path / "creds.txt"
    add_user(credentials, "spark", "s3cret")
    server = serve_graph(embedded_graph, Authenticator.from_file(credentials))
    client = raw_client(server.url)
    client.send_text(json.dumps(_request("eval", {"gremlin": "g.inject('" + "x" * 100_000 + "')"})))
    with pytest.raises(RuntimeError, match="closed"):
        client.read()
    assert client.close_code == 1009
    client = raw_client(server.url)  # a small one gets the SASL challenge, answered in GraphSON
    client.send_frame(b"\x21" + V3 + json.dumps(_request("eval", {"gremlin": "g.inject(1)"})).encode())
    assert client.read()["status"]["code"] == 407
    sasl = base64.b64encode(b"\x00spark\x00s3cret").decode()
    client.send_frame(b"\x21" + V3 + json.dumps(_request("authentication", {"sasl": sasl})).encode())
    assert client.read()["result"]["data"] == [1]


def test_deeply_nested_or_unknown_graphson_is_refused_and_the_connection_serves_on(
    served_url: str, raw_client
) -> None:
    client = raw_client(served_url)
    deep = "[" * 100_000 + "]" * 100_000
    nested = json.dumps(_request("eval", {"gremlin": "PLACE"})).replace('"PLACE"', deep)
    client.send_frame(b"\x21" + V3 + nested.encode())
    assert client.read()["status"]["code"] == 498
    unknown = _request(
        "eval", {"gremlin": "g.inject(x)", "bindings": {"x": {"@type": "g:Nope", "@value": 1}}}
    )
    client.send_frame(b"\x21" + V3 + json.dumps(unknown).encode())
    answer = client.read()
    assert answer["status"]["code"] == 497 and "g:Nope" in answer["status"]["message"]
    client.send_text(json.dumps(_request("eval", {"gremlin": "g.inject(5)"})))
    assert client.read()["result"]["data"] == [5]
