"""Gremlin text -> gremlinpython Bytecode: the TinkerPop scenario corpus, hand-written gremlinpython pairs, errors."""

from __future__ import annotations

import datetime as dt
import math
import re
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from gremlin_python.process.anonymous_traversal import traversal
from gremlin_python.process.graph_traversal import GraphTraversal, __
from gremlin_python.process.strategies import (
    OptionsStrategy,
    PartitionStrategy,
    ProductiveByStrategy,
    ReadOnlyStrategy,
    SeedStrategy,
    SubgraphStrategy,
)
from gremlin_python.process.traversal import (
    IO,
    Barrier,
    Bytecode,
    Cardinality,
    CardinalityValue,
    Column,
    Direction,
    Merge,
    Operator,
    Order,
    P,
    Pick,
    Pop,
    Scope,
    T,
    TextP,
    TraversalStrategy,
    WithOptions,
)
from gremlin_python.statics import SingleByte, bigint, long, short
from gremlin_python.structure.graph import Graph

from lineage_platform.errors import GremlinSyntaxError
from lineage_platform.graph.gremlin_text import ParsedTraversal, parse_script, parse_traversal
from lineage_platform.graph.gremlin_text.tokenizer import needs_more_input
from tests.conftest import SHARED

FEATURES = SHARED / "tinkerpop-features" / "features"


def canonical(value: Any) -> Any:
    """A comparable form of a bytecode argument that also keeps number types (1 == long(1) in Python)."""
    if isinstance(value, GraphTraversal):
        value = value.bytecode
    if isinstance(value, Bytecode):
        return ("bytecode", canonical(value.source_instructions), canonical(value.step_instructions))
    if isinstance(value, TraversalStrategy):
        return ("strategy", type(value).__name__, value.strategy_name, canonical(value.configuration))
    if isinstance(value, P):
        return (type(value).__name__, value.operator, canonical(value.value), canonical(value.other))
    if isinstance(value, dict):
        return ("map", sorted((repr(canonical(k)), canonical(v)) for k, v in value.items()))
    if isinstance(value, set):
        return ("set", sorted(repr(canonical(item)) for item in value))
    if isinstance(value, list | tuple):
        return [canonical(item) for item in value]
    if callable(value) and not isinstance(value, type):
        return ("lambda", value())
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def python_g():
    """A gremlinpython source that only records bytecode."""
    return traversal().with_graph(Graph())


def assert_parses_to(text: str, expected: Any, bindings: dict[str, Any] | None = None) -> ParsedTraversal:
    parsed = parse_traversal(text, bindings)
    expected_bytecode = expected.bytecode if isinstance(expected, GraphTraversal) else expected
    assert canonical(parsed.bytecode) == canonical(expected_bytecode)
    return parsed


g = python_g()

