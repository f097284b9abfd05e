"""The lineage explorer's web server (aiohttp): the single-page app, its static files and the JSON API.

Pages: ``/`` (search), ``/lineage/{name}?dir=up|down|both&depth=N&level=table|column&column=c`` and
``/impact/{name}`` all serve the same page, which reads its URL (deep links). API (see docs/features/ui.md):
``/api/search?q=``, ``/api/lineage/{name}``, ``/api/expand/{name}``, ``/api/node/{name}``,
``/api/impact/{name}`` and ``/api/impact/{name}.csv``; a name may hold slashes (file datasets). Graph reads run
on worker threads; errors answer ``{"error": ..., "hint": ...}`` (see :func:`_errors` for the status codes).
"""

from __future__ import annotations

import asyncio
import functools
import signal
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aiohttp import web
from gremlin_python.process.graph_traversal import GraphTraversalSource

from lineage_platform.errors import ConfigError, GraphError, LineageError, as_lineage_error
from lineage_platform.ui import api
from lineage_platform.ui.assets import STATIC, check_assets

MAX_DEPTH = 50
_GRAPH: web.AppKey[GraphTraversalSource] = web.AppKey("graph", GraphTraversalSource)
_POOL: web.AppKey[ThreadPoolExecutor] = web.AppKey("pool", ThreadPoolExecutor)


def create_app(g: GraphTraversalSource, static: Path = STATIC) -> web.Application:
    """The explorer's aiohttp application over the graph ``g``."""
    app = web.Application(middlewares=[_errors])
    app[_GRAPH] = g
    app[_POOL] = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lineage-ui")
    page = functools.partial(_page, static / "index.html")
    app.router.add_get("/", page)
    app.router.add_get("/lineage/{name:.+}", page)
    app.router.add_get("/impact/{name:.+}", page)
    app.router.add_get("/api/search", _search)
    app.router.add_get("/api/lineage/{name:.+}", _lineage)
    app.router.add_get("/api/expand/{name:.+}", _expand)
    app.router.add_get("/api/node/{name:.+}", _node)
    app.router.add_get("/api/impact/{name:.+}", _impact)
    app.router.add_get("/favicon.ico", _no_icon)
    app.router.add_static("/static/", static)
    app.on_cleanup.append(_shutdown_pool)
    return app


async def _shutdown_pool(app: web.Application) -> None:
    app[_POOL].shutdown(wait=False, cancel_futures=True)


@web.middleware
async def _errors(request: web.Request, handler: Callable) -> web.StreamResponse:
    """Failures become one JSON error with a hint, never a traceback: an unknown name answers 404, a bad parameter
    400, a busy or unreachable graph 503, anything else 500."""
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except Exception as exc:
        error = as_lineage_error(exc)
        if error is not exc or (isinstance(error, GraphError) and type(error) is not GraphError):
            status = 503 if error.transient else 500  # the environment, the graph engine, or a bug
        elif type(error) is GraphError:
            status = 404  # resolve(): no such table or column
        else:
            status = 400  # a platform error about the request
        return web.json_response({"error": error.message, "hint": error.hint}, status=status)


async def _page(index: Path, request: web.Request) -> web.FileResponse:
    return web.FileResponse(index)


async def _no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


async def _call(request: web.Request, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a graph read on the worker threads."""
    loop = asyncio.get_running_loop()
    call = functools.partial(function, request.app[_GRAPH], *args, **kwargs)
    return await loop.run_in_executor(request.app[_POOL], call)


def _choice(request: web.Request, key: str, choices: tuple[str, ...], default: str | None) -> str | None:
    value = request.query.get(key, default)
    if value is not None and value not in choices:
        raise LineageError(f"{key}={value!r} is not accepted", hint=f"use {key}={' or '.join(choices)}")
    return value


def _depth(request: web.Request, default: int) -> int:
    text = request.query.get("depth", str(default))
    if not text.isdigit() or not 1 <= int(text) <= MAX_DEPTH:
        raise LineageError(
            f"depth={text!r} is not accepted", hint=f"use a whole number from 1 to {MAX_DEPTH}"
        )
    return int(text)


async def _search(request: web.Request) -> web.Response:
    hits = await _call(request, api.search, request.query.get("q", ""))
    return web.json_response({"hits": hits})


async def _lineage(request: web.Request) -> web.Response:
    return await _view(request, _depth(request, 2))


async def _expand(request: web.Request) -> web.Response:
    return await _view(request, 1)


async def _view(request: web.Request, depth: int) -> web.Response:
    """The lineage view of the requested name, ``depth`` hops in the requested direction and level."""
    view = await _call(
        request,
        api.lineage_view,
        request.match_info["name"],
        direction=_choice(request, "dir", ("up", "down", "both"), "both"),
        depth=depth,
        level=_choice(request, "level", ("table", "column"), None),
    )
    return web.json_response(view)


async def _node(request: web.Request) -> web.Response:
    details = await _call(request, api.node_details, request.match_info["name"], request.query.get("column"))
    return web.json_response(details)


async def _impact(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    as_csv = name.endswith(".csv")
    report = await _call(request, api.impact_view, name.removesuffix(".csv") if as_csv else name)
    if as_csv:
        filename = f"impact-{report['root']}.csv"
        return web.Response(
            text=api.impact_csv(report),
            content_type="text/csv",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )
    return web.json_response(report)


async def start(g: GraphTraversalSource, host: str, port: int) -> tuple[web.AppRunner, str]:
    """Start serving; returns the runner (``await runner.cleanup()`` stops it) and the base URL."""
    runner = web.AppRunner(create_app(g), handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    shown = f"[{host}]" if ":" in host else host
    return runner, f"http://{shown}:{bound}/"


def serve(g: GraphTraversalSource, host: str, port: int, announce: Callable[[str], None]) -> None:
    """Serve until SIGTERM or Ctrl-C; ``announce`` gets the base URL once the port is open. The graph must answer
    first (an unreachable server fails here, in one line, not in the browser)."""
    check_assets()
    g.V().limit(1).count().next()

    async def main() -> None:
        runner, url = await start(g, host, port)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        announce(url)
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="pick another --port (0: any free port)",
        ) from None
