"""Traversal strategies written in Gremlin text (``new SubgraphStrategy(vertices: __.has(...))``) as
gremlinpython ``TraversalStrategy`` objects."""

from __future__ import annotations

import inspect
from typing import Any

from gremlin_python.process.traversal import TraversalStrategy

from lineage_platform.graph.gremlin_text.symbols import STRATEGIES, java_name


def build_strategy(name: str, configuration: dict[str, Any]) -> TraversalStrategy:
    """The strategy ``name`` configured with ``configuration`` keyed by the Java option names.

    Known strategies are built with gremlinpython's class (so defaults and the fully qualified class name
    match gremlinpython's); the options are then stored under the names written, which are the names the
    server reads. A strategy gremlinpython has no class for becomes a generic ``TraversalStrategy``.

    >>> build_strategy("SeedStrategy", {"seed": 7}).configuration
    {'seed': 7}

    Raises:
        ValueError: a required option of the strategy is missing.
    """
    cls = STRATEGIES.get(name)
    if cls is None:
        return TraversalStrategy(strategy_name=name, configuration=dict(configuration))
    required: dict[str, Any] = {}
    for parameter in inspect.signature(cls).parameters.values():
        if parameter.default is inspect.Parameter.empty:
            option = java_name(parameter.name)
            if option not in configuration:
                raise ValueError(f"{name} needs the option {option}: {name}({option}: ...)")
            required[parameter.name] = configuration[option]
    strategy = cls(**required)
    strategy.configuration.update(configuration)
    return strategy
