"""Runs Gherkin scenarios against the embedded engine: set up the graph, bind parameters, parse and execute
the traversal through the remote connection, then check the assertions.

Each scenario ends as pass, fail, unsupported (the engine raised `UnsupportedStepError`) or skip (see
`policy.SKIP_TAGS`). A traversal that runs longer than the time limit is interrupted and fails.
"""

from __future__ import annotations

import re
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from lineage_platform.errors import UnsupportedStepError
from lineage_platform.graph.gremlin_text import parse_script
from tools.conformance.compare import check_results, next_result_items
from tools.conformance.gherkin import Feature, Scenario, Step
from tools.conformance.graphs import DataGraphs, GraphLookup, ScenarioGraph
from tools.conformance.policy import (
    PLACEHOLDER_REASON,
    SKIP_TAGS,
    mutates,
    uses_only_core_steps,
)
from tools.conformance.values import parse_predicate, parse_value

DEFAULT_TIMEOUT = 10.0


class Status(StrEnum):
    """How a scenario ended."""

    PASS = "pass"
    FAIL = "fail"
    UNSUPPORTED = "unsupported"
    SKIP = "skip"


@dataclass(frozen=True)
class Outcome:
    """The result of one scenario; `key` names it in the expected-passes file."""

    feature: str
    scenario: str
    status: Status
    core: bool
    detail: str = ""
    traversal: str = ""

    @property
    def key(self) -> str:
        """``<feature path>::<scenario name>``, stable across runs."""
        return f"{self.feature}::{self.scenario}"


class ScenarioTimeout(BaseException):
    """Raised inside a traversal that ran past its time limit (a BaseException so engine code cannot
    swallow it with ``except Exception``)."""