# (Gremlin text, the same traversal written with gremlinpython)
PAIRS: list[tuple[str, Any]] = [
    (
        "g.V().has('table','qualifiedName','dw.orders').out('usedBy').values('name')",
        g.V().has("table", "qualifiedName", "dw.orders").out("usedBy").values("name"),
    ),
    ('g.V(1).in("knows").as("a").is(2)', g.V(1).in_("knows").as_("a").is_(2)),
    (
        "g.E().hasLabel('flowsTo').outV().inV().otherV().bothE().bothV()",
        g.E().has_label("flowsTo").out_v().in_v().other_v().both_e().both_v(),
    ),
    ("g.V().has('age', P.gt(30)).has('name', gt('m'))", g.V().has("age", P.gt(30)).has("name", P.gt("m"))),
    (
        "g.V().has('age', P.within(27, 29)).has('name', within('a','b'))",
        g.V().has("age", P.within(27, 29)).has("name", P.within("a", "b")),
    ),
    ("g.V().has('age', P.within([27, 29]))", g.V().has("age", P.within([27, 29]))),
    ("g.V().has('age', P.between(1, 5).or(P.eq(9)))", g.V().has("age", P.between(1, 5).or_(P.eq(9)))),
    ("g.V().has('age', P.gt(1).and(P.lt(3)))", g.V().has("age", P.gt(1).and_(P.lt(3)))),
    (
        "g.V().has('name', TextP.startingWith('x')).has('name', notContaining('y'))",
        g.V().has("name", TextP.starting_with("x")).has("name", TextP.not_containing("y")),
    ),
    (
        "g.V().has('name', TextP.regex('^m.*')).has('name', TextP.notRegex('a'))",
        g.V().has("name", TextP.regex("^m.*")).has("name", TextP.not_regex("a")),
    ),
    ("g.V().where(P.not(P.within('a')))", g.V().where(P.not_(P.within("a")))),
    ("g.V().not(__.out()).where(not(out('x')))", g.V().not_(__.out()).where(__.not_(__.out("x")))),
    (
        "g.V().repeat(out()).times(2).emit().until(has('name','x'))",
        g.V().repeat(__.out()).times(2).emit().until(__.has("name", "x")),
    ),
    (
        "g.V().order().by('age', desc).by(values('name'), Order.asc)",
        g.V().order().by("age", Order.desc).by(__.values("name"), Order.asc),
    ),
    (
        "g.V().group().by(T.label).by(__.count()).select(Column.values).unfold()",
        g.V().group().by(T.label).by(__.count()).select(Column.values).unfold(),
    ),
    ("g.V().group().by(label).select(keys)", g.V().group().by(T.label).select(Column.keys)),
    (
        "g.V().count(Scope.local).fold().count(local).sum(Scope.global)",
        g.V().count(Scope.local).fold().count(Scope.local).sum_(Scope.global_),
    ),
    (
        "g.V().as('a').out().as('b').select(Pop.all, 'a', 'b').select(last, 'a')",
        g.V().as_("a").out().as_("b").select(Pop.all_, "a", "b").select(Pop.last, "a"),
    ),
    (
        "g.V().property(Cardinality.list, 'x', 1).property(single, 'y', 2)",
        g.V().property(Cardinality.list_, "x", 1).property(Cardinality.single, "y", 2),
    ),
    (
        "g.V().property(['name': Cardinality.set('bar'), 'age': 43])",
        g.V().property({"name": CardinalityValue.set_("bar"), "age": 43}),
    ),
    (
        "g.V().toE(Direction.OUT).to(Direction.from).bothE()",
        g.V().to_e(Direction.OUT).to(Direction.from_).both_e(),
    ),
    (
        "g.mergeV([name: 'marko']).option(Merge.onCreate, [(T.label): 'person', age: 29]).option(Merge.onMatch, [:])",
        g.merge_v({"name": "marko"})
        .option(Merge.on_create, {T.label: "person", "age": 29})
        .option(Merge.on_match, {}),
    ),
    (
        "g.V().choose(values('age')).option(Pick.none, identity()).option(any, constant(1))",
        g.V().choose(__.values("age")).option(Pick.none, __.identity()).option(Pick.any_, __.constant(1)),
    ),
    (
        "g.withSack(1.0d).V().sack(Operator.sum).by('w').sack(mult).sack()",
        g.with_sack(1.0).V().sack(Operator.sum_).by("w").sack(Operator.mult).sack(),
    ),
    (
        "g.withSideEffect('x', [1, 2]).V().aggregate('x').cap('x')",
        g.with_side_effect("x", [1, 2]).V().aggregate("x").cap("x"),
    ),
    ("g.withStrategies(ReadOnlyStrategy).V()", g.with_strategies(ReadOnlyStrategy()).V()),
    ("g.withoutStrategies(ProductiveByStrategy).V()", g.without_strategies(ProductiveByStrategy()).V()),
    (
        "g.withStrategies(new PartitionStrategy(partitionKey: '_p', writePartition: 'a', readPartitions: ['a']))"
        ".addV('person')",
        g.with_strategies(
            PartitionStrategy(partition_key="_p", write_partition="a", read_partitions=["a"])
        ).add_v("person"),
    ),
    (
        "g.withStrategies(SubgraphStrategy(vertices: __.has('name', P.within('josh', 'lop')))).V()",
        g.with_strategies(SubgraphStrategy(vertices=__.has("name", P.within("josh", "lop")))).V(),
    ),
    (
        "g.withStrategies(new SeedStrategy(seed: 999999)).V().coin(0.5d)",
        g.with_strategies(SeedStrategy(999999)).V().coin(0.5),
    ),
    ("g.with('evaluationTimeout', 500l).V()", g.with_("evaluationTimeout", long(500)).V()),
    (
        "g.inject(1b, 2s, 3i, 4l, 5L, 6n, 7.5f, 8.25d, 9.5m, 10)",
        g.inject(SingleByte(1), short(2), 3, long(4), long(5), bigint(6), 7.5, 8.25, Decimal("9.5"), 10),
    ),
    ("g.inject(-1, -2.5d, -3l, 0x1F, 1e3)", g.inject(-1, -2.5, long(-3), 31, 1000.0)),
    (
        "g.inject(Infinity, -Infinity, +Infinity, null, true, false)",
        g.inject(math.inf, -math.inf, math.inf, None, True, False),
    ),
    (
        "g.inject([a: 1, 'b': 2, 3: 'c', (T.id): 4], [:], [], [1, [2, 3]])",
        g.inject({"a": 1, "b": 2, 3: "c", T.id: 4}, {}, [], [1, [2, 3]]),
    ),
    ('g.inject({"x", "y"}, {1})', g.inject({"x", "y"}, {1})),
    (
        'g.inject(datetime("2023-08-01T00:00:00Z"), UUID("f47af10b-58cc-4372-a567-0f02b2f3d479"))',
        g.inject(dt.datetime(2023, 8, 1, tzinfo=dt.UTC), uuid.UUID("f47af10b-58cc-4372-a567-0f02b2f3d479")),
    ),
    (
        'g.inject("it\'s", "say \\"hi\\"\\n", \'tab\\tend\', \'\\u00e9\')',
        g.inject("it's", 'say "hi"\n', "tab\tend", "é"),
    ),
    (
        "g.V().valueMap().with(WithOptions.tokens, WithOptions.labels)",
        g.V().value_map().with_(WithOptions.tokens, WithOptions.labels),
    ),
    (
        "g.io('graph.xml').with(IO.reader, IO.graphml).read()",
        g.io("graph.xml").with_(IO.reader, IO.graphml).read(),
    ),
    (
        "g.addV('table').property('name', 'orders').as('t').addE('hasColumn').from('t').to(__.V(2))",
        g.add_v("table").property("name", "orders").as_("t").add_e("hasColumn").from_("t").to(__.V(2)),
    ),
    (
        "g.V().project('a', 'b').by(id).by(elementMap()).range(0, 2).limit(local, 1).tail()",
        g.V().project("a", "b").by(T.id).by(__.element_map()).range_(0, 2).limit(Scope.local, 1).tail(),
    ),
    (
        "g.V().sideEffect(drop()).filter(hasNot('x')).flatMap(outE()).min().max().mean()",
        g.V().side_effect(__.drop()).filter_(__.has_not("x")).flat_map(__.out_e()).min_().max_().mean(),
    ),
    (
        "g.V().hasId(1, 2).hasKey('k').hasValue('v').id().label().key().value()",
        g.V().has_id(1, 2).has_key_("k").has_value("v").id_().label().key().value(),
    ),
    (
        "g.V().match(__.as('a').out().as('b'), __.as('b').in().as('a')).select('a').by('name')",
        g.V().match(__.as_("a").out().as_("b"), __.as_("b").in_().as_("a")).select("a").by("name"),
    ),
    (
        "g.V().union(out(), __.in()).coalesce(values('x'), constant('y')).dedup().simplePath().path()",
        g.V()
        .union(__.out(), __.in_())
        .coalesce(__.values("x"), __.constant("y"))
        .dedup()
        .simple_path()
        .path(),
    ),
    ("g.union(__.V(1), __.V(2)).count()", g.union(__.V(1), __.V(2)).count()),
    ("g.call('tinker.search', [search: 'x'])", g.call("tinker.search", {"search": "x"})),
    (
        "g.V().barrier(normSack).order().by(shuffle)",
        g.V().barrier(Barrier.norm_sack).order().by(Order.shuffle),
    ),
    ("g.V().local(out().count()).is(neq(0))", g.V().local(__.out().count()).is_(P.neq(0))),
    (
        "g.E().elementMap().asString().toUpper().concat('x', __.constant('y'))",
        g.E().element_map().as_string().to_upper().concat("x", __.constant("y")),
    ),
]


