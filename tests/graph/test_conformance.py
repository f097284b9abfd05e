"""The conformance runner: its Gherkin reader, value notation, comparison rules, skip policy, and the whole
TinkerPop suite against the embedded engine with no regression from tests/graph/conformance_expected.txt."""

from __future__ import annotations

import signal
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from gremlin_python.process.traversal import Direction, P, T
from gremlin_python.statics import long
from gremlin_python.structure.graph import Edge, Vertex, VertexProperty
from gremlin_python.structure.graph import Path as GPath

from lineage_platform.errors import GraphError
from tools.conformance import DEFAULT_SUITE_ROOT, run_suite
from tools.conformance.compare import canonical, check_results, next_result_items
from tools.conformance.gherkin import parse_feature
from tools.conformance.policy import mutates, steps_used, uses_only_core_steps
from tools.conformance.report import (
    read_expected,
    regressions,
    summary_table,
    totals,
    write_expected,
)
from tools.conformance.runner import Outcome, ScenarioTimeout, Status, time_limit
from tools.conformance.values import parse_predicate, parse_value

EXPECTED_FILE = Path(__file__).with_name("conformance_expected.txt")

FEATURE = '''
@StepClassMap @StepOut
Feature: Step - out()

  @UserSuppliedVertexIds
  Scenario: g_VX1X_out
    Given the modern graph
    And using the parameter vid1 defined as "v[marko].id"
    And the traversal of
      """
      g.V(vid1).out()
      """
    When iterated to list
    Then the result should be unordered
      | result |
      | v[vadas] |
      | m[{"a":"d[1].i"}] |

  Scenario: second
    Given an unsupported test
    Then nothing should happen because
      """
      not supported
      """
'''


class _FakeLookup:
    """Names to elements for the notation tests (the real lookup queries a graph)."""

    def vertex(self, name: str) -> Vertex:
        return Vertex({"marko": 1, "vadas": 2}[name], "person")

    def edge(self, out_name: str, label: str, in_name: str) -> Edge:
        return Edge(7, self.vertex(out_name), label, self.vertex(in_name))

    def vertex_property(self, name: str, key: str, value: Any) -> VertexProperty:
        return VertexProperty(100, key, value, self.vertex(name))


def test_gherkin_reads_tags_steps_doc_strings_and_tables():
    feature = parse_feature(FEATURE)
    first, second = feature.scenarios
    assert feature.title == "Step - out()"
    assert first.tags == {"@StepClassMap", "@StepOut", "@UserSuppliedVertexIds"}
    assert second.tags == {"@StepClassMap", "@StepOut"}
    assert [s.text for s in first.steps][:2] == [
        "the modern graph",
        'using the parameter vid1 defined as "v[marko].id"',
    ]
    assert first.steps[2].doc == "g.V(vid1).out()"
    assert first.steps[4].table == [["result"], ["v[vadas]"], ['m[{"a":"d[1].i"}]']]
    assert second.steps[1].doc == "not supported"


def test_gherkin_rejects_unknown_lines_with_the_line_number():
    with pytest.raises(GraphError, match=":4: cannot read Gherkin line"):
        parse_feature("Feature: x\n  Scenario: s\n    Given the modern graph\n    Whatever this is\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("d[29].i", 29),
        ("d[2.5].d", 2.5),
        ("d[1].m", Decimal(1)),
        ("null", None),
        ("true", True),
        ("str[ padded ]", " padded "),
        ("t[label]", T.label),
        ("D[from]", Direction.OUT),
        ("l[a,l[b,c],d[1].l]", ["a", ["b", "c"], 1]),
        ("s[a,b]", {"a", "b"}),
        ("plain text", "plain text"),
        ("v[marko].id", 1),
        ("v[vadas].sid", "2"),
    ],
)
def test_notation_values(text, expected):
    assert parse_value(text, _FakeLookup()) == expected


def test_notation_keeps_int_widths_and_special_doubles():
    assert type(parse_value("d[5].l", None)) is long
    nan = parse_value("d[NaN]", None)
    assert nan != nan
    assert parse_value("d[-Infinity]", None) == float("-inf")