class _Ended(Exception):
    """Stops a scenario early with a final status."""

    def __init__(self, status: Status, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the enclosed code with `ScenarioTimeout` after `seconds` (main thread only; elsewhere
    the code runs unlimited, since Python delivers signals to the main thread). An alarm already set by
    someone else (pytest-timeout, say) is put back afterwards with the time it had left."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise ScenarioTimeout(f"timed out after {seconds:g}s")

    started = time.monotonic()
    previous_handler = signal.signal(signal.SIGALRM, expire)
    previous_delay, previous_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_delay > 0:
            left = max(previous_delay - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, previous_interval)


def _unescape(text: str) -> str:
    return text.replace('\\"', '"')


@dataclass
class _ScenarioRun:
    """The state of one scenario while its steps run in order."""

    scenario: Scenario
    graphs: DataGraphs
    timeout: float
    graph: ScenarioGraph | None = None
    shared_name: str | None = None
    writes: bool = False
    raw_parameters: dict[str, Callable[[GraphLookup], Any]] = field(default_factory=dict)
    traversal: str = ""
    bindings: dict[str, Any] | None = None
    results: list[Any] | None = None
    error: BaseException | None = None

    def run(self) -> None:
        """Run every step; raises `_Ended` with the final status unless the scenario passes."""
        self.writes = any(
            (step.doc is not None and mutates(step.doc)) or step.text.startswith("the graph should return")
            for step in self.scenario.steps
        )
        try:
            for step in self.scenario.steps:
                self._dispatch(step)
        except ScenarioTimeout as exc:
            if self.shared_name:  # interrupted mid-traversal: do not trust the shared copy any more
                self.graphs.discard(self.shared_name)
            raise _Ended(Status.FAIL, str(exc)) from exc
        finally:
            if self.graph is not None and self.shared_name is None:
                self.graph.close()

    def _dispatch(self, step: Step) -> None:
        for pattern, handler in _HANDLERS:
            match = pattern.fullmatch(step.text)
            if match:
                handler(self, step, *match.groups())
                return
        raise _Ended(Status.FAIL, f"line {step.line}: the runner does not know the step {step.text!r}")

    # --- Given

    def given_graph(self, step: Step, name: str) -> None:
        if name == "empty" or self.writes:
            self.graph = self.graphs.load(name)
        else:
            self.graph, self.shared_name = self.graphs.shared(name), name

    def placeholder(self, step: Step) -> None:
        raise _Ended(Status.SKIP, PLACEHOLDER_REASON)

    def initializer(self, step: Step) -> None:
        try:
            self._execute(step.doc or "", {})
        except UnsupportedStepError as exc:
            raise _Ended(Status.UNSUPPORTED, f"graph initializer: {exc}") from exc
        except Exception as exc:
            raise _Ended(Status.FAIL, f"graph initializer failed: {exc}") from exc

    def parameter(self, step: Step, name: str, value: str) -> None:
        self.raw_parameters[name] = lambda lookup: parse_value(_unescape(value), lookup)

    def predicate_parameter(self, step: Step, name: str, operator: str, value: str) -> None:
        self.raw_parameters[name] = lambda lookup: parse_predicate(operator, _unescape(value), lookup)

    def traversal_text(self, step: Step) -> None:
        self.traversal = step.doc or ""

    # --- When

    def iterate(self, step: Step, mode: str) -> None:
        bindings = self._bindings()
        try:
            results = self._execute(self.traversal, bindings)
            if mode == "next":
                if not results:
                    raise LookupError("next() on a traversal with no results")
                results = next_result_items(results[0])
            self.results = results
        except UnsupportedStepError as exc:
            raise _Ended(Status.UNSUPPORTED, str(exc)) from exc
        except Exception as exc:
            self.error = exc

    # --- Then

    def _require_results(self) -> list[Any]:
        if self.error is not None:
            detail = "".join(traceback.format_exception_only(self.error)).strip()
            raise _Ended(Status.FAIL, f"the traversal raised {detail}")
        assert self.results is not None, "a Then step came before the When step"
        return self.results

    def result_table(self, step: Step, form: str) -> None:
        lookup = self._lookup()
        expected = [parse_value(row[0], lookup) for row in step.table[1:]]
        self._check(check_results(form, self._require_results(), expected))

    def result_empty(self, step: Step) -> None:
        self._check(check_results("empty", self._require_results(), []))

    def result_count(self, step: Step, count: str) -> None:
        results = self._require_results()
        if len(results) != int(count):
            self._check(f"result should have a count of {count}, got {len(results)}: {results!r}")

    def raises(self, step: Step, how: str | None, text: str | None) -> None:
        if self.error is None:
            self._check(f"the traversal should have raised an error, but returned {self.results!r}")
            return
        message = str(self.error).lower()
        wanted = _unescape(text or "").lower()
        matched = {
            None: True,
            "containing": wanted in message,
            "starting": message.startswith(wanted),
            "ending": message.endswith(wanted),
        }[how]
        if not matched:
            self._check(f"error message should be {how} {wanted!r}, got {str(self.error)!r}")

    def graph_count(self, step: Step, count: str, text: str) -> None:
        try:
            found = len(self._execute(_unescape(text), self._bindings()))
        except Exception as exc:
            raise _Ended(Status.FAIL, f"count check {_unescape(text)!r} raised {exc}") from exc
        if found != int(count):
            self._check(f"the graph should return {count} for count of {_unescape(text)!r}, got {found}")

    # --- helpers

    def _lookup(self) -> GraphLookup:
        if self.graph is None:
            raise _Ended(Status.FAIL, "no graph was given before it was needed")
        return GraphLookup(self.graph.g)

    def _check(self, failure: str | None) -> None:
        if failure is not None:
            raise _Ended(Status.FAIL, failure)

    def _bindings(self) -> dict[str, Any]:
        """The parameters, resolved once on the graph as it is before the traversal runs."""
        if self.bindings is None:
            lookup = self._lookup()
            self.bindings = {name: resolve(lookup) for name, resolve in self.raw_parameters.items()}
        return self.bindings

    def _execute(self, text: str, bindings: dict[str, Any]) -> list[Any]:
        """Run every statement of `text`; return the results of the last one."""
        results: list[Any] = []
        for statement in parse_script(text, bindings):
            with time_limit(self.timeout):
                remote = self.graph.connection.submit(statement.bytecode)  # type: ignore[union-attr]
                results = [t.object for t in remote.traversers for _ in range(t.bulk)]
            if statement.terminal == "iterate":
                results = []
        return results


_HANDLERS: list[tuple[re.Pattern[str], Callable[..., None]]] = [
    (re.compile(pattern), handler)
    for pattern, handler in [
        (r"the (\w+) graph", _ScenarioRun.given_graph),
        (r"an unsupported test", _ScenarioRun.placeholder),
        (r"nothing should happen because", _ScenarioRun.placeholder),
        (r"the graph initializer of", _ScenarioRun.initializer),
        (r'using the parameter (\w+) defined as "(.*)"', _ScenarioRun.parameter),
        (r'using the parameter (\w+) of P\.(\w+)\("(.*)"\)', _ScenarioRun.predicate_parameter),
        (r"the traversal of", _ScenarioRun.traversal_text),
        (
            r"iterated (to list|next)",
            lambda run, step, mode: run.iterate(step, "next" if mode == "next" else "list"),
        ),
        (r"the result should be (unordered|ordered|of)", _ScenarioRun.result_table),
        (r"the result should be empty", _ScenarioRun.result_empty),
        (r"the result should have a count of (\d+)", _ScenarioRun.result_count),
        (
            r'the traversal will raise an error(?: with message (containing|starting|ending) text of "(.*)")?',
            _ScenarioRun.raises,
        ),
        (r'the graph should return (\d+) for count of "(.*)"', _ScenarioRun.graph_count),
    ]
]


def _skip_reason(scenario: Scenario) -> str | None:
    for tag in sorted(scenario.tags):
        if tag in SKIP_TAGS:
            return f"{tag}: {SKIP_TAGS[tag]}"
    return None


_COUNT_CHECK = re.compile(r'the graph should return \d+ for count of "(.*)"')


def _gremlin_texts(scenario: Scenario) -> list[str]:
    """All the Gremlin a scenario runs: graph initializer, traversal and count checks."""
    texts = []
    for step in scenario.steps:
        if step.doc is not None and step.text in ("the graph initializer of", "the traversal of"):
            texts.append(step.doc)
        count_check = _COUNT_CHECK.fullmatch(step.text)
        if count_check:
            texts.append(_unescape(count_check.group(1)))
    return texts


def run_scenario(
    feature: str, scenario: Scenario, graphs: DataGraphs, timeout: float = DEFAULT_TIMEOUT
) -> Outcome:
    """Run one scenario and say how it ended."""
    texts = _gremlin_texts(scenario)
    core = bool(texts) and uses_only_core_steps(*texts)
    traversal = next((step.doc or "" for step in scenario.steps if step.text == "the traversal of"), "")
    reason = _skip_reason(scenario)
    if reason:
        return Outcome(feature, scenario.name, Status.SKIP, core, reason, traversal)
    try:
        _ScenarioRun(scenario, graphs, timeout).run()
    except _Ended as ended:
        return Outcome(feature, scenario.name, ended.status, core, ended.detail, traversal)
    except Exception as exc:
        detail = "runner error: " + "".join(traceback.format_exception_only(exc)).strip()
        return Outcome(feature, scenario.name, Status.FAIL, core, detail, traversal)
    return Outcome(feature, scenario.name, Status.PASS, core, "", traversal)


def run_features(
    features: list[Feature],
    root: Path,
    data_dir: Path,
    *,
    scenario_name: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run the scenarios of `features` (only `scenario_name` when given) and return their outcomes."""
    graphs = DataGraphs(data_dir)
    outcomes = []
    try:
        for feature in features:
            relative = (
                feature.path.relative_to(root).as_posix()
                if feature.path.is_relative_to(root)
                else str(feature.path)
            )
            for scenario in feature.scenarios:
                if scenario_name is not None and scenario.name != scenario_name:
                    continue
                outcome = run_scenario(relative, scenario, graphs, timeout)
                outcomes.append(outcome)
                if on_outcome:
                    on_outcome(outcome)
    finally:
        graphs.close()
    return outcomes
