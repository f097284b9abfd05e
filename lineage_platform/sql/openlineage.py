"""Export lineage records as OpenLineage ``columnLineage`` dataset facets."""

from __future__ import annotations

from typing import Any

from lineage_platform.model import DIRECT_TRANSFORMS, ColumnEdge, StatementLineage

COLUMN_LINEAGE_SCHEMA = (
    "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet"
)
PRODUCER = "https://github.com/lineage-platform/lineage-platform"


def to_openlineage_facet(record: StatementLineage, namespace: str = "hive") -> dict[str, dict[str, Any]]:
    """One ``columnLineage`` facet per output dataset of ``record``, keyed by the output's name.

    Strong edges become ``DIRECT`` transformations, weak ones ``INDIRECT``; row-level edges (target is the
    dataset itself) go to the facet's ``dataset`` list, column-specific ones under ``fields``.

    >>> from lineage_platform.sql import extract_lineage
    >>> [r] = extract_lineage("INSERT INTO db.o SELECT sha2(a, 256) AS h FROM db.t")
    >>> to_openlineage_facet(r)["db.o"]["fields"]["h"]["inputFields"][0]["transformations"]
    [{'type': 'DIRECT', 'subtype': 'TRANSFORMATION', 'description': '', 'masking': True}]
    """
    facets: dict[str, dict[str, Any]] = {}
    for output in record.outputs:
        fields: dict[str, dict[str, Any]] = {}
        dataset: list[dict[str, Any]] = []
        for edge in record.column_edges:
            if edge.target == output.name:
                dataset.append(_input_field(edge, namespace))
            elif edge.target.startswith(output.name + "."):
                column = edge.target[len(output.name) + 1 :]
                fields.setdefault(column, {"inputFields": []})["inputFields"].append(
                    _input_field(edge, namespace)
                )
        facets[output.name] = {
            "_producer": PRODUCER,
            "_schemaURL": COLUMN_LINEAGE_SCHEMA,
            "fields": fields,
            "dataset": dataset,
        }
    return facets


def _input_field(edge: ColumnEdge, namespace: str) -> dict[str, Any]:
    table, _, column = edge.source.rpartition(".")
    transformation: dict[str, Any] = {
        "type": "DIRECT" if edge.transform in DIRECT_TRANSFORMS else "INDIRECT",
        "subtype": edge.transform,
        "description": "" if edge.key_path is None else f"key path {edge.key_path}",
        "masking": edge.masking,
    }
    return {"namespace": namespace, "name": table, "field": column, "transformations": [transformation]}
