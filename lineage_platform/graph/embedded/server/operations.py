"""The server's ops: what each (processor, op) pair does with the graph, as a plain :class:`Outcome`.

| processor   | op        | does                                                                      |
| ----------- | --------- | ------------------------------------------------------------------------- |
| traversal   | bytecode  | run bytecode with autocommit on a shared worker                            |
| session     | bytecode  | run bytecode in the session's transaction; ``tx commit/rollback`` end it   |
| session     | close     | roll back whatever is open and forget the session                          |
| "" / session| eval      | parse a Gremlin script (``graph.gremlin_text``) and run its traversals     |

Authentication is a connection concern (``connection.py``). Framing results into 206/200 batches
happens there too; this module only decides results or an error status.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

from gremlin_python.process.traversal import Bytecode, Traverser

from lineage_platform.errors import (
    FailStepError,
    GremlinSyntaxError,
    LineageError,
    TraversalError,
    TraversalInterrupted,
    UnsupportedStepError,
)
from lineage_platform.graph.embedded.cancel import Cancellation
from lineage_platform.graph.embedded.server.backend import GraphBackend
from lineage_platform.graph.embedded.server.messages import RequestMessage, Status
from lineage_platform.graph.embedded.server.sessions import Session, SessionError, SessionRegistry

log = logging.getLogger(__name__)

OPTIONS_STRATEGY = "org.apache.tinkerpop.gremlin.process.traversal.strategy.decoration.OptionsStrategy"
_TX_OPERATIONS = ("commit", "rollback")


@dataclass(frozen=True)
class Outcome:
    """The result of one request: values to stream (None means 204 No Content) or an error status."""

    status: Status = Status.SUCCESS
    results: list[Any] | None = None
    message: str | None = None
    exception: str | None = None

    @classmethod
    def error(cls, status: Status, message: str, exception: BaseException | None = None) -> Outcome:
        """An error outcome; ``exception`` names the failure in the response attributes."""
        return cls(status, None, message, type(exception).__name__ if exception else None)


NO_CONTENT = Outcome(Status.NO_CONTENT)


class InvalidRequest(Exception):
    """Arguments missing or of the wrong type (status 499)."""


@dataclass(frozen=True)
class RequestOptions:
    """Per-request options read from the args, falling back to server defaults."""

    batch_size: int
    timeout: float | None
    materialize: bool

    @classmethod
    def from_args(cls, args: dict[Any, Any], *, batch_size: int, timeout: float | None) -> RequestOptions:
        """Read ``batchSize``, ``evaluationTimeout`` (ms; 0 = none) and ``materializeProperties``. A request
        may shorten the server's ``timeout`` but never lengthen or remove it."""
        size = args.get("batchSize", batch_size)
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise InvalidRequest(f"batchSize must be a positive integer, got {size!r}")
        millis = args.get("evaluationTimeout", args.get("scriptEvaluationTimeout"))
        if millis is not None:
            if not isinstance(millis, int) or isinstance(millis, bool) or millis < 0:
                raise InvalidRequest(f"evaluationTimeout must be milliseconds >= 0, got {millis!r}")
            if millis and (timeout is None or millis / 1000 < timeout):
                timeout = millis / 1000
        materialize = args.get("materializeProperties", "all")
        if materialize not in ("all", "tokens"):
            raise InvalidRequest(f"materializeProperties must be 'all' or 'tokens', got {materialize!r}")
        return cls(size, timeout, materialize == "all")


def status_for(exc: BaseException, *, script: bool) -> Status:
    """The status an engine failure is reported with: 598 for an interrupted traversal, 595 for a fail() step,
    596 for transient failures such as a busy graph (retry may help)."""
    if isinstance(exc, TraversalInterrupted):
        return Status.SERVER_ERROR_TIMEOUT
    if isinstance(exc, FailStepError):
        return Status.SERVER_ERROR_FAIL_STEP
    if isinstance(exc, LineageError) and exc.transient:
        return Status.SERVER_ERROR_TEMPORARY
    if script or isinstance(exc, GremlinSyntaxError):
        return Status.SERVER_ERROR_EVALUATION
    return Status.SERVER_ERROR