def test_notation_maps_reparse_keys_and_values():
    value = parse_value('m[{"t[id]":"v[marko].id","name":"l[marko]","n":3}]', _FakeLookup())
    assert value == {T.id: 1, "name": ["marko"], "n": 3}


def test_notation_elements_and_paths():
    lookup = _FakeLookup()
    assert parse_value("e[marko-knows->vadas]", lookup).id == 7
    assert parse_value("vp[marko-age->d[29].i]", lookup).value == 29
    path = parse_value("p[v[marko],v[vadas],lop]", lookup)
    assert isinstance(path, GPath) and path.objects == [Vertex(1), Vertex(2), "lop"]
    predicate = parse_predicate("within", "l[]", lookup)
    assert predicate == P.within([])


def test_compare_numbers_by_value_and_doubles_within_tolerance():
    assert canonical(1) == canonical(long(1)) == canonical(1.0)
    assert canonical(0.1 + 0.2) == canonical(0.3)
    assert canonical(0.3) != canonical(0.3000001)
    assert canonical(float("nan")) == canonical(float("nan"))


def test_compare_enums_by_name_whatever_the_python_spelling():
    assert canonical(T.id_) == canonical(T.id) != canonical(T.label)
    assert canonical(Direction.from_) == canonical(Direction.OUT)


def test_compare_elements_by_id_and_paths_without_labels():
    assert canonical(Vertex(1, "person")) == canonical(Vertex(1, "vertex"))
    assert canonical(Vertex(1)) != canonical(Edge(1, Vertex(1), "x", Vertex(2)))
    assert canonical(GPath([["a"], ["b"]], [Vertex(1), 2])) == canonical(GPath([], [Vertex(1), 2]))


def test_assertion_forms():
    assert check_results("unordered", [1, 2, 2], [2, 1, 2]) is None
    assert "expected" in check_results("unordered", [1, 2], [1, 2, 2])
    assert check_results("ordered", [1, 2], [1, 2]) is None
    assert check_results("ordered", [2, 1], [1, 2]) is not None
    assert check_results("of", [1, 1, 3], [1, 2, 3]) is None
    assert check_results("of", [4], [1, 2, 3]) is not None
    assert check_results("empty", [], []) is None
    assert check_results("unordered", [{"a": 1, "b": [1, 2]}], [{"b": [1, 2], "a": 1}]) is None


def test_next_results_expand_collections_and_map_entries():
    assert next_result_items([1, 2]) == [1, 2]
    assert next_result_items({"a": 1, "b": 2}) == [{"a": 1}, {"b": 2}]
    assert next_result_items(5) == [5]


def test_policy_finds_steps_outside_string_literals():
    assert steps_used('g.V().has("name", "out(").values("age")') == {"V", "has", "values"}
    assert uses_only_core_steps('g.V().out("knows").values("name")', "g.V()")
    assert not uses_only_core_steps("g.V().sample(1)")
    assert not uses_only_core_steps("g.withStrategies(ReadOnlyStrategy).V()")
    assert mutates('g.V().property("x", 1)') and not mutates('g.V().properties("addV(")')


def test_expected_file_round_trip_and_regressions(tmp_path):
    before = [
        Outcome("a.feature", "one", Status.PASS, True),
        Outcome("a.feature", "two", Status.FAIL, True, "boom"),
        Outcome("b.feature", "three", Status.PASS, False),
    ]
    path = tmp_path / "expected.txt"
    assert write_expected(before, path) == 2
    assert read_expected(path) == {"a.feature::one", "b.feature::three"}
    after = [Outcome("a.feature", "one", Status.UNSUPPORTED, True), *before[1:]]
    assert [o.key for o in regressions(after, read_expected(path))] == ["a.feature::one"]
    table = summary_table(after)
    assert "core-step scenarios: 0/2 pass (0.0%)" in table


def test_time_limit_gives_back_an_outer_alarm():
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        with time_limit(5):
            pass
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 25 < left <= 30
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def test_time_limit_interrupts_a_runaway_loop():
    started = time.perf_counter()
    with pytest.raises(ScenarioTimeout), time_limit(0.2):
        while True:
            pass
    assert time.perf_counter() - started < 2


