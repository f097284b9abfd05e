"""Errors name the step and the argument, unsupported steps and strategies are refused clearly."""

from __future__ import annotations

import pytest
from gremlin_python.process.graph_traversal import GraphTraversalSource, __
from gremlin_python.process.strategies import (
    ElementIdStrategy,
    PartitionStrategy,
    ReadOnlyStrategy,
    SeedStrategy,
)

from lineage_platform.errors import TraversalError, UnsupportedStepError


def test_unsupported_step_names_the_step(modern: GraphTraversalSource) -> None:
    with pytest.raises(UnsupportedStepError, match=r"step pageRank\(\) is not supported"):
        modern.V().page_rank().to_list()


def test_wrong_argument_types_name_step_and_argument(modern: GraphTraversalSource) -> None:
    with pytest.raises(TraversalError, match=r"limit\(\) needs an integer count, got 'two'"):
        modern.V().limit("two").to_list()
    with pytest.raises(TraversalError, match=r"out\(\) needs a vertex but got str 'marko'"):
        modern.V(1).values("name").out().to_list()
    with pytest.raises(TraversalError, match=r"sum\(\) needs numbers but got str"):
        modern.V().values("name").sum_().to_list()
    with pytest.raises(TraversalError, match=r"union\(\) expects a traversal argument"):
        modern.V().union("out").to_list()
    with pytest.raises(TraversalError, match="TextP expects a string"):
        modern.V().has("name", __.constant(1)).has("name", TextP_starting_with_number()).to_list()


def TextP_starting_with_number() -> object:
    """A TextP whose argument is not a string."""
    from gremlin_python.process.traversal import TextP

    return TextP.starting_with(5)


def test_read_only_strategy_refuses_writes_and_allows_reads(modern: GraphTraversalSource) -> None:
    read_only = modern.with_strategies(ReadOnlyStrategy())
    assert read_only.V().count().next() == 6
    with pytest.raises(TraversalError, match="not read only"):
        read_only.add_v("x").iterate()
    assert modern.V().count().next() == 6


def test_strategies_the_engine_cannot_honour_are_refused(modern: GraphTraversalSource) -> None:
    with pytest.raises(UnsupportedStepError, match="ElementIdStrategy"):
        modern.with_strategies(ElementIdStrategy()).V().to_list()
    with pytest.raises(UnsupportedStepError, match="PartitionStrategy needs a partitionKey"):
        modern.with_strategies(PartitionStrategy(write_partition="a")).V().to_list()
    assert modern.with_strategies(SeedStrategy(seed=1)).V().count().next() == 6


def test_olap_is_refused(modern: GraphTraversalSource) -> None:
    with pytest.raises(UnsupportedStepError, match="withComputer"):
        modern.with_computer().V().to_list()


def test_modulator_without_a_step(modern: GraphTraversalSource) -> None:
    with pytest.raises(
        TraversalError, match=r"until\(\)/emit\(\)/times\(\) next to repeat\(\)|must be used with repeat"
    ):
        modern.V().until(__.has("age")).out().to_list()
