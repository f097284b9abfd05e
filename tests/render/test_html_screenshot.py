"""The HTML picture (`lineage ui`'s front end, inlined) renders in headless Chromium with its cards visible, without
any network."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from PIL import Image

from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.sql import extract_lineage
from lineage_platform.trace import trace
from tests.chromium import CHROMIUM, HEADLESS_ARGS

PAPER = Path(__file__).parent.parent / "fixtures" / "dag_provenance_paper.sql"
ROOT_BORDER, CARD_HEAD = "#f9a825", "#e3f2fd"  # lineage_platform/ui/static/style.css: .card.root, .card-head


def _hex(color: str) -> tuple[int, int, int]:
    return tuple(int(color[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def _pixels_near(image: Image.Image, color: tuple[int, int, int], tolerance: int = 12) -> int:
    rgb = image.convert("RGB").tobytes()
    return sum(
        1
        for pixel in zip(rgb[0::3], rgb[1::3], rgb[2::3])
        if all(abs(channel - want) <= tolerance for channel, want in zip(pixel, color))
    )


@pytest.mark.slow
@pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (make system-deps installs it)"
)
def test_screenshot_shows_the_nodes(tmp_path: Path) -> None:
    g = connect("memory:")
    LineageWriter(g).write(extract_lineage(PAPER.read_text()))
    page = tmp_path / "lineage.html"
    page.write_text(trace(g, "default.avgsalary", direction="both").to_html())
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            CHROMIUM,
            *HEADLESS_ARGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,900",
            "--virtual-time-budget=5000",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    image = Image.open(shot)
    assert image.size == (1400, 900)
    # the root (highlighted border) and the table cards are drawn: enough pixels of their colours
    assert _pixels_near(image, _hex(ROOT_BORDER), tolerance=20) > 300, (
        "the highlighted root card is not visible"
    )
    assert _pixels_near(image, _hex(CARD_HEAD), tolerance=4) > 2000, "the table cards are not visible"
