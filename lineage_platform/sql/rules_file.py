"""Read function rules for user UDFs from a file (``--udf-rules``): YAML or JSON.

```yaml
functions:
  pick_if:    {condition_args: [0]}          # pick_if(cond, a, b): cond only decides
  mask_phone: {masking: true}
  top_share:  {aggregate: true}
  json_pick:  {key_arg: 1}                   # json_pick(doc, 'a.b'): key path $.a.b
  lookup_dim: {flow_args: [0]}               # lookup_dim(id, 'dim_table', 'col'): only id flows
```

Each entry's fields are those of :class:`~lineage_platform.sql.function_rules.FunctionRule`; a missing field
keeps its default. Names are case-insensitive; a rule replaces the built-in rule of the same name.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml

from lineage_platform.errors import SqlError
from lineage_platform.sql.function_rules import FunctionRule

_FIELDS = tuple(f.name for f in fields(FunctionRule))
_HINT = "see 'UDF rules file' in lineage_platform/sql/README.md"


def load_function_rules(path: str | Path) -> dict[str, FunctionRule]:
    """The rules in ``path`` (``.json``, or YAML for any other suffix) by lower-case function name.

    Raises SqlError with a one-line message naming the file and the entry at fault.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SqlError(f"UDF rules file {path} cannot be read: {error}", hint=_HINT) from error
    try:
        data: Any = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    except json.JSONDecodeError as error:
        raise SqlError(f"UDF rules file {path} is not valid JSON: {error}", hint=_HINT) from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or "syntax error"
        raise SqlError(f"UDF rules file {path} is not valid YAML{where}: {problem}", hint=_HINT) from error
    functions = data.get("functions") if isinstance(data, dict) else None
    if not isinstance(functions, dict):
        raise SqlError(f"UDF rules file {path} has no 'functions' mapping", hint=_HINT)
    rules: dict[str, FunctionRule] = {}
    for name, spec in functions.items():
        key = str(name).lower()
        if key in rules:
            raise SqlError(
                f"{path}: functions.{name}: defined twice (names are case-insensitive)", hint=_HINT
            )
        rules[key] = _rule(spec, f"{path}: functions.{name}")
    return rules


def _rule(spec: Any, where: str) -> FunctionRule:
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise SqlError(f"{where}: expected a mapping of {', '.join(_FIELDS)}", hint=_HINT)
    unknown = sorted(set(map(str, spec)) - set(_FIELDS))
    if unknown:
        raise SqlError(f"{where}: unknown field {unknown[0]!r}; known: {', '.join(_FIELDS)}", hint=_HINT)
    rule = FunctionRule(
        condition_args=_positions(spec.get("condition_args", []), f"{where}.condition_args"),
        aggregate=_flag(spec.get("aggregate"), f"{where}.aggregate", optional=True),
        masking=bool(_flag(spec.get("masking", False), f"{where}.masking")),
        key_arg=None if spec.get("key_arg") is None else _position(spec["key_arg"], f"{where}.key_arg"),
        flow_args=None
        if spec.get("flow_args") is None
        else _positions(spec["flow_args"], f"{where}.flow_args"),
    )
    roles = [("key_arg", (rule.key_arg,) if rule.key_arg is not None else ())]
    roles += [("condition_args", rule.condition_args), ("flow_args", rule.flow_args or ())]
    for first, (name, positions) in enumerate(roles):
        for other, other_positions in roles[first + 1 :]:
            both = sorted(set(positions) & set(other_positions))
            if both:
                raise SqlError(f"{where}: argument {both[0]} is in both {name} and {other}", hint=_HINT)
    return rule


def _position(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SqlError(f"{where}: {value!r} is not an argument position (0, 1, ...)", hint=_HINT)
    return value


def _positions(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise SqlError(f"{where}: expected a list of argument positions, got {value!r}", hint=_HINT)
    return tuple(_position(item, where) for item in value)


def _flag(value: Any, where: str, optional: bool = False) -> bool | None:
    if value is None and optional:
        return None
    if not isinstance(value, bool):
        raise SqlError(f"{where}: expected true or false, got {value!r}", hint=_HINT)
    return value
