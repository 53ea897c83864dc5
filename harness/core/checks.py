"""Elementwise agreement checks (a small flat module, after jax public_test_util).

Rule: pass iff shapes match exactly, and elementwise: where the expected value
is finite, the observed value is finite and |observed - expected| <= atol +
rtol * |expected|; where the expected value is non-finite (a reference at an
infinite input, or a recorded value re-derived), the observed value is the
same non-finite value (NaN for NaN, +inf for +inf, -inf for -inf). Each check
keeps its worst element (error / tolerance; a non-finite mismatch has error
inf) so the evidence says how close the nearest miss was.
"""
from __future__ import annotations

import numpy as np

# Per-dtype tolerance (atol, rtol) for comparing MLX against float64 references.
TOLERANCE = {
    "float32": (3e-5, 3e-5),
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    "float64": (1e-12, 1e-12),
}
# Finite differences of a function that is affine in the perturbed operand are
# exact in real arithmetic; the allowance only absorbs float32 rounding of the
# forward divided by the step.
FD_TOLERANCE = {"float32": (1e-3, 1e-3), "float16": (5e-2, 5e-2),
                "bfloat16": (2e-1, 2e-1), "float64": (1e-8, 1e-8)}


def tolerance(dtype: str, kind: str = "reference") -> tuple:
    table = FD_TOLERANCE if kind == "fd" else TOLERANCE
    if dtype not in table:
        raise ValueError(f"no tolerance for dtype {dtype!r}")
    return table[dtype]


def _as_array(x):
    return np.asarray(x, dtype=np.float64)


def errors(obs: np.ndarray, exp: np.ndarray, atol: float, rtol: float) -> tuple:
    """(error, tolerance) per element. Matching non-finite values have error 0;
    a non-finite value on one side only, or a different one, has error inf."""
    finite = np.isfinite(exp)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(finite, np.abs(obs - np.where(finite, exp, 0.0)), 0.0)
        err = np.where(finite & ~np.isfinite(obs), np.inf, err)
        same = (np.isnan(obs) & np.isnan(exp)) | (obs == exp)
        err = np.where(~finite & ~same, np.inf, err)
        tol = atol + rtol * np.where(finite, np.abs(exp), 0.0)
    return err, tol


def _worst(err: np.ndarray, tol: np.ndarray) -> tuple:
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(err == 0, 0.0, err / tol)
    return np.unravel_index(int(np.argmax(ratio)), err.shape)


def compare(name: str, observed, expected, atol: float, rtol: float, kind="reference") -> dict:
    obs, exp = _as_array(observed), _as_array(expected)
    rec = {"name": name, "kind": kind, "atol": atol, "rtol": rtol,
           "observed_shape": list(obs.shape), "expected_shape": list(exp.shape),
           "observed": obs.tolist(), "expected": exp.tolist(),
           "worst_index": None, "worst_error": None, "worst_tolerance": None}
    if obs.shape != exp.shape:
        return dict(rec, passed=False, reason=f"shape {obs.shape} != {exp.shape}")
    if obs.size == 0:
        return dict(rec, passed=True, reason="empty")
    err, tol = errors(obs, exp, atol, rtol)
    worst = _worst(err, tol)
    bad = err > tol
    ok = not bool(np.any(bad))
    nonfinite = int(np.sum(bad & ~np.isfinite(obs)))
    reason = "ok" if ok else f"{int(np.sum(bad))} of {err.size} elements outside tolerance" + (
        f" ({nonfinite} non-finite)" if nonfinite else "")
    return dict(rec, passed=ok, worst_index=[int(v) for v in worst], worst_error=float(err[worst]),
                worst_tolerance=float(tol[worst]), reason=reason)


def shaped(values, shape) -> np.ndarray:
    """Recorded values as an array of their recorded shape: nested lists lose
    trailing zero-size axes ((1, 0, 1) is written [[]]), the shape keeps them."""
    arr = _as_array(values)
    if isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape) \
            and arr.size == int(np.prod(shape, dtype=np.int64)) and list(arr.shape) != shape:
        return arr.reshape(shape)
    return arr


def recheck(rec: dict) -> dict:
    """Recompute a recorded check from its own observed/expected values and rule."""
    if rec.get("observed") is None or rec.get("expected") is None:
        return dict(rec)
    return compare(rec["name"], shaped(rec["observed"], rec.get("observed_shape")),
                   shaped(rec["expected"], rec.get("expected_shape")), rec["atol"], rec["rtol"],
                   rec.get("kind", "reference"))
