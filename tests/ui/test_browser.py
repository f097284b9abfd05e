"""`lineage ui` on the demo warehouse, driven in Debian's headless chromium by Playwright: search -> open -> expand
-> focus a column -> side panel; deep links; impact. Screenshots go to a temporary folder, or to docs/features/img/
(docs/features/ui.md) when `make docs` sets LINEAGE_DOC_SCREENSHOTS, so a test run leaves the tree clean."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chromium import CHROMIUM, HEADLESS_ARGS
from tests.conftest import REPO

ROOT = "ads.ads_app_overview_cn_1d"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is absent (make system-deps)"),
]

# every pair of card rectangles that intersect, and every card whose title is not its name or spills out of it
LAYOUT_PROBLEMS = """() => {
  const cards = [...document.querySelectorAll('#canvas .card')].map((g) => ({
    name: g.dataset.name, box: g.querySelector('.card-box').getBoundingClientRect(),
    title: g.querySelector('.card-name'), }));
  const overlaps = [];
  for (let i = 0; i < cards.length; i++) for (let j = i + 1; j < cards.length; j++) {
    const a = cards[i].box, b = cards[j].box;
    if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
      overlaps.push([cards[i].name, cards[j].name]);
  }
  const badTitles = cards.filter((c) => c.title.textContent !== c.name
    || c.title.getBoundingClientRect().right > c.box.right).map((c) => c.name);
  return {count: cards.length, overlaps, badTitles};
}"""


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: docs/features/img/ for `make docs`, else a temporary folder."""
    chosen = os.environ.get("LINEAGE_DOC_SCREENSHOTS")
    return Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def ui_url(demo_store: Path) -> Iterator[str]:
    """`lineage ui` serving the demo store on a free port; stopped with SIGTERM afterwards (it must exit 0)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    lineage = str(Path(sys.executable).parent / "lineage")  # the console script, as a user starts it
    command = [lineage, "ui", "--graph", f"embedded:{demo_store}", "--port", "0"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    line = process.stderr.readline()
    match = re.search(r"open (http://\S+)", line)
    assert match, (
        f"lineage ui did not start: {line}{process.stderr.read() if process.poll() is not None else ''}"
    )
    yield match.group(1).rstrip("/")
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    assert "stopped" in process.stderr.read()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=HEADLESS_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1600, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert errors == [], f"errors in the page: {errors}"


def _ready(page) -> None:
    page.wait_for_selector("body[data-ready=true]", timeout=60_000)


def _layout_is_clean(page) -> int:
    problems = page.evaluate(LAYOUT_PROBLEMS)
    assert problems["count"] > 0
    assert problems["overlaps"] == [], "cards overlap"
    assert problems["badTitles"] == [], "a card does not show its whole qualified name"
    return problems["count"]


def test_search_open_expand_focus_and_side_panel(ui_url: str, page, images: Path) -> None:
    page.goto(ui_url + "/")
    page.fill("#search", "app_overview")
    page.wait_for_selector(".hit")
    page.locator(".hit", has_text=ROOT).first.click()
    _ready(page)
    assert page.url.startswith(f"{ui_url}/lineage/{ROOT}?")
    shown = _layout_is_clean(page)
    assert page.locator(f'.card[data-name="{ROOT}"] .card-name').text_content() == ROOT
    assert page.locator(".card-head.layer-ods").count() > 0  # two hops up reach the ODS layer
    page.screenshot(path=str(images / "ui-table-level.png"))

    leaf = page.locator(".card", has=page.locator(".card-head.layer-ods")).first
    leaf.locator(".card-expand").click()  # one more hop upstream: the raw files it is loaded from
    _ready(page)
    expanded = _layout_is_clean(page)
    assert expanded > shown and page.locator(".card-head.layer-file").count() > 0
    leaf.locator(".card-collapse").click()
    page.wait_for_function(f"document.querySelectorAll('#canvas .card').length === {shown}")

    page.locator(f'.column[data-column="{ROOT}.active_users"]').click()  # opens its column lineage, focused
    _ready(page)
    _layout_is_clean(page)
    assert page.input_value("#level") == "column"
    assert page.locator("#panel .panel-title").inner_text() == f"{ROOT}.active_users"
    assert page.locator("#panel pre.sql mark").inner_text() == "active_users"
    assert page.locator("#panel tbody tr").count() >= 2  # its process ran twice, newest first
    runs = page.locator("#panel tbody tr td:first-child").all_inner_texts()
    assert runs[:2] == sorted(runs[:2], reverse=True)
    on_path = page.locator(".edge.on-path")
    assert on_path.count() >= 2 and page.locator(".edge:not(.on-path)").count() > 0
    assert "column=active_users" in page.url
    page.screenshot(path=str(images / "ui-column-focus.png"))


def test_an_edge_shows_strength_transform_and_its_process(ui_url: str, page) -> None:
    page.goto(f"{ui_url}/lineage/{ROOT}?dir=up&depth=3&level=column")
    _ready(page)
    edge = page.locator(f'.edge[data-target="{ROOT}.active_users"]').first
    assert "strength: strong" in edge.locator("title").text_content()
    assert "transform: AGGREGATION" in edge.locator("title").text_content()
    assert "AGGREGATION" in page.locator("#legend").inner_text()
    edge.dispatch_event("click")
    page.wait_for_selector("#panel pre.sql mark")
    assert "strong · AGGREGATION" in page.locator("#panel .panel-kind").inner_text()


def test_a_deep_link_opens_the_same_picture(ui_url: str, page) -> None:
    page.goto(f"{ui_url}/lineage/{ROOT}?dir=up&depth=3&column=events")
    _ready(page)
    assert page.input_value("#dir") == "up" and page.input_value("#depth") == "3"
    assert page.input_value("#level") == "column"
    assert page.locator("#panel .panel-title").inner_text() == f"{ROOT}.events"
    assert page.locator(f'.column.on-path[data-column="{ROOT}.events"]').count() == 1
    _layout_is_clean(page)
    page.select_option("#level", "table")  # a control changes the URL and the picture
    _ready(page)
    assert "level=table" in page.url and page.locator(".column.on-path").count() == 0


def test_a_deep_trace_both_ways_has_no_overlaps(ui_url: str, page, images: Path) -> None:
    page.goto(f"{ui_url}/lineage/dwd.dwd_event_toutiao_cn_di?dir=both&depth=6")
    _ready(page)
    assert _layout_is_clean(page) >= 8
    page.screenshot(path=str(images / "ui-both-ways.png"))


def test_pii_columns_carry_their_badge_at_column_level(ui_url: str, page, images: Path) -> None:
    page.goto(f"{ui_url}/lineage/dwd.dwd_user_toutiao_cn_di?dir=both&depth=6&level=column")
    _ready(page)
    _layout_is_clean(page)
    phone = page.locator('.column[data-column="dwd.dwd_user_toutiao_cn_di.phone"] .column-badge')
    assert phone.text_content() == "PII"  # propagated from the ODS column declared PII
    assert page.locator('.column[data-column="ods.ods_user_toutiao_cn_di.phone"] .column-badge').count() == 1
    page.screenshot(path=str(images / "ui-pii-columns.png"))


def test_impact_view_groups_by_layer_and_downloads_csv(ui_url: str, page, images: Path) -> None:
    name = "ods.ods_user_douyin_cn_di"
    page.goto(f"{ui_url}/impact/{name}")
    _ready(page)
    headings = page.locator("#impact h3").all_inner_texts()
    assert headings and headings[0].startswith("dwd") and any(h.startswith("ads") for h in headings)
    with page.expect_download() as download:
        page.click("#impact a.csv")
    text = Path(download.value.path()).read_text()
    assert text.startswith("layer,hops,kind,qualified_name") and "etl_dws" in text
    page.screenshot(path=str(images / "ui-impact.png"))


def test_the_trace_html_file_is_the_same_front_end_offline(demo_graph, page, tmp_path: Path) -> None:
    from lineage_platform.trace import trace

    picture = tmp_path / "trace.html"
    picture.write_text(trace(demo_graph, f"{ROOT}.active_users", direction="up").to_html())
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(picture.as_uri())
    _ready(page)
    assert _layout_is_clean(page) == 5  # the root and the two dwd and two ods tables its users come from
    assert page.locator(f'.column[data-column="{ROOT}.active_users"]').count() == 1
    page.locator(f'.edge[data-target="{ROOT}.active_users"]').first.dispatch_event("click")
    assert "count(DISTINCT user_id)" in page.locator("#panel pre.sql").inner_text()
    assert page.locator("#panel tbody tr").count() == 2  # the process's runs, from the file
    assert [
        url for url in requested if not url.startswith(("file:", "data:"))
    ] == []  # nothing from a network
