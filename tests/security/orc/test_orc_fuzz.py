"""Corruption fuzzing of encrypted ORC files written by ORC Java (PySpark, ``corpus/``, see write_corpus.py).

Bytes are flipped in every region of the file (header, each stripe's index, encrypted index, data, encrypted
data and footer, the encrypted stripe statistics, metadata, footer, PostScript), wrapped local keys are
damaged (the footer's and each stripe's copy), and the file is cut at every section boundary. Every mutant
is read by `lineage orc read` with every key granted, in a worker process so that a crash of ORC C++ is seen:
the outcome must be a clean one-line error naming the file (and the stripe, for damage inside one) or the
true rows; never a crash or a traceback. Only a flip inside a data stream may give other rows: ORC has no
checksum and AES-CTR no MAC, and decoded stripes are only checked against their statistics (count, minimum,
maximum), which a changed value in the middle of the range passes. The fast suite runs a seeded sample bounded in time; the slow one runs all.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from fuzz_worker import SOURCE, run
from orc_mutants import Region, regions

FAST_SECONDS = 3.0
FLIPS_PER_REGION = 6
DATA_REGIONS = ("data", "encrypted data")


def mutants(seed: int, flips: int) -> tuple[list[Region], list[dict[str, Any]]]:
    """The file's regions and the mutants: ``flips`` random flips per region, key damage, truncations."""
    rng = random.Random(seed)
    tail, found = regions(SOURCE)
    specs: list[dict[str, Any]] = []
    for region in found:
        for _ in range(flips):
            at = rng.randrange(region.start, region.end)
            specs.append({"kind": "flip", "at": at, "xor": rng.randrange(1, 256), "region": region.name})
    for variant in range(len(tail.variants)):
        byte = rng.randrange(16)
        specs.append(
            {"kind": "key", "stripe": None, "variant": variant, "byte": byte, "region": "footer key"}
        )
        specs.append({"kind": "key", "stripe": 0, "variant": variant, "byte": byte, "region": "stripe 0 key"})
    for boundary in sorted({r.start for r in found[1:]} | {r.end for r in found[:-1]}):
        specs.append({"kind": "truncate", "at": boundary, "region": "truncated"})
    return found, specs


def _problems(reports: list[dict[str, Any]], digest: str) -> list[str]:
    """What is wrong with each report: a crash, a traceback, an error that is not one line naming the file
    (and the stripe, for a flip inside one), or rows other than the true ones outside the data streams."""
    problems = []
    for report in reports:
        region = report["region"]
        where = f"{region} {report['kind']} at {report.get('at', report.get('byte'))}"
        if report["outcome"] in ("crash", "traceback"):
            problems.append(f"{where}: {report['outcome']}: {report['message']}")
        elif report["outcome"] == "error":
            message = report["message"]
            stripe = region.split()[1] if region.startswith("stripe ") and report["kind"] == "flip" else None
            if (
                "\n" in message
                or "mutant.orc: " not in message
                or (stripe and f"stripe {stripe}" not in message)
            ):
                problems.append(f"{where}: unclear error {message!r}")
        elif report["digest"] != digest and not region.endswith(DATA_REGIONS):
            problems.append(f"{where}: wrong rows without an error")
    return problems


def _digest(policy: Path) -> str:
    [report] = run([{"kind": "none", "region": "none"}], policy)
    assert report["outcome"] == "rows", report
    return report["digest"]


def test_a_sample_of_mutants_fails_cleanly_or_reads(policy: Path) -> None:
    _, specs = mutants(seed=20, flips=1)
    random.Random(20).shuffle(specs)
    digest = _digest(policy)
    reports = run(specs, policy, budget=FAST_SECONDS)
    assert reports and _problems(reports, digest) == []


@pytest.mark.slow
def test_every_region_fails_cleanly_or_reads(policy: Path) -> None:
    found, specs = mutants(seed=7, flips=FLIPS_PER_REGION)
    kinds = {"stripe " + r.name.split(" ", 2)[2] if r.stripe is not None else r.name for r in found}
    assert kinds == {
        "header", "stripe index", "stripe encrypted index", "stripe data", "stripe encrypted data",
        "stripe footer", "encrypted stripe statistics", "metadata", "footer", "postscript", "postscript length",
    }  # fmt: skip
    digest = _digest(policy)
    reports = run(specs, policy)
    assert len(reports) == len(specs)
    assert _problems(reports, digest) == []