def _without_request_options(bytecode: Bytecode) -> Bytecode:
    """Drop ``with_(...)`` request options: the server applies them, the traversal need not see them."""
    kept = [
        inst
        for inst in bytecode.source_instructions
        if not (
            inst[0] == "withStrategies"
            and all(getattr(s, "fqcn", None) == OPTIONS_STRATEGY for s in inst[1:])
        )
    ]
    if len(kept) == len(bytecode.source_instructions):
        return bytecode
    stripped = Bytecode()
    stripped.source_instructions = kept
    stripped.step_instructions = bytecode.step_instructions
    return stripped


def _tx_operation(bytecode: Bytecode) -> str | None:
    """``commit``/``rollback`` when the bytecode is a graph op (``g.tx().commit()``), else None."""
    sources = bytecode.source_instructions
    if (
        not bytecode.step_instructions
        and len(sources) == 1
        and sources[0][0] == "tx"
        and len(sources[0]) == 2
    ):
        return sources[0][1]
    return None


def _stop(cancellation: Cancellation, future: Future, reason: str) -> None:
    """Cancel a running evaluation (a queued one was already dropped with its awaiting future) and log when
    its worker is free again."""
    cancellation.cancel(reason)
    cancelled_at = time.monotonic()

    def stopped(_future: Future) -> None:
        log.info(
            "the cancelled evaluation stopped %.3f s later; its worker is free",
            time.monotonic() - cancelled_at,
        )

    future.add_done_callback(stopped)


def _values(traversers: list[Traverser], cancellation: Cancellation) -> list[Any]:
    """A script's values, bulks expanded (scripts return raw values), within the request's item budget."""
    cancellation.check_size(sum(t.bulk for t in traversers), "the script's result")
    return [t.object for t in traversers for _ in range(t.bulk)]


def run_script(
    execute: Callable[[Bytecode, Cancellation], list[Traverser]],
    script: str,
    bindings: dict[str, Any],
    cancellation: Cancellation,
) -> list:
    """Run a Gremlin script as Gremlin Server's Groovy engine would: statements ending in a terminal step
    (``next()``, ``iterate()``, ...) run in order, a bare traversal runs only as the last statement (its
    values are the script's result); the result is the last statement's values. ``execute`` runs one
    traversal (autocommit or in a session)."""
    from lineage_platform.graph.gremlin_text import parse_script

    statements = parse_script(script, bindings)
    result: list[Any] = []
    for index, parsed in enumerate(statements):
        if parsed.terminal is None and index < len(statements) - 1:
            continue
        values = _values(execute(parsed.bytecode, cancellation), cancellation)
        result = _apply_terminal(values, parsed.terminal, parsed.terminal_args)
    return result


def _distinct(values: list[Any]) -> list[Any]:
    try:
        return list(dict.fromkeys(values))
    except TypeError:  # unhashable values (maps, lists): compare by equality
        unique: list[Any] = []
        for value in values:
            if value not in unique:
                unique.append(value)
        return unique


def _apply_terminal(values: list[Any], terminal: str | None, args: tuple | list) -> list[Any]:
    if terminal in (None, "toList"):
        return values
    if terminal == "iterate":
        return []
    if terminal == "hasNext":
        return [bool(values)]
    if terminal == "toSet":
        return _distinct(values)
    if terminal == "tryNext":
        return values[:1]
    if terminal == "next":
        if args:
            return values[: int(args[0])]
        if not values:
            raise TraversalError("The provided traverser does not map to a value")
        return values[:1]
    raise UnsupportedStepError(f"the terminal step {terminal}() is not supported in scripts")


