"""Op tuples become ordered change events with labels filled in."""

from __future__ import annotations

import pytest

from lineage_platform.cdc.errors import ChangeCaptureError
from lineage_platform.cdc.events import LabelIndex, ops_to_events


def test_labels_come_from_the_adds_and_are_forgotten_after_the_drop() -> None:
    labels = LabelIndex()
    first = ops_to_events(
        "g",
        1,
        [
            ("addV", 1, "table"),
            ("addV", 2, "column"),
            ("addE", 3, "hasColumn", 1, 2),
            ("addVP", 2, 4, "name", "c"),
        ],
        10,
        labels,
    )
    assert [(e.seq, e.op, e.label) for e in first] == [
        (0, "addV", "table"),
        (1, "addV", "column"),
        (2, "addE", "hasColumn"),
        (3, "addVP", "column"),
    ]
    later = ops_to_events(
        "g", 2, [("setEP", 3, "w", 1), ("dropE", 3), ("dropV", 2), ("dropVP", 2, 4)], 11, labels
    )
    assert [(e.op, e.label, e.element_key) for e in later] == [
        ("setEP", "hasColumn", "e:3"),
        ("dropE", "hasColumn", "e:3"),
        ("dropV", "column", "v:2"),
        ("dropVP", None, "v:2"),
    ]
    assert len(labels) == 1


def test_vertex_and_edge_ids_do_not_collide() -> None:
    labels = LabelIndex()
    events = ops_to_events(
        "g", 1, [("addV", 5, "table"), ("addE", 5, "usedBy", 5, 5), ("setEP", 5, "k", 1)], 0, labels
    )
    assert [e.element_key for e in events] == ["v:5", "e:5", "e:5"]
    assert events[2].label == "usedBy"


def test_an_unknown_op_stops_capture() -> None:
    with pytest.raises(ChangeCaptureError, match="does not understand"):
        ops_to_events("g", 9, [("renameV", 1, "x")], 0, LabelIndex())
