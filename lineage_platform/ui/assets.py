"""The explorer's front-end files: where they are, whether the npm-built bundle is there, and one self-contained
page with all of them inlined (what ``trace --format html`` writes)."""

from __future__ import annotations

import base64
import json
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from lineage_platform.errors import ConfigError

STATIC = Path(str(resources.files("lineage_platform.ui") / "static"))
VENDOR_FILES = ("vendor/elk.bundled.js", "vendor/elk-worker.min.js")
BUILD_HINT = "build the front-end bundle once: make ui-assets (needs npm), or make setup"
MODULES = ("canvas.js", "panel.js")  # imported by app.js as "lineage/<name>"


def check_assets(static: Path = STATIC) -> None:
    """Raise a ConfigError saying how to build the bundle when a vendored front-end file is missing."""
    missing = [name for name in VENDOR_FILES if not (static / name).is_file()]
    if missing:
        raise ConfigError(
            f"the lineage UI front-end bundle is missing ({', '.join(missing)})", hint=BUILD_HINT
        )


def _script(text: str) -> str:
    """Script text made safe to inline in a <script> element."""
    return text.replace("</script", "<\\/script")


def offline_page(title: str, view: dict[str, Any], processes: dict[str, Any], static: Path = STATIC) -> str:
    """One HTML page drawing ``view`` with the app's own front end, inlined (no server, no network needed): the
    modules come from an import map of data: URLs, ELK runs in the page."""
    check_assets(static)
    imports = {
        f"lineage/{name}": "data:text/javascript;base64,"
        + base64.b64encode((static / name).read_bytes()).decode("ascii")
        for name in MODULES
    }
    data = json.dumps({"view": view, "processes": processes}, default=str).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lineage of {escape(title)}</title>
<style>{(static / "style.css").read_text(encoding="utf-8")}</style>
<script type="importmap">{json.dumps({"imports": imports})}</script>
<script>{_script((static / "vendor/elk.bundled.js").read_text(encoding="utf-8"))}</script>
<script>const offline = {data}; window.LINEAGE_VIEW = offline.view; window.LINEAGE_PROCESSES = offline.processes;</script>
</head><body class="offline">
{_body(static)}
<script type="module">{_script((static / "app.js").read_text(encoding="utf-8"))}</script>
</body></html>
"""


def _body(static: Path) -> str:
    """The <body> content of index.html (header, canvas, panel, legend)."""
    page = (static / "index.html").read_text(encoding="utf-8")
    return page[page.index("<body>") + len("<body>") : page.index("</body>")].strip()
