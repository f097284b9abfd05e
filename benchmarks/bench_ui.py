"""`lineage ui` speed: time to first picture for a ~100-card and a ~2,000-card trace, and one expand's API latency.

A synthetic layered warehouse (each table reads two tables of the layer below, at column level) is written through
the product's SQL extractor and writer into an in-process graph; the explorer serves it and Debian's headless
chromium (Playwright) opens a deep link to the trace of its last table. Figures:

- first picture: page open -> cards drawn (the page sets data-ready), and the parts of it measured in the page:
  the lineage API call and ELK's layout + SVG drawing; the ratio is first picture / API call (the front end's cost
  on top of the trace it shows).
- responsiveness: the longest task the page's main thread ran meanwhile (ELK itself runs in a Web Worker).
- expand: GET /api/expand/{card} over HTTP (one hop), median and p95 of 20, against the full trace's API call.

    .venv/bin/python benchmarks/bench_ui.py               # both sizes, about a minute
    .venv/bin/python benchmarks/bench_ui.py --big-width 10   # the big trace 20 x 10 tables (the smoke test's size)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lineage_platform.errors import ConfigError
from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.sql import extract_lineage
from lineage_platform.ui.assets import check_assets
from lineage_platform.ui.server import start

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
COLUMNS = ("id", "amount", "note")
# the page's longest main-thread task (the browser's Long Tasks API): how long the page can stop answering input
LONG_TASKS = """window.longestTaskMs = 0;
new PerformanceObserver((list) => { for (const task of list.getEntries())
  window.longestTaskMs = Math.max(window.longestTaskMs, task.duration); }).observe({ type: "longtask", buffered: true });"""


def write_layers(g, prefix: str, layers: int, width: int) -> str:
    """Tables ``prefix.l<layer>_<i>``, each filled from tables i and i+1 of the layer below; one root table reads
    the whole top layer. Returns the root's name (its upstream trace holds ``layers * width + 1`` cards)."""
    schema = {prefix: {f"l{layer}_{i}": dict.fromkeys(COLUMNS, "string")
                       for layer in range(layers) for i in range(width)}}  # fmt: skip
    schema[prefix]["root"] = dict.fromkeys(COLUMNS, "string")
    select = ", ".join(COLUMNS)
    statements = []
    for layer in range(1, layers):
        for i in range(width):
            a, b = f"{prefix}.l{layer - 1}_{i}", f"{prefix}.l{layer - 1}_{(i + 1) % width}"
            statements.append(
                f"INSERT OVERWRITE TABLE {prefix}.l{layer}_{i} SELECT {select} FROM {a} "
                f"UNION ALL SELECT {select} FROM {b} WHERE amount > 0"
            )
    union = " UNION ALL ".join(f"SELECT {select} FROM {prefix}.l{layers - 1}_{i}" for i in range(width))
    statements.append(f"INSERT OVERWRITE TABLE {prefix}.root {union}")
    writer = LineageWriter(g)
    for sql in statements:
        writer.write(extract_lineage(sql, schema=schema))
    return f"{prefix}.root"


def serve_in_background(g) -> str:
    """Start the explorer on a free port in a daemon thread; its base URL."""
    loop = asyncio.new_event_loop()
    started: list[str] = []
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        _, url = loop.run_until_complete(start(g, "127.0.0.1", 0))
        started.append(url.rstrip("/"))
        ready.set()
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    ready.wait(30)
    return started[0]


def first_picture(browser, url: str) -> dict[str, float]:
    """Open the deep link in a fresh page; wall time until the cards are drawn, and the in-page figures."""
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    context.add_init_script(LONG_TASKS)
    page = context.new_page()
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=600_000)
    wall = time.perf_counter() - started
    cards = page.locator("#canvas .card").count()
    in_page = page.evaluate(
        "[window.lineageFirstPictureMs, window.lineageLastLayoutMs, window.longestTaskMs]"
    )
    context.close()
    return {
        "wall": wall,
        "cards": cards,
        "page_ms": in_page[0],
        "layout_ms": in_page[1],
        "longest_ms": in_page[2],
    }


def api_seconds(url: str, repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        with urllib.request.urlopen(url) as response:
            response.read()
        samples.append(time.perf_counter() - started)
    return samples


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--big-width", type=int, default=100, help="tables per layer of the big trace (>= 6)")
    args = parser.parse_args()

    try:
        check_assets()
    except ConfigError as error:
        sys.exit(str(error))
    g = connect("memory:")
    if args.big_width < 6:
        parser.error("--big-width must be at least 6: the expand is timed on table big.l10_5")
    cards = 20 * args.big_width
    big = f"~{cards:,} cards"
    sizes = {"~100 cards": ("small", 9, 11), big: ("big", 20, args.big_width)}
    roots = {}
    for label, (prefix, layers, width) in sizes.items():
        started = time.perf_counter()
        roots[label] = write_layers(g, prefix, layers, width)
        print(
            f"wrote the {label} warehouse ({layers * width + 1} tables) in {time.perf_counter() - started:.1f} s"
        )
    base = serve_in_background(g)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for label, root in roots.items():
            link = f"{base}/lineage/{root}?dir=up&depth=50"
            api = statistics.median(api_seconds(f"{base}/api/lineage/{root}?dir=up&depth=50", 3))
            first_picture(browser, link)  # warm the page cache and the JIT once
            picture = first_picture(browser, link)
            print(
                f"time to first picture, {label} ({picture['cards']} cards drawn): {picture['wall']:.2f} s "
                f"(lineage API {api:.2f} s, ELK layout + drawing {picture['layout_ms'] / 1000:.2f} s); "
                f"ratio picture/API {picture['wall'] / api:.1f}x; longest main-thread task "
                f"{picture['longest_ms'] / 1000:.2f} s"
            )
        browser.close()
    leaf = "big.l10_5"
    with urllib.request.urlopen(f"{base}/api/expand/{leaf}?dir=up&level=table") as response:
        assert len(json.load(response)["cards"]) == 3, "one hop up is the card and the two tables it reads"
    expand = sorted(api_seconds(f"{base}/api/expand/{leaf}?dir=up&level=table", 20))
    full = statistics.median(api_seconds(f"{base}/api/lineage/{roots[big]}?dir=up&depth=50", 3))
    print(
        f"API latency of one expand ({leaf}, one hop up): median {statistics.median(expand) * 1000:.0f} ms, "
        f"p95 {expand[int(len(expand) * 0.95) - 1] * 1000:.0f} ms; the full {cards:,}-card trace takes "
        f"{full * 1000:.0f} ms ({full / statistics.median(expand):.0f}x one expand)"
    )


if __name__ == "__main__":
    main()
