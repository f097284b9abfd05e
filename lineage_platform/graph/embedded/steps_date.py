"""The 3.7 date steps: asDate, dateAdd, dateDiff (UTC datetimes; epoch numbers are milliseconds)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

from gremlin_python.process.traversal import DT

from lineage_platform.errors import TraversalError
from lineage_platform.graph.embedded.pipeline import Compiler, StepCall, StepFn, Trav, as_bytecode, step
from lineage_platform.graph.embedded.values import is_number

_UNITS = {DT.second: "seconds", DT.minute: "minutes", DT.hour: "hours", DT.day: "days"}


def as_date(value: Any) -> datetime.datetime:
    """A datetime from a datetime, an ISO-8601 string or epoch milliseconds."""
    if isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str):
        try:
            parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise TraversalError(
                f"Can't parse {value!r} as Date", hint="use an ISO-8601 date such as 2023-08-02T00:00:00Z"
            ) from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)
    if is_number(value) and isinstance(value, int):
        return datetime.datetime.fromtimestamp(value / 1000, tz=datetime.UTC)
    raise TraversalError(
        f"Can't parse {value!r} as Date: asDate() takes an ISO-8601 string, integer epoch milliseconds or a date",
        hint="pass an ISO-8601 string, epoch milliseconds or a datetime",
    )


def _require_date(value: Any, step_name: str) -> datetime.datetime:
    if not isinstance(value, datetime.datetime):
        raise TraversalError(
            f"{step_name} can only take Date as argument, encountered {type(value).__name__}",
            hint=f"asDate() before {step_name}()",
        )
    return value


@step("asDate")
def compile_as_date(call: StepCall, c: Compiler) -> StepFn:
    """asDate(): parse strings and epoch milliseconds into datetimes."""
    return lambda travs: (t.split(as_date(t.obj)) for t in travs)


@step("dateAdd")
def compile_date_add(call: StepCall, c: Compiler) -> StepFn:
    """dateAdd(DT.unit, amount)."""
    unit, amount = call.args[0], call.args[1]
    if unit not in _UNITS or isinstance(amount, bool) or not isinstance(amount, int):
        raise TraversalError(
            f"dateAdd() takes a DT unit and an integer, got {call.args!r}", hint="dateAdd(DT.hour, 2)"
        )
    delta = datetime.timedelta(**{_UNITS[unit]: amount})
    return lambda travs: (t.split(_require_date(t.obj, "dateAdd") + delta) for t in travs)


@step("dateDiff")
def compile_date_diff(call: StepCall, c: Compiler) -> StepFn:
    """dateDiff(date | traversal): whole seconds from the argument to the incoming date."""
    arg = call.args[0] if call.args else None
    nested = as_bytecode(arg)
    pipeline = c.compile(nested) if nested is not None else None

    def diff(t: Trav) -> int:
        other = arg
        if pipeline is not None:
            result = pipeline.first(t)
            other = None if result is None else result.obj
        start = _require_date(t.obj, "dateDiff")
        if other is None:
            return int(start.timestamp())
        return int((start - _require_date(other, "dateDiff")).total_seconds())

    def run(travs: Iterator[Trav]) -> Iterator[Trav]:
        for t in travs:
            yield t.split(diff(t))

    return run
