"""The explorer's JSON API over real HTTP on the demo warehouse (no browser)."""

from __future__ import annotations

import asyncio
import csv
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from lineage_platform.cli import cli
from lineage_platform.errors import ConfigError
from lineage_platform.ui.api import expression_span
from lineage_platform.ui.assets import check_assets
from lineage_platform.ui.server import create_app
from tests.conftest import REPO

ROOT = "ads.ads_app_overview_cn_1d"


def _get(g: Any, *paths: str) -> list[tuple[int, Any]]:
    """GET each path from a real server over ``g``; (status, JSON or text) per path."""

    async def run() -> list[tuple[int, Any]]:
        async with TestClient(TestServer(create_app(g))) as client:
            answers = []
            for path in paths:
                response = await client.get(path)
                is_json = response.content_type == "application/json"
                answers.append((response.status, await (response.json() if is_json else response.text())))
            return answers

    return asyncio.run(run())


def test_search_finds_datasets_columns_jobs_and_users(demo_graph) -> None:
    [(status, body)] = _get(demo_graph, "/api/search?q=OVERVIEW")
    assert status == 200
    kinds = {hit["kind"] for hit in body["hits"]}
    assert {"table", "column", "job"} <= kinds
    assert body["hits"][0] == {"kind": "table", "name": ROOT, "open": ROOT}  # datasets before columns
    [(_, users)] = _get(demo_graph, "/api/search?q=etl_ad")
    assert users["hits"] == [{"kind": "user", "name": "etl_ads", "open": users["hits"][0]["open"]}]
    assert users["hits"][0]["open"].startswith("ads.")  # a user opens a dataset its runs wrote


def test_table_lineage_is_cards_with_columns_labels_and_edges(demo_graph) -> None:
    [(status, view)] = _get(demo_graph, f"/api/lineage/{ROOT}?dir=up&depth=3")
    assert status == 200 and view["level"] == "table"
    cards = {card["name"]: card for card in view["cards"]}
    assert cards[ROOT]["layer"] == "ads"
    assert {"active_users", "events"} <= {c["name"] for c in cards[ROOT]["columns"]}
    assert "APP=douyin" in cards["ods.ods_event_douyin_cn_di"]["labels"]
    assert {card["layer"] for card in view["cards"]} >= {"ods", "dwd", "ads"}
    for edge in view["edges"]:
        assert edge["source"] in cards and edge["target"] in cards
        assert edge["operation"] and edge["process"].startswith("process:")


def test_column_lineage_edges_join_column_rows_with_strength_and_transform(demo_graph) -> None:
    [(_, view)] = _get(demo_graph, f"/api/lineage/{ROOT}.active_users?dir=up&depth=3")
    assert view["level"] == "column" and view["root_card"] == ROOT
    rows = {f"{card['name']}.{column['name']}" for card in view["cards"] for column in card["columns"]}
    into_root = [e for e in view["edges"] if e["target"] == f"{ROOT}.active_users"]
    assert {e["transform"] for e in into_root} == {"AGGREGATION"}
    assert {e["strength"] for e in view["edges"]} == {"strong"}
    assert all(e["source"] in rows and e["target"] in rows for e in view["edges"])
    assert "dwd.dwd_event_douyin_cn_di.user_id" in rows


def test_expand_loads_one_hop_only(demo_graph) -> None:
    [(_, deep), (_, one)] = _get(
        demo_graph, f"/api/lineage/{ROOT}?dir=up&depth=5", f"/api/expand/{ROOT}?dir=up&level=table"
    )
    assert {abs(card["depth"]) for card in one["cards"]} == {0, 1}
    assert len(one["cards"]) < len(deep["cards"])


def test_node_panel_of_a_column_shows_sql_expression_runs_labels_and_resource(demo_graph) -> None:
    [(status, details)] = _get(demo_graph, "/api/node/dws.dws_user_event_toutiao_cn_30d.event_cnt")
    assert status == 200 and details["kind"] == "column"
    [process] = details["processes"]
    span = process["highlight"]
    assert process["sql"][span["start"] : span["end"]] == "count(1) AS event_cnt"
    times = [run["startTime"] for run in process["runs"]]
    assert len(times) == 2 and times == sorted(times, reverse=True)
    assert {"user", "job", "host", "status"} <= process["runs"][0].keys()
    assert details["resource"]["blocks"][0]["columns"] == ["event_cnt"]
    [(_, phone)] = _get(demo_graph, "/api/node/dwd.dwd_user_douyin_cn_di.phone")
    [pii] = [label for label in phone["labels"] if label["label"] == "PII"]
    assert [step["name"] for step in pii["path"]] == [
        "dwd.dwd_user_douyin_cn_di.phone",
        "ods.ods_user_douyin_cn_di.phone",
    ]
    assert "declared" in pii["path"][-1]["text"]