@pytest.mark.parametrize(("text", "expected"), PAIRS, ids=[text[:60] for text, _ in PAIRS])
def test_parse_matches_gremlinpython(text: str, expected: Any) -> None:
    assert_parses_to(text, expected)


def test_pairs_cover_forty_traversals() -> None:
    assert len(PAIRS) >= 40


def test_anonymous_traversals_nest_as_bytecode() -> None:
    parsed = parse_traversal("g.V().where(out('a').count().is(gt(1)))")
    nested = parsed.bytecode.step_instructions[1][1]
    assert isinstance(nested, Bytecode)
    assert nested.step_instructions == [["out", "a"], ["count"], ["is", P.gt(1)]]


def test_strategy_options_keep_their_java_names() -> None:
    parsed = parse_traversal(
        "g.withStrategies(new SubgraphStrategy(checkAdjacentVertices: false, vertices: __.has('x'))).V()"
    )
    (strategy,) = parsed.bytecode.source_instructions[0][1:]
    assert isinstance(strategy, SubgraphStrategy)
    assert strategy.configuration["checkAdjacentVertices"] is False
    assert canonical(strategy.configuration["vertices"]) == canonical(__.has("x"))


def test_java_style_strategy_builders() -> None:
    parsed = parse_traversal(
        "g.withStrategies(ReadOnlyStrategy.instance(), "
        "SubgraphStrategy.build().vertices(hasLabel('person')).checkAdjacentVertices(false).create()).V()"
    )
    read_only, subgraph = parsed.bytecode.source_instructions[0][1:]
    assert isinstance(read_only, ReadOnlyStrategy) and read_only.configuration == {}
    assert isinstance(subgraph, SubgraphStrategy)
    assert canonical(subgraph.configuration) == canonical(
        {"vertices": __.has_label("person"), "checkAdjacentVertices": False}
    )


