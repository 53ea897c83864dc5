"""gradcheck evidence (gradcheck.json, from `mlx-vjpcheck gradcheck --out`): every
verdict the report states re-derived from what it records.

* each failing check fails by its own recorded numbers: |got - want| > allowed (or
  not a number), the oracle's value finite (gradcheck judges only there); where the
  values are absent, the detail records a shape mismatch (the only failure gradcheck
  records without them). The same rule holds for a sweep's failing checks;
* a passing check records no numbers (gradcheck keeps the worst element of a
  failure only): its verdict is MLX's, and only `replay` shows it again;
* the report passes exactly when no check fails;
* environment.json beside it is the environment inside it.

What no offline check can show: that the user's function gives these values. The
target and its inputs factory are recorded as they were given, with the directory
they were imported from; `mlx-vjpcheck replay` imports them again and compares
every check's verdict. Numpy only.
"""
from __future__ import annotations

import math

from ..evidence import paths
from .groups import Group

SCHEMA = "mlx-vjpcheck/gradcheck-run/1"


def _number(x) -> float | complex | None:
    """A recorded value as a number (a [re, im] pair as complex), None when it is none."""
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, list) and len(x) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x):
        return complex(x[0], x[1])
    return None


def check_problems(c: dict) -> list:
    """Why a recorded failing check does not fail by its own numbers (empty: it does)."""
    if c["status"] != "fail":
        return []
    got, want = _number(c["got"]), _number(c["want"])
    if got is None and want is None and c["got"] is None and c["want"] is None:
        if "shape" in (c["detail"] or ""):
            return []
        return ["fails with neither values nor a shape mismatch recorded"]
    if got is None or want is None:
        return ["fails with only one of MLX's value and the oracle's recorded"]
    allowed = c["allowed"]
    if not math.isfinite(abs(want)):
        return [f"fails where the oracle's value {want!r} is not finite (gradcheck judges only finite ones)"]
    diff = abs(got - want)
    if diff <= allowed:   # NaN compares False: a NaN difference fails, as gradcheck judges it
        return [f"|got - want| = {diff:.6g} is within allowed {allowed:.6g}: the check passes by its own numbers"]
    return []


def check_gradcheck(group: Group, folder: str, doc: dict, files) -> None:
    """Every check of one schema-valid gradcheck.json."""
    where = f"{folder}{paths.GRADCHECK}"
    report = doc["report"]
    for k, c in enumerate(report["checks"]):
        group.item(check_problems(c), f"{where}: check {k} ({c['transform']} [{c['dtype']}] d {c['output']} "
                                      f"/ d {c['input']}, {c['status']})")
    failing = sum(c["status"] == "fail" for c in report["checks"])
    group.check(report["passed"] == (failing == 0),
                f"{where}: passed is {report['passed']} but {failing} checks fail")
    env = files.doc(folder + paths.ENVIRONMENT)
    group.check(env == doc["environment"], f"{where}: {folder}{paths.ENVIRONMENT} is missing or is not "
                                           "the environment recorded inside it")
