"""deploy/ checked without a container engine: YAML, images, mounted files, JanusGraph keys, env vars, commands."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from graph_schema import load_schema
from graph_schema.janusgraph import SCRIPT_FILE, janusgraph_script
from lineage_platform.cli_reference import check_command_line, command_lines, walk
from lineage_platform.config import ENV_PREFIX, Settings
from lineage_platform.errors import LineageError
from tests.conftest import REPO

DEPLOY = REPO / "deploy"
COMPOSE_FILES = sorted((DEPLOY / "compose").glob("*.yml"))
K8S_DIR = DEPLOY / "k8s"
K8S_FILES = sorted(K8S_DIR.glob("*.yaml"))
PROPERTIES_FILES = sorted((REPO / "graph_schema" / "janusgraph").glob("*.properties"))

# Configuration keys of JanusGraph 1.1 for the backends deploy/ uses, from its configuration reference
# (docs/configs/janusgraph-cfg.md in the JanusGraph repository). `[X]` stands for an index name such as `search`.
JANUSGRAPH_KEYS = frozenset(
    {
        "gremlin.graph",
        "cache.db-cache",
        "cache.db-cache-clean-wait",
        "cache.db-cache-size",
        "cache.db-cache-time",
        "cache.tx-cache-size",
        "cache.tx-dirty-size",
        "cluster.max-partitions",
        "graph.graphname",
        "graph.replace-instance-if-exists",
        "graph.set-vertex-id",
        "graph.timestamps",
        "graph.unique-instance-id",
        "graph.use-hostname-for-unique-instance-id",
        "ids.block-size",
        "ids.flush",
        "ids.num-partitions",
        "ids.placement",
        "ids.renew-percentage",
        "ids.renew-timeout",
        "ids.authority.wait-time",
        "index.[X].backend",
        "index.[X].conf-file",
        "index.[X].directory",
        "index.[X].hostname",
        "index.[X].index-name",
        "index.[X].map-name",
        "index.[X].max-result-set-size",
        "index.[X].port",
        "index.[X].elasticsearch.bulk-refresh",
        "index.[X].elasticsearch.connect-timeout",
        "index.[X].elasticsearch.health-request-timeout",
        "index.[X].elasticsearch.interface",
        "index.[X].elasticsearch.retry_on_conflict",
        "index.[X].elasticsearch.scroll-keep-alive",
        "index.[X].elasticsearch.socket-timeout",
        "index.[X].elasticsearch.use-all-field",
        "index.[X].elasticsearch.create.ext.number_of_replicas",
        "index.[X].elasticsearch.create.ext.number_of_shards",
        "index.[X].elasticsearch.http.auth.type",
        "index.[X].elasticsearch.http.auth.basic.username",
        "index.[X].elasticsearch.http.auth.basic.password",
        "index.[X].elasticsearch.ssl.enabled",
        "metrics.enabled",
        "metrics.prefix",
        "metrics.jmx.enabled",
        "query.fast-property",
        "query.force-index",
        "query.hard-max-limit",
        "query.smart-limit",
        "query.batch.enabled",
        "query.batch.has-step-mode",
        "query.batch.limited",
        "query.batch.limited-size",
        "query.batch.properties-mode",
        "query.batch.repeat-step-mode",
        "schema.constraints",
        "schema.default",
        "schema.logging",
        "storage.backend",
        "storage.batch-loading",
        "storage.buffer-size",
        "storage.connection-timeout",
        "storage.directory",
        "storage.hostname",
        "storage.page-size",
        "storage.parallel-backend-ops",
        "storage.password",
        "storage.port",
        "storage.read-only",
        "storage.read-time",
        "storage.root",
        "storage.setup-wait",
        "storage.transactions",
        "storage.username",
        "storage.write-time",
        "storage.lock.backend",
        "storage.lock.clean-expired",
        "storage.lock.expiry-time",
        "storage.lock.local-mutex",
        "storage.lock.retries",
        "storage.lock.wait-time",
        "storage.berkeleyje.cache-mode",
        "storage.berkeleyje.cache-percentage",
        "storage.berkeleyje.isolation-level",
        "storage.berkeleyje.lock-mode",
        "storage.berkeleyje.shared-cache",
        "storage.cql.atomic-batch-mutate",
        "storage.cql.batch-statement-size",
        "storage.cql.compression",
        "storage.cql.keyspace",
        "storage.cql.local-datacenter",
        "storage.cql.local-max-connections-per-host",
        "storage.cql.max-requests-per-connection",
        "storage.cql.protocol-version",
        "storage.cql.read-consistency-level",
        "storage.cql.replication-factor",
        "storage.cql.replication-strategy-class",
        "storage.cql.replication-strategy-options",
        "storage.cql.request-timeout",
        "storage.cql.write-consistency-level",
    }
)


def _yaml_documents(path: Path) -> list[Any]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def _compose_services() -> Iterator[tuple[Path, str, dict[str, Any]]]:
    for path in COMPOSE_FILES:
        (compose,) = _yaml_documents(path)
        for name, service in compose["services"].items():
            yield path, name, service


def _k8s_containers() -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in K8S_FILES:
        for doc in _yaml_documents(path):
            pod = doc.get("spec", {}).get("template", {}).get("spec", {})
            for container in pod.get("containers", []):
                yield path, container


def _kustomization() -> dict[str, Any]:
    return yaml.safe_load((K8S_DIR / "kustomization.yaml").read_text())


def _assert_pinned(image: str, where: str) -> None:
    name, _, tag = image.rpartition(":")
    assert name and "/" not in tag and tag not in ("", "latest"), (
        f"{where}: image {image!r} has no pinned tag"
    )


def test_every_deploy_yaml_file_parses() -> None:
    files = sorted(DEPLOY.rglob("*.yml")) + sorted(DEPLOY.rglob("*.yaml"))
    assert len(files) >= 10
    for path in files:
        assert _yaml_documents(path), f"{path} is empty"


def test_compose_covers_every_part_of_the_scale_out() -> None:
    services = {name for _, name, _ in _compose_services()}
    assert {"janusgraph", "cassandra", "elasticsearch", "kafka", "spark-master", "spark-worker"} <= services
    assert {"graph-server", "collector", "cdc-relay", "graph-init"} <= services


def test_compose_images_are_pinned_and_build_files_exist() -> None:
    for path, name, service in _compose_services():
        _assert_pinned(service["image"], f"{path.name}:{name}")
        if "build" in service:
            context = (path.parent / service["build"]["context"]).resolve()
            assert (context / service["build"]["dockerfile"]).is_file(), f"{path.name}:{name}: no Dockerfile"


def test_compose_bind_mounts_name_existing_files() -> None:
    mounted = set()
    for path, name, service in _compose_services():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith((".", "/")):
                target = (path.parent / source).resolve()
                assert target.exists(), f"{path.name}:{name} mounts missing {source}"
                mounted.add(target)
    janusgraph_files = {p.resolve() for p in PROPERTIES_FILES} | {SCRIPT_FILE.resolve()}
    assert janusgraph_files <= mounted, (
        "every JanusGraph properties file and the schema script must be mounted"
    )


def test_dockerfile_base_is_pinned_and_copies_existing_paths() -> None:
    lines = (DEPLOY / "Dockerfile").read_text().splitlines()
    (base,) = [line.split()[1] for line in lines if line.startswith("FROM ")]
    _assert_pinned(base, "Dockerfile")
    assert any("openjdk-17-jre" in line for line in lines)
    copied = [word for line in lines if line.startswith("COPY ") for word in line.split()[1:-1]]
    assert copied and all((REPO / word).exists() for word in copied), copied


def test_k8s_manifests_are_all_listed_and_images_pinned() -> None:
    kustomization = _kustomization()
    listed = set(kustomization["resources"])
    assert listed == {p.name for p in K8S_FILES} - {"kustomization.yaml"}
    tags = {image["name"]: image["newTag"] for image in kustomization["images"]}
    containers = list(_k8s_containers())
    assert {c["name"] for _, c in containers} >= {"janusgraph", "graph-init", "collector", "cdc-relay"}
    for path, container in containers:
        image = container["image"]
        _assert_pinned(
            f"{image}:{tags[image]}" if image in tags else image, f"{path.name}:{container['name']}"
        )


def test_k8s_config_maps_are_built_from_existing_files() -> None:
    for generator in _kustomization()["configMapGenerator"]:
        for entry in generator.get("files", []):
            source = entry.split("=", 1)[-1]
            assert (K8S_DIR / source).resolve().is_file(), f"configMap {generator['name']}: missing {source}"


def _janusgraph_key_pattern(key: str) -> str:
    index_part = key.split(".")[1] if key.startswith("index.") else ""
    return key.replace(f"index.{index_part}.", "index.[X].", 1) if index_part else key


@pytest.mark.parametrize("properties", PROPERTIES_FILES, ids=lambda p: p.name)
def test_janusgraph_properties_use_known_keys(properties: Path) -> None:
    keys = [
        line.split("=", 1)[0].strip()
        for line in properties.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert "storage.backend" in keys and "gremlin.graph" in keys
    unknown = sorted({key for key in keys if _janusgraph_key_pattern(key) not in JANUSGRAPH_KEYS})
    assert not unknown, f"not JanusGraph 1.1 configuration keys: {unknown}"


def test_unknown_janusgraph_key_is_caught() -> None:
    assert _janusgraph_key_pattern("index.search.elasticsearch.interface") in JANUSGRAPH_KEYS
    assert _janusgraph_key_pattern("index.search.elasticsearch.client-only") not in JANUSGRAPH_KEYS
    assert _janusgraph_key_pattern("storage.cql.keyspce") not in JANUSGRAPH_KEYS


def test_mounted_schema_script_is_generated_and_complete() -> None:
    schema = load_schema()
    script = SCRIPT_FILE.read_text()
    assert script == janusgraph_script(schema), "regenerate graph_schema/janusgraph/schema.groovy"
    names = set(schema.property_keys) | set(schema.vertex_labels) | set(schema.edge_labels)
    names |= set(schema.composite_indexes) | set(schema.mixed_indexes) | set(schema.edge_indexes)
    missing = sorted(name for name in names if f"'{name}'" not in script)
    assert not missing, f"schema.groovy does not mention {missing}"


def _deploy_command_lines() -> Iterator[tuple[str, list[str]]]:
    for path, name, service in _compose_services():
        command = service.get("command")
        if command and command[0] == "lineage":
            yield f"{path.name}:{name}", command
    for path, container in _k8s_containers():
        command = container.get("command", [])
        if command and command[0] == "lineage":
            yield f"{path.name}:{container['name']}", command
    for path in [*DEPLOY.rglob("*.md"), *COMPOSE_FILES, *K8S_FILES, DEPLOY / "Dockerfile"]:
        for words in command_lines(path.read_text()):
            yield str(path.relative_to(REPO)), words


def test_every_lineage_command_in_deploy_files_exists_with_its_options() -> None:
    lines = list(_deploy_command_lines())
    assert len(lines) >= 8
    for where, words in lines:
        try:
            check_command_line(words)
        except LineageError as exc:
            pytest.fail(f"{where}: {' '.join(words)}: {exc}")


def test_command_check_rejects_missing_commands_and_options() -> None:
    with pytest.raises(LineageError, match="has no command 'serv'"):
        check_command_line(["lineage", "graph", "serv"])
    with pytest.raises(LineageError, match="has no option --stor"):
        check_command_line(["lineage", "graph", "serve", "--stor", "x"])
    with pytest.raises(LineageError, match="is a group"):
        check_command_line(["lineage", "graph"])
    assert check_command_line(["lineage", "graph", "…"]).title == "lineage graph"
    with pytest.raises(LineageError, match="has no command 'grph'"):
        check_command_line(["lineage", "grph", "…"])


def _known_env_vars() -> set[str]:
    settings_vars = {ENV_PREFIX + name.upper() for name in Settings.__dataclass_fields__}
    option_vars = {
        param.envvar
        for entry in walk()
        for param in entry.command.params
        if isinstance(param, click.Option) and isinstance(param.envvar, str)
    }
    return settings_vars | option_vars | {"LINEAGE_HOME"}


def test_every_lineage_env_var_in_deploy_files_is_read_by_the_platform() -> None:
    known = _known_env_vars()
    used = {
        var
        for path in [
            *DEPLOY.rglob("*.yml"),
            *DEPLOY.rglob("*.yaml"),
            *DEPLOY.rglob("*.md"),
            DEPLOY / "Dockerfile",
        ]
        for var in re.findall(r"\bLINEAGE_[A-Z_]+\b", path.read_text())
    }
    assert {"LINEAGE_GRAPH_URL", "LINEAGE_KAFKA_BOOTSTRAP", "LINEAGE_SPARK_MASTER"} <= used
    assert used <= known, f"not read by any setting or option: {sorted(used - known)}"


def test_k8s_selectors_match_their_pods_and_services_find_them() -> None:
    pod_labels = []
    services = []
    for path in K8S_FILES:
        for doc in _yaml_documents(path):
            spec = doc.get("spec", {})
            if doc["kind"] in ("Deployment", "StatefulSet"):
                labels = spec["template"]["metadata"]["labels"]
                assert spec["selector"]["matchLabels"].items() <= labels.items(), f"{path.name}: selector"
                pod_labels.append(labels)
            elif doc["kind"] == "Service" and "selector" in spec:
                services.append((path.name, spec["selector"]))
    assert services
    for name, selector in services:
        assert any(selector.items() <= labels.items() for labels in pod_labels), (
            f"{name}: service selects no pod"
        )