def test_unknown_strategy_becomes_generic_strategy() -> None:
    parsed = parse_traversal("g.withoutStrategies(ReferenceElementStrategy).V()")
    (strategy,) = parsed.bytecode.source_instructions[0][1:]
    assert type(strategy) is TraversalStrategy
    assert strategy.strategy_name == "ReferenceElementStrategy"


def test_strategy_missing_required_option() -> None:
    with pytest.raises(GremlinSyntaxError, match="SeedStrategy needs the option seed"):
        parse_traversal("g.withStrategies(new SeedStrategy()).V()")


def test_options_strategy_from_with() -> None:
    parsed = parse_traversal("g.with('a').with('b', 2).V()")
    (strategy,) = parsed.bytecode.source_instructions[0][1:]
    assert isinstance(strategy, OptionsStrategy)
    assert strategy.configuration == {"a": True, "b": 2}


def test_lambda_becomes_groovy_script_function() -> None:
    parsed = parse_traversal("g.V().map(Lambda.function(\"it.get().value('name')\"))")
    function = parsed.bytecode.step_instructions[1][1]
    assert function() == "it.get().value('name')"


@pytest.mark.parametrize(
    ("text", "terminal", "args"),
    [
        ("g.V().toList()", "toList", ()),
        ("g.V().next()", "next", ()),
        ("g.V().next(2)", "next", (2,)),
        ("g.V().iterate()", "iterate", ()),
        ("g.V().hasNext()", "hasNext", ()),
        ("g.V().toSet()", "toSet", ()),
        ("g.V().explain()", "explain", ()),
        ("g.V().tryNext()", "tryNext", ()),
        ("g.V().to_list()", "toList", ()),
        ("g.V()", None, ()),
    ],
)
def test_terminal_steps_are_returned_not_recorded(text: str, terminal: str | None, args: tuple) -> None:
    parsed = parse_traversal(text)
    assert (parsed.terminal, parsed.terminal_args) == (terminal, args)
    assert parsed.bytecode.step_instructions == [["V"]]