class Operations:
    """Executes requests against the graph on worker threads, within timeouts."""

    def __init__(
        self,
        graph: GraphBackend,
        sessions: SessionRegistry,
        pool: Executor,
        *,
        traversal_sources: Iterable[str],
        max_items: int | None = None,
    ) -> None:
        self._graph = graph
        self._max_items = max_items
        self._sessions = sessions
        self._pool = pool
        self._sources = frozenset(traversal_sources)
        # evaluations until their worker is done with them (also after their request was answered or
        # cancelled); entries leave from the worker threads, hence the lock
        self._running: dict[Cancellation, Future] = {}
        self._running_lock = threading.Lock()

    def cancel_all(self, reason: str) -> list[Future]:
        """Stop every running evaluation (server shutdown); returns their futures, done once the workers have
        rolled back and are free."""
        with self._running_lock:
            running = dict(self._running)
        for cancellation in running:
            cancellation.cancel(reason)
        return list(running.values())

    async def run(self, request: RequestMessage, options: RequestOptions, connection_id: int) -> Outcome:
        """Answer one request; every failure becomes an error Outcome, nothing raises."""
        handler = self._HANDLERS.get((request.processor, request.op))
        if handler is None:
            return Outcome.error(
                Status.REQUEST_ERROR_MALFORMED_REQUEST,
                f"unknown op {request.op!r} for processor {request.processor!r}",
            )
        try:
            return await handler(self, request, options, connection_id)
        except InvalidRequest as exc:
            return Outcome.error(Status.REQUEST_ERROR_INVALID_REQUEST_ARGUMENTS, str(exc), exc)
        except SessionError as exc:
            return Outcome.error(Status.REQUEST_ERROR_INVALID_REQUEST_ARGUMENTS, str(exc), exc)

    # -- argument checks -------------------------------------------------------------------------------

    def _check_aliases(self, args: dict[Any, Any]) -> None:
        aliases = args.get("aliases", {"g": "g"})
        if not isinstance(aliases, dict) or len(aliases) != 1:
            raise InvalidRequest("aliases must map exactly one name to a traversal source")
        (source,) = aliases.values()
        if source not in self._sources:
            served = ", ".join(sorted(self._sources))
            raise InvalidRequest(
                f"traversal source {source!r} is not configured; this server serves {served}"
            )

    def _bytecode_arg(self, args: dict[Any, Any]) -> Bytecode:
        gremlin = args.get("gremlin")
        if not isinstance(gremlin, Bytecode):
            raise InvalidRequest("the bytecode op needs a 'gremlin' argument of type Bytecode")
        self._check_aliases(args)
        return _without_request_options(gremlin)

    def _session_arg(self, args: dict[Any, Any], connection_id: int) -> Session:
        session_id = args.get("session")
        if session_id is None:
            raise InvalidRequest("the session processor needs a 'session' argument")
        return self._sessions.acquire(str(session_id), connection_id)

    # -- running on workers ----------------------------------------------------------------------------

    async def _await(
        self,
        start: Callable[[Cancellation], Future],
        options: RequestOptions,
        script: bool,
        on_timeout: Callable[[], None] | None = None,
    ) -> Outcome:
        """Run ``start(cancellation)``'s work; past the timeout cancel it (the engine stops at its next check,
        rolls back and frees the worker) and answer 598. Cancelling the awaiting task (its client left)
        cancels the work the same way."""
        cancellation = Cancellation(max_items=self._max_items)
        future = start(cancellation)
        self._track(cancellation, future)
        try:
            traversers = await asyncio.wait_for(asyncio.wrap_future(future), options.timeout)
        except asyncio.CancelledError:
            _stop(cancellation, future, "the request was cancelled")
            raise
        except TimeoutError:
            message = f"evaluation exceeded the timeout of {options.timeout * 1000:.0f} ms"
            _stop(cancellation, future, message)
            if on_timeout is not None:
                on_timeout()
            log.warning("%s; cancelling it", message)
            return Outcome.error(
                Status.SERVER_ERROR_TIMEOUT,
                f"{message} (narrow the traversal; a request's evaluationTimeout may lower the server's "
                "--evaluation-timeout, not raise it)",
            )
        except LineageError as exc:
            return Outcome.error(status_for(exc, script=script), str(exc), exc)
        except Exception as exc:
            log.exception("the graph failed on a request")
            return Outcome.error(status_for(exc, script=script), f"{type(exc).__name__}: {exc}", exc)
        return Outcome(results=traversers) if traversers else NO_CONTENT

    def _track(self, cancellation: Cancellation, future: Future) -> None:
        with self._running_lock:
            self._running[cancellation] = future
        future.add_done_callback(lambda _future: self._untrack(cancellation))

    def _untrack(self, cancellation: Cancellation) -> None:
        with self._running_lock:
            del self._running[cancellation]

    def _autocommit(self, bytecode: Bytecode, cancellation: Cancellation) -> list[Traverser]:
        """Run one traversal outside any session (it commits on its own). Worker only."""
        return self._graph.execute(bytecode, None, cancellation)

    # -- handlers --------------------------------------------------------------------------------------

    async def _traversal_bytecode(
        self, request: RequestMessage, options: RequestOptions, _conn: int
    ) -> Outcome:
        bytecode = self._bytecode_arg(request.args)
        if _tx_operation(bytecode) is not None:
            raise InvalidRequest("g.tx() commit/rollback needs a session: use g.tx().begin() first")
        return await self._await(
            lambda cancellation: self._pool.submit(self._autocommit, bytecode, cancellation),
            options,
            script=False,
        )

    async def _session_bytecode(self, request: RequestMessage, options: RequestOptions, conn: int) -> Outcome:
        bytecode = self._bytecode_arg(request.args)
        session = self._session_arg(request.args, conn)
        operation = _tx_operation(bytecode)
        if operation is None:
            call: Callable[[Cancellation], Any] = lambda cancellation: session.execute(  # noqa: E731
                bytecode, cancellation
            )
        elif operation in _TX_OPERATIONS:
            call = lambda _cancellation: getattr(session, operation)()  # noqa: E731
        else:
            raise InvalidRequest(f"unknown transaction operation tx().{operation}()")
        return await self._in_session(session, call, options, script=False)

    async def _in_session(
        self,
        session: Session,
        call: Callable[[Cancellation], Any],
        options: RequestOptions,
        *,
        script: bool,
    ) -> Outcome:
        session.active_requests += 1
        try:
            return await self._await(
                lambda cancellation: session.submit(call, cancellation),
                options,
                script,
                on_timeout=lambda: self._sessions.end(session.id, "a request in it timed out"),
            )
        finally:
            session.active_requests -= 1

    async def _session_close(self, request: RequestMessage, _options: RequestOptions, conn: int) -> Outcome:
        session_id = request.args.get("session")
        if session_id is None:
            raise InvalidRequest("the close op needs a 'session' argument")
        done = self._sessions.close(str(session_id), conn)
        if done is not None:  # shielded: the rollback must run even if this request is cancelled
            await asyncio.shield(asyncio.wrap_future(done))
        return NO_CONTENT

    async def _eval(self, request: RequestMessage, options: RequestOptions, conn: int) -> Outcome:
        script = request.args.get("gremlin")
        if not isinstance(script, str):
            raise InvalidRequest("the eval op needs a 'gremlin' argument holding the script text")
        bindings = request.args.get("bindings") or {}
        if not isinstance(bindings, dict):
            raise InvalidRequest("bindings must be a map of names to values")
        language = request.args.get("language", "gremlin-groovy")
        if language not in ("gremlin-groovy", "gremlin-lang"):
            raise InvalidRequest(f"script language {language!r} is not supported; use gremlin-groovy")
        self._check_aliases(request.args)
        if request.processor == "session":
            session = self._session_arg(request.args, conn)
            call = lambda cancellation: run_script(  # noqa: E731
                session.execute, script, bindings, cancellation
            )
            return await self._in_session(session, call, options, script=True)
        return await self._await(
            lambda cancellation: self._pool.submit(
                run_script, self._autocommit, script, bindings, cancellation
            ),
            options,
            script=True,
        )

    _HANDLERS: dict[tuple[str, str], Callable[..., Any]] = {
        ("traversal", "bytecode"): _traversal_bytecode,
        ("session", "bytecode"): _session_bytecode,
        ("session", "close"): _session_close,
        ("session", "eval"): _eval,
        ("", "eval"): _eval,
    }
