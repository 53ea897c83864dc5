"""The validator's re-derivations of a recorded check (numpy only), one per
kind of recheck an ORACLES row can name:

  reference           expected values re-derived from the float64 reference
                      (they must agree with the recorded ones), the check recomputed
  finite_differences  observed must be the recorded gradient (expected holds the
                      differences through MLX's forward); where MLX's forward is right the differences
                      must also land on the reference gradient
  self_consistent     the check recomputed from its own recorded values and rule

Each takes (check, ctx) and returns (reasons, recomputed check); `ctx` is a
Context: the scenario, the recomputed expected values, the whole record.
Nothing recorded is trusted except MLX's observed values.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core import checks

AGREE = 1e-12   # recorded vs recomputed float64 expected values: same maths, same numbers


@dataclass(frozen=True)
class Context:
    scenario: object
    expected: dict
    record: dict
    by_name: dict         # the record's checks by name
    forward_ok: bool      # MLX's recorded forward agrees with the recomputed reference

    def tolerance(self, kind: str = "reference") -> tuple:
        return checks.tolerance(self.scenario.dtype, kind)


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def same(a, b) -> bool:
    a, b = _arr(a), _arr(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def agree(recorded, recomputed) -> bool:
    """Same shape, and equal to AGREE elementwise; a non-finite value must be
    recorded as exactly that value (NaN for NaN)."""
    a, b = _arr(recorded), _arr(recomputed)
    if a.shape != b.shape:
        return False
    finite = np.isfinite(b)
    same_nonfinite = (np.isnan(a) & np.isnan(b)) | (a == b)
    with np.errstate(invalid="ignore", over="ignore"):
        near = np.abs(a - np.where(finite, b, 0.0)) <= AGREE * (1.0 + np.abs(np.where(finite, b, 0.0)))
    return bool(np.all(np.where(finite, near & np.isfinite(a), same_nonfinite)))


def _close(a, b) -> bool:
    """Recorded scalar a against recomputed b: NaN equals NaN, inf equals inf."""
    if a is None or b is None:
        return a is b
    if not isinstance(a, (int, float)) or isinstance(a, bool):
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return abs(a - b) <= 1e-9 * (1 + abs(b))


def _tie_at_recorded(c: dict, new: dict):
    """The recorded worst index, when it ties with the recomputed worst element."""
    idx = c.get("worst_index")
    try:
        err, tol = checks.errors(checks.shaped(new["observed"], new["observed_shape"]),
                                 checks.shaped(new["expected"], new["expected_shape"]), c["atol"], c["rtol"])
        k = tuple(int(i) for i in idx)
        if len(k) == err.ndim and _close(float(err[k]), new["worst_error"]) \
                and _close(float(tol[k]), new["worst_tolerance"]):
            return idx
    except (TypeError, ValueError, IndexError, KeyError):
        pass
    return new["worst_index"]


def _worst_problems(c: dict, new: dict) -> list:
    """The recorded worst element is one the rule ranks worst (ties may pick another)."""
    idx, want = c.get("worst_index"), new["worst_index"]
    if idx != want and want is not None and new["worst_error"] is not None:
        want = _tie_at_recorded(c, new)
    if idx != want or not _close(c.get("worst_error"), new["worst_error"]) \
            or not _close(c.get("worst_tolerance"), new["worst_tolerance"]):
        return [f"recorded worst element {idx} (error {c.get('worst_error')!r}) but recomputation gives "
                f"{new['worst_index']} (error {new['worst_error']!r})"]
    return []


def verdict_matches(c: dict, new: dict) -> list:
    out = []
    if bool(c.get("passed")) != new["passed"] or c.get("passed") not in (True, False):
        out.append(f"recorded passed={c.get('passed')!r} but recomputation gives {new['passed']}")
    elif c.get("reason") != new["reason"]:
        out.append(f"recorded reason {c.get('reason')!r} but recomputation gives {new['reason']!r}")
    if c.get("observed_shape") != new["observed_shape"] or c.get("expected_shape") != new["expected_shape"]:
        out.append("recorded shapes do not match the values")
    return out + _worst_problems(c, new)


def _tolerance_problems(c: dict, want: tuple) -> list:
    got = (c.get("atol"), c.get("rtol"))
    if got != tuple(want):
        return [f"tolerance (atol, rtol)={got} differs from the table's {tuple(want)}"]
    return []


def _kind_problems(c: dict, kind: str) -> list:
    return [] if c.get("kind") == kind else [f"kind {c.get('kind')!r} is not {kind!r}"]


def reference(c: dict, ctx: Context) -> tuple:
    name, tol = c["name"], ctx.tolerance()
    if name not in ctx.expected:
        return [f"the float64 reference has no value named {name!r}"], dict(c, passed=False)
    reasons = _kind_problems(c, "reference") + _tolerance_problems(c, tol)
    if not agree(checks.shaped(c.get("expected"), c.get("expected_shape")), ctx.expected[name]):
        reasons.append("recorded expected values differ from the recomputed float64 reference")
    new = checks.compare(name, checks.shaped(c.get("observed"), c.get("observed_shape")),
                         ctx.expected[name], *tol)
    return reasons + verdict_matches(c, new), new


def finite_differences(c: dict, ctx: Context) -> tuple:
    name, tol = c["name"], ctx.tolerance("fd")
    operand = name.split(":", 1)[1] if name.startswith("fd:") else ""
    if operand not in ctx.scenario.wrt:
        return [f"{name!r} names no differentiated operand"], dict(c, passed=False)
    reasons = _kind_problems(c, "fd") + _tolerance_problems(c, tol)
    grad = ctx.by_name.get(f"grad:{operand}")
    if grad is None or not same(c.get("observed"), grad.get("observed")):
        reasons.append(f"observed values are not the recorded grad:{operand} values")
    fd = c.get("expected")   # the differences MLX's forward gave
    new = checks.compare(name, checks.shaped(c.get("observed"), c.get("observed_shape")),
                         checks.shaped(fd, c.get("expected_shape")), *tol, kind="fd")
    # Central differences of the actual forward follow the maths whenever that
    # forward is right, so they must land on the reference gradient.
    if ctx.forward_ok and not checks.compare(name, fd, ctx.expected[f"grad:{operand}"], *tol)["passed"]:
        reasons.append("recorded finite differences disagree with the reference gradient "
                       "although the forward agrees with the reference")
    return reasons + verdict_matches(c, new), new


def self_consistent(c: dict, ctx: Context) -> tuple:
    """A check with no offline reference (a fuzz oracle): its own values and rule."""
    try:
        new = checks.recheck(c)
    except (KeyError, TypeError, ValueError) as e:
        return [f"cannot recheck ({type(e).__name__}: {e})"], c
    if "passed" not in new:
        return ["no recorded values to recheck"], c
    return verdict_matches(c, new), new