def test_bindings_supply_variables() -> None:
    parsed = parse_traversal("g.V(vid).has('name', name).limit(n)", {"vid": long(4), "name": "josh", "n": 2})
    assert parsed.bytecode.step_instructions == [["V", 4], ["has", "name", "josh"], ["limit", 2]]
    assert type(parsed.bytecode.step_instructions[0][1]) is long


def test_binding_shadows_enum_name_but_not_keywords() -> None:
    bindings = {"label": "x", "__": "ipython output", "true": 0, "out": "o", "P": "p"}
    parsed = parse_traversal(
        "g.V().by(label).where(__.out()).is(true).map(out()).has('a', P.gt(1))", bindings
    )
    assert canonical(parsed.bytecode) == canonical(
        g.V().by("x").where(__.out()).is_(True).map(__.out()).has("a", P.gt(1)).bytecode
    )


def test_python_spellings_of_steps_are_accepted() -> None:
    assert_parses_to(
        "g.V().in_('a').as_('x').has_label('p').values('n')",
        g.V().in_("a").as_("x").has_label("p").values("n"),
    )


def test_transaction_commit_and_rollback() -> None:
    assert parse_traversal("g.tx().commit()").bytecode == Bytecode.GraphOp.commit()
    assert parse_traversal("g.tx().rollback()").bytecode == Bytecode.GraphOp.rollback()


def test_script_splits_on_semicolons_and_newlines() -> None:
    script = """
        g.addV('a').iterate(); g.addV('b').iterate()
        // a comment
        g.V()
          .hasLabel('a').
          count()   /* block
        comment */
        g.V(
          1).next()
    """
    parsed = parse_script(script)
    assert [p.bytecode.step_instructions for p in parsed] == [
        [["addV", "a"]],
        [["addV", "b"]],
        [["V"], ["hasLabel", "a"], ["count"]],
        [["V", 1]],
    ]
    assert [p.terminal for p in parsed] == ["iterate", "iterate", None, "next"]


def test_string_may_span_lines_without_ending_the_statement() -> None:
    (parsed,) = parse_script("g.inject('a\nb')\n.count()")
    assert parsed.bytecode.step_instructions == [["inject", "a\nb"], ["count"]]


@pytest.mark.parametrize(
    ("text", "more"),
    [
        ("g.V().", True),
        ("g.V().has('name',", True),
        ("g.V().has('na", True),
        ("g.V() /* note", True),
        ("g.inject([1,\n2", True),
        ("g.V()", False),
        ("g.V().has('x'))", False),
        ("g.V() @", False),
        ("", False),
    ],
)
def test_needs_more_input(text: str, more: bool) -> None:
    assert needs_more_input(text) is more


def test_empty_script_has_no_statements() -> None:
    assert parse_script("  // nothing\n ; ") == []


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("g.V().outt('x')", "unknown step 'outt'", 1, 7),
        ("g.V().has('x', 1", "expected ',' or ')' in the argument list but found end of input", 1, 17),
        ("g.V()\n  .has('name, 1)", "unterminated string", 2, 8),
        ("g.V().has(x)", "unknown name 'x'", 1, 11),
        ("g.foo()", "unknown source step 'foo'", 1, 3),
        ("x.V()", "expected a traversal starting with 'g'", 1, 1),
        ("g.V() g.E()", "expected '.', ';' or a new line", 1, 7),
        ("g.V().toList().count()", "expected '.', ';' or a new line", 1, 15),
        ("g.V(200b)", "bad number 200b", 1, 5),
        ("g.V(1x)", "malformed number", 1, 5),
        ("g.V(1.5l)", "has a fraction or exponent but the integer suffix 'l'", 1, 5),
        ("g.V().has('a', P.bigger(1))", "P has no member 'bigger'", 1, 18),
        ("g.V().by(Order.up)", "Order has no member 'up'", 1, 16),
        ("g.V().where(out().toList())", "toList() ends a whole traversal", 1, 19),
        ("g.inject([1, a: 2])", "mixes list elements and map entries", 1, 15),
        ("g.inject({[1]})", "list cannot be a map key or set element", 1, 11),
        ("g.inject(datetime('yesterday'))", "bad datetime literal", 1, 10),
        ("g.V() @", "unexpected character '@'", 1, 7),
        ("g.V().map({it.get()})", "{ } must hold a set such as {'a', 'b'}", 1, 11),
        ("g.inject([1, 2)", "expected ',' or ']' in the list or map but found ')'", 1, 15),
        ("g.tx().begin()", "unsupported transaction operation 'begin'", 1, 8),
        ("g.V().is(P.gt(1).and(2))", "and() takes one predicate", 1, 18),
    ],
)
def test_syntax_errors_have_position_and_expectation(text: str, message: str, line: int, column: int) -> None:
    with pytest.raises(GremlinSyntaxError) as caught:
        parse_traversal(text)
    assert message in caught.value.message
    assert (caught.value.line, caught.value.column) == (line, column)


