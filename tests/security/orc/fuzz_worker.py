"""Run mutants of an encrypted ORC file through `lineage orc read` in a worker process; ``run`` drives it.

    python fuzz_worker.py FILE KEYS POLICY MUTANTS.json FIRST

For each mutant from index FIRST it prints ``start N`` before reading and then one JSON line: ``{"n": N,
"outcome": "rows", "digest": ...}`` (sha256 of the JSON lines written), ``{"outcome": "error", "message":
...}`` for a platform error (what the CLI prints), or ``{"outcome": "traceback", ...}`` for anything else.
A crash (a signal from ORC C++) ends the process after ``start N``: the parent sees which mutant did it.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from orc_mutants import mutate
from write_corpus import CORPUS

from lineage_platform.cli import invoke
from lineage_platform.security.orc.tail import read_tail

HERE = Path(__file__).parent
SOURCE = CORPUS / "zlib.orc"


def run(specs: list[dict[str, Any]], policy: Path, budget: float | None = None) -> list[dict[str, Any]]:
    """Each mutant's report, with its spec, read by worker processes (``policy`` sits next to the key store
    ``keys.json``); a worker that dies is restarted after the mutant it died on. With a ``budget``
    (seconds), mutants left when it runs out are not run."""
    listing = policy.with_name("mutants.json")
    listing.write_text(json.dumps(specs))
    reports: dict[int, dict[str, Any]] = {}
    deadline = None if budget is None else time.monotonic() + budget
    first = 0
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE.parents[2]), os.environ.get("PYTHONPATH", "")]),
    }
    while first < len(specs):
        keys = policy.with_name("keys.json")
        command = [sys.executable, str(HERE / "fuzz_worker.py"), str(SOURCE), str(keys), str(policy)]
        worker = subprocess.Popen(
            [*command, str(listing), str(first)], stdout=subprocess.PIPE, text=True, env=env
        )
        current = None
        assert worker.stdout is not None
        for line in worker.stdout:
            if line.startswith("start "):
                current = int(line.split()[1])
            elif line.startswith("{"):
                report = json.loads(line)
                reports[report["n"]] = report
                current = None
            if deadline is not None and time.monotonic() > deadline and current is None:
                worker.kill()
                break
        code = worker.wait()
        if current is None:
            break
        reports[current] = {"n": current, "outcome": "crash", "message": f"worker died: {_signal(code)}"}
        first = current + 1
    return [{**specs[n], **report} for n, report in sorted(reports.items())]


def _signal(code: int) -> str:
    return signal.Signals(-code).name if code < 0 else f"exit {code}"


def main(source: str, keys: str, policy: str, mutants: str, first: int) -> None:
    """Read every mutant from ``first`` on; see the module docstring."""
    data = Path(source).read_bytes()
    tail = read_tail(source)
    specs = json.loads(Path(mutants).read_text())
    with tempfile.TemporaryDirectory() as scratch:
        target, output = Path(scratch) / "mutant.orc", Path(scratch) / "rows.jsonl"
        for n in range(first, len(specs)):
            print(f"start {n}", flush=True)
            target.write_bytes(mutate(data, tail, specs[n]) if specs[n]["kind"] != "none" else data)
            output.unlink(missing_ok=True)
            args = ["orc", "read", str(target), "--user", "ann", "--policy", policy, "--kms", f"local:{keys}"]
            args += ["--table", "hr.people", "--format", "jsonl", "--output", str(output)]
            try:
                result = invoke(args)
            except BaseException as error:
                report = {"outcome": "traceback", "message": f"{type(error).__name__}: {error}"}
            else:
                if result.success:
                    report = {"outcome": "rows", "digest": hashlib.sha256(output.read_bytes()).hexdigest()}
                else:
                    report = {"outcome": "error", "message": str(result.exception)}
            print(json.dumps({"n": n, **report}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
