"""Self-contained HTML picture of a lineage trace (no server or network needed to open it).

The page is `lineage ui`'s own front end inlined (:func:`lineage_platform.ui.assets.offline_page`): dataset cards
with their traced columns as rows, laid out by ELK so that levels fit the names, pan/zoom/fit, the edge legend
(strength, transform), column focus, and a click on an edge shows its process (operation, SQL, latest runs).
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from lineage_platform.render.view import lineage_view, process_details

if TYPE_CHECKING:
    from lineage_platform.model import LineageGraph


def render_html(lineage: LineageGraph) -> str:
    """One self-contained HTML page drawing the trace."""
    from lineage_platform.ui.assets import offline_page

    view = lineage_view(lineage)
    return offline_page(view["root"], view, process_details(lineage))


def render_notebook_html(lineage: LineageGraph, height: int = 520) -> str:
    """The page inside an iframe, so notebooks show it without trusting scripts in their own DOM."""
    return (
        f'<iframe srcdoc="{escape(render_html(lineage), quote=True)}" '
        f'style="width: 100%; height: {height}px; border: 1px solid #ddd"></iframe>'
    )
