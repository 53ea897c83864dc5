"""The results file: scenarios (exact inputs), records, environment, summary.

Precise enough that validate_artifacts.py can recompute every expected value
and re-derive every verdict without MLX.
"""
from __future__ import annotations

from collections import Counter

from ..core import checks, jsonio

# /3: scenarios as op-agnostic call records (scenario/3), each record names its context
# and its checks' kinds name their oracles (harness/oracles/). /2 and /1 are refused.
SCHEMA = "mlx-vjpcheck/results/3"
OLD_SCHEMAS = ("mlx-vjpcheck/results/1", "mlx-vjpcheck/results/2")
TOLERANCE_RULE = ("exact shape; where expected is finite: observed finite and |observed - expected| "
                  "<= atol + rtol * |expected|; where expected is non-finite: observed the same "
                  "non-finite value (NaN for NaN)")


def build(scenarios: list, records: list, environment: dict, kind: str = "run",
          provenance: dict | None = None) -> dict:
    """provenance: what produced the records (harness version and commit, catalog
    digest, command line, selection), for the validator's catalog binding."""
    by_name = {s.name: s for s in scenarios}
    for r in records:
        s = by_name[r["scenario"]]
        r.setdefault("expects_defect", s.expects_defect)
        r.setdefault("defect_tags", list(s.defect_tags))
    return {
        "schema": SCHEMA, "kind": kind, "environment": environment,
        "tolerance_rule": TOLERANCE_RULE,
        "tolerances": {"reference": checks.TOLERANCE, "fd": checks.FD_TOLERANCE},
        "scenarios": {s.name: s.to_dict() for s in scenarios},
        "records": records, "summary": summary(records),
        **({"provenance": provenance} if provenance is not None else {}),
    }


def summary(records: list) -> dict:
    counts = Counter(r["status"] for r in records)
    return {"total": len(records), **{k: counts.get(k, 0) for k in ("pass", "fail", "error", "crashed")},
            "devices": sorted({r["device"] for r in records})}


def exit_code(records: list) -> int:
    return 0 if records and all(r["status"] == "pass" for r in records) else 1


def load(path) -> dict:
    with open(path, encoding="utf-8") as fh:
        data = jsonio.loads(fh.read())
    if isinstance(data, dict) and data.get("schema") in OLD_SCHEMAS:
        raise ValueError(f"{path}: results schema {data['schema']!r} is not read by this release "
                         f"(it reads {SCHEMA}); re-run it with this version")
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not an mlx-vjpcheck results file")
    return data
