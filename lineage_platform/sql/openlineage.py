"""Export lineage records as OpenLineage ``columnLineage`` dataset facets."""

from __future__ import annotations

from typing import Any

from lineage_platform.model import DIRECT_TRANSFORMS, ColumnEdge, StatementLineage

COLUMN_LINEAGE_SCHEMA = (
    "https://openlineage.io/spec/facets/1-1-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet"
)
PRODUCER = "https://github.com/lineage-platform/lineage-platform"
OBJECT_STORE_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs"})
"""Schemes whose OpenLineage dataset name is the object key, without a leading slash (naming spec)."""


def dataset_identifier(name: str, table_namespace: str = "hive") -> tuple[str, str]:
    """OpenLineage (namespace, name) of a platform dataset name, per the OpenLineage naming spec: a path
    ``scheme://authority/path`` is namespace ``scheme://authority`` and name ``/path`` (an object key without the
    slash for S3/GCS), a local path ``/dir`` or ``file:///dir`` is namespace ``file`` and name ``/dir``; a table
    is ``name`` in ``table_namespace`` (``hive://metastore-host:port`` when known).

    >>> dataset_identifier("hdfs://nn:8020/warehouse/t")
    ('hdfs://nn:8020', '/warehouse/t')
    >>> dataset_identifier("s3://bucket/logs/day=1"), dataset_identifier("/tmp/out")
    (('s3://bucket', 'logs/day=1'), ('file', '/tmp/out'))
    >>> dataset_identifier("dwd.orders", "hive://metastore:9083")
    ('hive://metastore:9083', 'dwd.orders')
    """
    if name.startswith("/"):
        return "file", name
    scheme, separator, rest = name.partition("://")
    if not separator:
        return table_namespace, name
    if scheme == "file":
        return "file", "/" + rest.lstrip("/")
    authority, _, path = rest.partition("/")
    return f"{scheme}://{authority}", path if scheme in OBJECT_STORE_SCHEMES else "/" + path


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
    dataset_namespace, dataset = dataset_identifier(table, namespace)
    transformation: dict[str, Any] = {
        "type": "DIRECT" if edge.transform in DIRECT_TRANSFORMS else "INDIRECT",
        "subtype": edge.transform,
        "description": "" if edge.key_path is None else f"key path {edge.key_path}",
        "masking": edge.masking,
    }
    return {
        "namespace": dataset_namespace,
        "name": dataset,
        "field": column,
        "transformations": [transformation],
    }