def test_node_panel_of_a_table_has_ttl_advice_and_a_process_its_sql(demo_graph) -> None:
    [(_, table)] = _get(demo_graph, "/api/node/dwd.dwd_event_toutiao_cn_di")
    assert table["ttl"]["table"] == "dwd.dwd_event_toutiao_cn_di"
    assert table["ttl"]["recommended_ttl_days"] == 31  # read back 30 partitions by a DWS job, plus 1 day
    process = table["processes"][0]["name"]
    [(_, details)] = _get(demo_graph, f"/api/node/{process}?column=event_id")
    assert details["kind"] == "process" and details["labels"] == [] and details["resource"] is None
    span = details["processes"][0]["highlight"]
    assert details["processes"][0]["sql"][span["start"] : span["end"]] == "event_id"


def test_impact_groups_downstream_by_layer_and_exports_csv(demo_graph) -> None:
    name = "ods.ods_user_douyin_cn_di"
    [(_, report), (status, text)] = _get(demo_graph, f"/api/impact/{name}", f"/api/impact/{name}.csv")
    layers = [group["layer"] for group in report["layers"]]
    assert layers[0] == "dwd" and "ads" in layers
    rows = list(csv.DictReader(io.StringIO(text)))
    assert status == 200 and len(rows) == len(report["impacted"])
    assert {row["layer"] for row in rows} == set(layers)
    assert any("etl_dws" in row["users"] for row in rows)


def test_bad_requests_answer_one_json_error_with_a_hint(demo_graph) -> None:
    answers = _get(
        demo_graph,
        "/api/lineage/ads.no_such_table",
        f"/api/lineage/{ROOT}?dir=sideways",
        f"/api/lineage/{ROOT}?depth=0",
        "/api/search?q=",
    )
    (missing, unknown), (bad_dir, direction), (bad_depth, depth), (_, empty) = answers
    assert missing == 404 and "no table or column" in unknown["error"] and unknown["hint"]
    assert bad_dir == 400 and direction["hint"] == "use dir=up or down or both"
    assert bad_depth == 400 and "1 to 50" in depth["hint"]
    assert empty == {"hits": []}


def test_pages_are_served_for_deep_links(demo_graph) -> None:
    [(status, page), (_, deep), (script, _)] = _get(
        demo_graph, "/", f"/lineage/{ROOT}?dir=up&depth=3&column=events", "/static/app.js"
    )
    assert status == 200 and 'src="/static/app.js"' in page and page == deep and script == 200


def test_expression_span_takes_the_outer_select_projection() -> None:
    sql = "INSERT INTO db.o SELECT a, f(b, c) AS x FROM (SELECT a, b, c FROM db.t) s"
    span = expression_span(sql, "x")
    assert span and sql[span["start"] : span["end"]] == "f(b, c) AS x"
    assert expression_span(sql, "missing") is None
    assert expression_span("not sql at all (", "x") is None


def test_a_missing_bundle_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="make ui-assets"):
        check_assets(tmp_path)


def test_cli_refuses_a_bad_port_in_one_line() -> None:
    result = CliRunner().invoke(cli, ["ui", "--port", "70000"])
    assert result.exit_code == 2 and "70000" in result.output


def test_an_unreachable_graph_stops_lineage_ui_with_one_line() -> None:
    lineage = str(Path(sys.executable).parent / "lineage")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [lineage, "ui", "--graph", "ws://127.0.0.1:1/gremlin", "--port", "0"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("Error: cannot reach the graph server at ws://127.0.0.1:1/gremlin")
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_file_dataset_with_slashes_in_its_name_opens_and_expands(demo_graph) -> None:
    [(_, view)] = _get(demo_graph, "/api/lineage/ods.ods_user_douyin_cn_di?dir=up&depth=1")
    [raw] = [card["name"] for card in view["cards"] if card["kind"] == "file"]
    assert raw.startswith("/data/raw/")
    quoted = raw.replace("/", "%2F")
    [(status, expanded), (page, _)] = _get(demo_graph, f"/api/expand/{quoted}?dir=down", f"/lineage/{quoted}")
    assert status == 200 and page == 200
    assert "ods.ods_user_douyin_cn_di" in {card["name"] for card in expanded["cards"]}
