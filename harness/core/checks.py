"""Elementwise agreement checks (a small flat module, after jax public_test_util).

Rule: pass iff shapes match exactly, every observed value is finite, and
|observed - expected| <= atol + rtol * |expected| elementwise. Each check keeps
its worst element so the evidence says how close the nearest miss was.
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


def compare(name: str, observed, expected, atol: float, rtol: float, kind="reference") -> dict:
    obs, exp = _as_array(observed), _as_array(expected)
    rec = {"name": name, "kind": kind, "atol": atol, "rtol": rtol,
           "observed_shape": list(obs.shape), "expected_shape": list(exp.shape),
           "observed": obs.tolist(), "expected": exp.tolist(),
           "worst_index": None, "worst_error": None, "worst_tolerance": None}
    if obs.shape != exp.shape:
        return dict(rec, passed=False, reason=f"shape {obs.shape} != {exp.shape}")
    if not np.all(np.isfinite(obs)):
        bad = np.argwhere(~np.isfinite(obs))[0]
        return dict(rec, passed=False, worst_index=[int(v) for v in bad],
                    reason="non-finite value in observed")
    if obs.size == 0:
        return dict(rec, passed=True, reason="empty")
    err = np.abs(obs - exp)
    tol = atol + rtol * np.abs(exp)
    worst = np.unravel_index(int(np.argmax(err / tol)), err.shape)
    ok = bool(np.all(err <= tol))
    return dict(rec, passed=ok, worst_index=[int(v) for v in worst],
                worst_error=float(err[worst]), worst_tolerance=float(tol[worst]),
                reason="ok" if ok else f"{int(np.sum(err > tol))} of {err.size} elements outside tolerance")


def recheck(rec: dict) -> dict:
    """Recompute a recorded check from its own observed/expected values and rule."""
    if rec.get("observed") is None or rec.get("expected") is None:
        return dict(rec)
    return compare(rec["name"], rec["observed"], rec["expected"], rec["atol"], rec["rtol"],
                   rec.get("kind", "reference"))
