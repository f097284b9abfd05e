"""`lineage collect --http`: N OpenLineage RunEvents posted one request each, against one ``/api/v1/lineage/batch``.

Baseline: what the OpenLineage clients' HTTP transport does, one ``POST /api/v1/lineage`` per event (on one kept-alive
connection). Project: the same events in one ``POST /api/v1/lineage/batch``. Each run starts its own receiver
(subprocess, as users run it) on a fresh embedded store; the events are Spark-shaped COMPLETE events (symlinked Hive
tables, schema facets, SQL) of distinct runs.

Usage: python benchmarks/bench_http_batch.py [EVENTS]   (default 200)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(
    0, str(Path(__file__).resolve().parent.parent)
)  # the events of tests/ingest/test_http_receiver.py

import requests
from openlineage.client.event_v2 import RunState
from openlineage.client.serde import Serde

from tests.ingest.test_http_receiver import spark_event


def events(count: int) -> list[dict[str, Any]]:
    """``count`` COMPLETE events of distinct runs, as the client serialises them."""
    out = []
    for n in range(count):
        event = json.loads(
            Serde.to_json(
                spark_event(RunState.COMPLETE, f"2026-01-06T02:{n // 60 % 60:02d}:{n % 60:02d}.000Z")
            )
        )
        event["run"]["runId"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench-http-batch/{n}"))
        out.append(event)
    return out


def timed_run(batch: bool, payload: list[dict[str, Any]]) -> float:
    """Seconds to post ``payload`` to a fresh receiver, one request per event or as one batch."""
    with tempfile.TemporaryDirectory() as work:
        command = [sys.executable, "-c", "from lineage_platform.cli import main; main()", "collect"]
        command += ["--http", "127.0.0.1:0", "--graph", f"embedded:{work}/graph"]
        command += ["--dead-letter-file", f"{work}/dead.jsonl"]
        receiver = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            url = "http://" + receiver.stderr.readline().split()[-1]
            session = requests.Session()
            started = time.perf_counter()
            if batch:
                response = session.post(f"{url}/api/v1/lineage/batch", json=payload, timeout=600)
                assert response.status_code == 200, response.text
            else:
                for event in payload:
                    response = session.post(f"{url}/api/v1/lineage", json=event, timeout=60)
                    assert response.status_code == 201, response.text
            return time.perf_counter() - started
        finally:
            receiver.terminate()
            receiver.communicate(timeout=60)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    payload = events(count)
    for label, batch in (("one request per event (baseline)", False), ("one /batch request", True)):
        seconds = timed_run(batch, payload)
        print(f"{label:34} {count} events in {seconds:6.2f} s = {count / seconds:6.0f} events/s")


if __name__ == "__main__":
    main()
