"""What the runner skips and why, and which scenarios count as "core".

Skips are only for scenarios that cannot apply to this engine, named by tag in `SKIP_TAGS` with the
reason. Everything else runs; a step the engine declares unsupported is counted as "unsupported", never
hidden as a skip.
"""

from __future__ import annotations

import re

SKIP_TAGS: dict[str, str] = {
    "@GraphComputerOnly": "needs an OLAP GraphComputer; the embedded engine is OLTP only",
    "@TinkerServiceRegistry": "needs TinkerGraph's own call() services (tinker.search, tinker.degree.centrality)",
    "@AllowNullPropertyValues": "TinkerPop runs these only on a graph configured to store null property values",
}

PLACEHOLDER_REASON = "placeholder scenario ('an unsupported test'), never executed by TinkerPop either"

# the steps the platform relies on (the embedded engine's core); a scenario whose traversal uses only
# these counts towards the core pass rate
CORE_STEPS: frozenset[str] = frozenset(
    [
        "V",
        "E",
        "addV",
        "addE",
        "from",
        "to",
        "property",
        "drop",
        "has",
        "hasLabel",
        "hasId",
        "hasNot",
        "hasKey",
        "hasValue",
        "eq",
        "neq",
        "lt",
        "lte",
        "gt",
        "gte",
        "inside",
        "outside",
        "between",
        "within",
        "without",
        "startingWith",
        "endingWith",
        "containing",
        "notStartingWith",
        "notEndingWith",
        "notContaining",
        "out",
        "in",
        "both",
        "outE",
        "inE",
        "bothE",
        "outV",
        "inV",
        "otherV",
        "bothV",
        "values",
        "valueMap",
        "elementMap",
        "properties",
        "id",
        "label",
        "key",
        "value",
        "repeat",
        "times",
        "until",
        "emit",
        "loops",
        "simplePath",
        "cyclicPath",
        "path",
        "by",
        "dedup",
        "limit",
        "range",
        "skip",
        "tail",
        "count",
        "sum",
        "min",
        "max",
        "mean",
        "fold",
        "unfold",
        "group",
        "groupCount",
        "order",
        "project",
        "select",
        "as",
        "where",
        "not",
        "and",
        "or",
        "is",
        "coalesce",
        "union",
        "optional",
        "choose",
        "option",
        "constant",
        "identity",
        "inject",
        "aggregate",
        "store",
        "cap",
        "sideEffect",
        "barrier",
        "local",
        "mergeV",
        "mergeE",
        "tx",
    ]
)

# calls in traversal text that build literals or end the traversal rather than run steps
_NOT_STEPS = frozenset({"datetime", "UUID", "iterate", "next", "toList", "toSet", "hasNext"})
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"' + r"|'(?:[^'\\]|\\.)*'")
_CALL = re.compile(r"(?<![\w$])([A-Za-z_]\w*)\s*\(")


def steps_used(traversal_text: str) -> set[str]:
    """The step (and predicate) names a Gremlin traversal text calls, string literals excluded.

    >>> sorted(steps_used('g.V().has("name", P.within("out(")).out("knows")'))
    ['V', 'has', 'out', 'within']
    """
    return set(_CALL.findall(_STRING.sub('""', traversal_text))) - _NOT_STEPS


def uses_only_core_steps(*traversal_texts: str) -> bool:
    """True when every step of every given traversal is a core step."""
    return all(steps_used(text) <= CORE_STEPS for text in traversal_texts)


_MUTATING = re.compile(r"(?<![\w$])(addV|addE|property|drop|mergeV|mergeE|io)\s*\(")


def mutates(traversal_text: str) -> bool:
    """True when the traversal may change the graph (so a shared data graph must not be used)."""
    return bool(_MUTATING.search(_STRING.sub('""', traversal_text)))
