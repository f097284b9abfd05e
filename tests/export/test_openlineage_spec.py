"""Every event `lineage export openlineage` writes is valid against the published OpenLineage JSON schemas.

The schemas are local copies (``tests/data/openlineage-spec/``, see its README); ``$ref``s between them resolve
through a ``referencing`` registry, never over the network. Each event is validated as a 2-0-2 ``RunEvent`` and
each facet against the schema its ``_schemaURL`` names: the spec's facet schemas and the platform's own
(``lineage_platform/export/facets/``).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable

import lineage_platform.export
from lineage_platform.export import export_openlineage
from lineage_platform.graph import connect
from lineage_platform.graph.writer import LineageWriter
from lineage_platform.ingest.catalog_index import CatalogIndex
from lineage_platform.ingest.events import EventDecoder
from lineage_platform.ingest.events.native import RUN_FIELDS, query_event
from lineage_platform.ingest.readers import read_text
from lineage_platform.ingest.records import QueryRecord
from lineage_platform.ingest.sample_logs import generate_sample
from lineage_platform.model import RunInfo
from lineage_platform.sql import extract_lineage

SPEC = Path(__file__).parents[1] / "data" / "openlineage-spec"
RUN_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
UNVENDORED = {"https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json"}
"""Facet schemas no verifiable copy could be obtained of (README): such facets are checked as the core's
DatasetFacet (inside the RunEvent) and by the test of the openlineage-python classes only."""
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _format_checker() -> FormatChecker:
    """Draft 2020-12's checker plus ``uri`` (RFC 3986: a scheme, no spaces) and ``date-time`` (RFC 3339),
    which jsonschema leaves unchecked without optional packages."""
    checker = FormatChecker()
    checker.checks("uri")(lambda value: not isinstance(value, str) or bool(_URI.match(value)))

    @checker.checks("date-time", raises=ValueError)
    def _date_time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        if not _DATE_TIME.match(value):
            return False
        datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))  # real calendar date and time
        return True

    return checker


def _registry() -> Registry:
    documents = [
        *SPEC.rglob("*.json"),
        *(Path(lineage_platform.export.__file__).parent / "facets").glob("*.json"),
    ]
    schemas = [json.loads(path.read_text()) for path in documents]
    return Registry().with_resources((schema["$id"], Resource.from_contents(schema)) for schema in schemas)


REGISTRY = _registry()
CHECKER = _format_checker()


def spec_errors(instance: dict[str, Any], url: str) -> list[ValidationError]:
    """The errors of ``instance`` against the schema at ``url`` (document URL + ``#`` JSON pointer)."""
    validator = Draft202012Validator({"$ref": url}, registry=REGISTRY, format_checker=CHECKER)
    return list(validator.iter_errors(instance))


def facets_of(event: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, facet) of every run, job and dataset facet of ``event``."""
    bags = [event["run"].get("facets", {}), event["job"].get("facets", {})]
    bags += [dataset.get("facets", {}) for dataset in event["inputs"] + event["outputs"]]
    for bag in bags:
        yield from bag.items()


def event_errors(event: dict[str, Any]) -> list[str]:
    """Every schema violation of ``event`` and of its facets, as readable lines."""
    errors = [f"RunEvent {list(e.absolute_path)}: {e.message}" for e in spec_errors(event, RUN_EVENT)]
    for name, facet in facets_of(event):
        url = facet.get("_schemaURL", "")
        if url.partition("#")[0] in UNVENDORED:
            continue
        try:
            errors += [f"{name} {list(e.absolute_path)}: {e.message}" for e in spec_errors(facet, url)]
        except Unresolvable:
            errors.append(f"{name}: _schemaURL {url!r} names no schema held here")
    return errors


def exported(g: object) -> list[dict[str, Any]]:
    out = io.StringIO()
    export_openlineage(g, out, "hive", "hive://metastore:9083")
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.fixture(scope="module")
def sample_warehouse(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The sample warehouse's logs (Hive, query and Spark event logs) collected as platform events."""
    logs = tmp_path_factory.mktemp("sample") / "logs"
    generate_sample(logs, tables=30, statements=300, seed=5)
    decoder = EventDecoder(CatalogIndex(json.loads((logs / "catalog.json").read_text())))
    g = connect("memory:")
    writer = LineageWriter(g)
    offset = 0
    for path in sorted(p for p in logs.rglob("*") if p.is_file() and p.name != "catalog.json"):
        for record in read_text(path.read_text(errors="replace"), str(path)):
            if isinstance(record, QueryRecord):
                event = query_event(record.sql, **{key: getattr(record, key) for key in RUN_FIELDS})
                writer.write_runs(decoder.decode(json.dumps(event).encode(), ("sample", 0, offset)).items)
                offset += 1
    return g


def test_the_core_schema_is_the_published_2_0_2_file() -> None:
    raw = (SPEC / "OpenLineage.json").read_bytes()
    assert (
        hashlib.sha256(raw).hexdigest() == "69f68bee00b9beac88a87059c0102410e7bb05f3f43c46d02a0409831eceb0d2"
    )


def test_every_event_of_the_sample_warehouse_is_valid(sample_warehouse: object) -> None:
    events = exported(sample_warehouse)
    assert len(events) > 100
    assert {e["eventType"] for e in events} == {"COMPLETE"}  # failed runs in logs write no lineage
    assert any("columnLineage" in d["facets"] for e in events for d in e["outputs"])
    for event in events:
        assert event_errors(event) == [], event["job"]["name"]


EDGE_CASES = [  # (SQL, run status or None for a process without runs)
    (
        "INSERT OVERWRITE TABLE dwd.users SELECT id, upper(name) AS name, sha2(phone, 256) AS phone_hash, "
        "get_json_object(props, '$.app.name') AS app FROM ods.users WHERE dt = '2026-01-05'",
        "SUCCEEDED",
    ),
    ("INSERT OVERWRITE DIRECTORY 'hdfs://nn1:8020/export/users' SELECT id, name FROM dwd.users", "FAILED"),
    ("INSERT OVERWRITE DIRECTORY 's3://bucket/exports/users' SELECT id FROM dwd.users", "RUNNING"),
    ("INSERT OVERWRITE DIRECTORY '/tmp/export/users' SELECT id FROM dwd.users", "ABORTED"),
    ("CREATE VIEW ads.v_users AS SELECT u.id, c.users FROM dwd.users u JOIN ads.c c ON u.app = c.app", None),
    ("SELECT name, count(*) AS n FROM dwd.users GROUP BY name", "SUCCEEDED"),
]
SCHEMA = {
    "ods": {"users": {"id": "int", "name": "string", "phone": "string", "props": "string", "dt": "string"}},
    "ads": {"c": {"app": "string", "users": "bigint"}},
}


def test_edge_cases_are_valid_paths_transforms_and_every_run_state() -> None:
    g = connect("memory:")
    writer = LineageWriter(g)
    for n, (sql, status) in enumerate(EDGE_CASES):
        run = status and RunInfo(
            status, user="etl", start_time=f"2026-01-05T02:0{n}:00.000Z", source=f"t:{n}"
        )
        writer.write(extract_lineage(sql, schema=SCHEMA), run or None)
    events = exported(g)
    assert sorted(e["eventType"] for e in events) == [
        "ABORT",
        "COMPLETE",
        "COMPLETE",
        "FAIL",
        "OTHER",
        "RUNNING",
    ]
    namespaces = {d["namespace"] for e in events for d in e["outputs"]}
    assert {"hdfs://nn1:8020", "s3://bucket", "file"} <= namespaces
    transforms = [
        t
        for e in events
        for d in e["outputs"]
        for field in d["facets"].get("columnLineage", {}).get("fields", {}).values()
        for f in field["inputFields"]
        for t in f["transformations"]
    ]
    assert any(t["masking"] for t in transforms) and any(t["description"] for t in transforms)
    assert any(d["facets"].get("columnLineage", {}).get("dataset") for e in events for d in e["outputs"])
    for event in events:
        assert event_errors(event) == [], event["job"]["name"]


def test_every_facet_names_a_schema_the_tests_hold() -> None:
    events = exported_edge_cases_once()
    urls = {facet["_schemaURL"].partition("#")[0] for e in events for _, facet in facets_of(e)}
    assert urls - UNVENDORED <= set(REGISTRY), urls - UNVENDORED - set(REGISTRY)
    assert len(urls - UNVENDORED) == 5  # sql, columnLineage and the platform's three facets


def exported_edge_cases_once() -> list[dict[str, Any]]:
    g = connect("memory:")
    [statement] = extract_lineage(EDGE_CASES[0][0], schema=SCHEMA)
    LineageWriter(g).write(
        [statement], RunInfo("SUCCEEDED", user="etl", start_time="2026-01-05T02:00:00.000Z")
    )
    return exported(g)


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (("run", "runId"), "run-1", "is not a 'uuid'"),
        (("eventTime",), "2026-01-05 02:00:00", "is not a 'date-time'"),
        (("eventType",), "SUCCEEDED", "is not one of"),
        (("job", "facets", "sql", "_schemaURL"), "#/lineagePlatform_sql", "names no schema held here"),
        (("producer",), "lineage platform", "is not a 'uri'"),
        (("job", "facets", "sql", "query"), None, "'query' is a required property"),
        (("outputs", 0, "facets", "lineagePlatform_dataset", "kind"), "hive", "is not one of"),
        (
            ("outputs", 0, "facets", "columnLineage", "fields", "name", "inputFields", 0, "field"),
            3,
            "not of type",
        ),
    ],
)
def test_the_validation_catches_broken_events(path: tuple[Any, ...], value: object, expected: str) -> None:
    [event] = exported_edge_cases_once()
    *parents, last = path
    holder: Any = event
    for key in parents:
        holder = holder[key]
    if value is None:
        del holder[last]
    else:
        holder[last] = value
    errors = event_errors(event)
    assert any(expected in error for error in errors), errors