@pytest.mark.parametrize(
    ("text", "suggestion"),
    [
        ("g.V().valueMapp()", "valueMap"),
        ("g.V().order().by('x', desk)", "desc"),
        ("g.V().map({it.get()})", "Lambda"),
    ],
)
def test_errors_hint_what_to_write(text: str, suggestion: str) -> None:
    with pytest.raises(GremlinSyntaxError) as caught:
        parse_traversal(text)
    assert caught.value.hint is not None
    assert suggestion in caught.value.hint


def test_parse_traversal_wants_exactly_one_statement() -> None:
    with pytest.raises(GremlinSyntaxError, match="expected one traversal, found 2"):
        parse_traversal("g.V(); g.E()")
    with pytest.raises(GremlinSyntaxError, match="expected one traversal, found 0"):
        parse_traversal("")


# ---- the TinkerPop conformance corpus ---------------------------------------------------------------------

_BLOCK_OWNER = re.compile(r"(the traversal of|the graph initializer of)\s*$")
_PARAMETER = re.compile(r"using the parameter (\w+) (?:defined as|of)")


def feature_traversals() -> Iterator[tuple[str, str, dict[str, str]]]:
    """(scenario, traversal text, parameter bindings) for every traversal block of every feature file."""
    for path in sorted(FEATURES.rglob("*.feature")):
        lines = path.read_text(encoding="utf-8").splitlines()
        scenario, parameters = path.stem, {}
        index = 0
        while index < len(lines):
            line = lines[index].strip()
            if line.startswith("Scenario"):
                scenario, parameters = line.split(":", 1)[1].strip(), {}
            if match := _PARAMETER.search(line):
                parameters[match.group(1)] = f"<{match.group(1)}>"
            if line == '"""' and _BLOCK_OWNER.search(lines[index - 1]):
                end = next(i for i in range(index + 1, len(lines)) if lines[i].strip() == '"""')
                yield scenario, "\n".join(lines[index + 1 : end]), dict(parameters)
                index = end
            index += 1


@pytest.mark.skipif(not FEATURES.is_dir(), reason="TinkerPop feature files not present")
def test_tinkerpop_feature_traversals_parse() -> None:
    traversals = list(feature_traversals())
    failures = []
    for scenario, text, parameters in traversals:
        try:
            statements = parse_script(text, parameters)
        except GremlinSyntaxError as exc:
            failures.append(f"{scenario}: {exc}")
            continue
        if not statements:
            failures.append(f"{scenario}: no statement")
    assert len(traversals) > 1500
    assert len(failures) <= len(traversals) // 100, "\n".join(failures)


@pytest.mark.skipif(not FEATURES.is_dir(), reason="TinkerPop feature files not present")
def test_feature_parameters_are_bound_into_bytecode() -> None:
    by_scenario = {scenario: (text, params) for scenario, text, params in feature_traversals()}
    text, parameters = by_scenario["g_VX1X_out"]
    assert parse_traversal(text, parameters).bytecode.step_instructions == [["V", "<vid1>"], ["out"]]