SAMPLE_SUITE = '''
Feature: runner statuses

  Scenario: passes
    Given the modern graph
    And using the parameter vid1 defined as "v[marko].id"
    And the traversal of
      """
      g.V(vid1).out("knows").values("name")
      """
    When iterated to list
    Then the result should be unordered
      | result |
      | vadas |
      | josh |

  Scenario: wrong_expectation
    Given the modern graph
    And the traversal of
      """
      g.V().has("name", "marko").out("knows").values("name")
      """
    When iterated to list
    Then the result should be ordered
      | result |
      | vadas |

  Scenario: writes_on_a_fresh_copy
    Given the modern graph
    And the traversal of
      """
      g.V().has("name", "marko").drop()
      """
    When iterated to list
    Then the result should be empty
    And the graph should return 5 for count of "g.V()"

  Scenario: shared_copy_is_untouched
    Given the modern graph
    And the traversal of
      """
      g.V()
      """
    When iterated to list
    Then the result should have a count of 6

  Scenario: expected_error
    Given the modern graph
    And the traversal of
      """
      g.V().values("name").out()
      """
    When iterated to list
    Then the traversal will raise an error

  Scenario: runaway
    Given the modern graph
    And the traversal of
      """
      g.V().repeat(__.both()).until(__.has("name", "nobody")).count()
      """
    When iterated to list
    Then the result should be empty

  @GraphComputerOnly
  Scenario: olap_only
    Given the modern graph
    And the traversal of
      """
      g.V().pageRank()
      """
    When iterated to list
    Then the result should be empty
'''


@pytest.mark.skipif(not (DEFAULT_SUITE_ROOT / "data").is_dir(), reason="TinkerPop data graphs not present")
def test_runner_statuses_on_a_small_suite(tmp_path):
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "Sample.feature").write_text(SAMPLE_SUITE)
    (tmp_path / "data").symlink_to(DEFAULT_SUITE_ROOT / "data")
    outcomes = {o.scenario: o for o in run_suite(tmp_path, timeout=0.5)}
    assert {name: o.status for name, o in outcomes.items()} == {
        "passes": Status.PASS,
        "wrong_expectation": Status.FAIL,
        "writes_on_a_fresh_copy": Status.PASS,
        "shared_copy_is_untouched": Status.PASS,
        "expected_error": Status.PASS,
        "runaway": Status.FAIL,
        "olap_only": Status.SKIP,
    }
    assert "result should be ordered" in outcomes["wrong_expectation"].detail
    assert "timed out" in outcomes["runaway"].detail
    assert outcomes["olap_only"].detail.startswith("@GraphComputerOnly")
    assert outcomes["passes"].core and not outcomes["olap_only"].core
    summary = totals(outcomes.values())
    assert summary.counts[Status.PASS] == 4
    assert (summary.core_passed, summary.core_run) == (4, 6)  # the skipped pageRank scenario is neither


@pytest.mark.skipif(not (DEFAULT_SUITE_ROOT / "features").is_dir(), reason="TinkerPop features not present")
def test_single_scenario_run_reports_status(tmp_path):
    outcomes = run_suite(feature="filter/HasNot.feature")
    assert len(outcomes) == 1 and outcomes[0].status in set(Status)
    table = summary_table(outcomes)
    assert "filter/HasNot.feature" in table and "core-step scenarios" in table


@pytest.mark.slow
@pytest.mark.skipif(not (DEFAULT_SUITE_ROOT / "features").is_dir(), reason="TinkerPop features not present")
def test_whole_suite_has_no_regressions():
    # 20 s per traversal: the heaviest passing scenarios (Grateful Dead repeats) take ~5 s, and over 8 s when
    # other processes hold both cores
    outcomes = run_suite(timeout=20.0)
    print(summary_table(outcomes))
    broken = regressions(outcomes, read_expected(EXPECTED_FILE))
    assert not broken, "scenarios that passed before and now do not:\n" + "\n".join(
        f"{o.key}: {o.detail}" for o in broken
    )
