"""One sweep case, measured in the calling process: the entry's call at one corner,
checked by gradcheck (reference-free: the function itself in float64, differentiated
numerically) under every transform, reduced to plain records the parent can judge.

A corner at which MLX's forward refuses the call is "not applicable"; a transform
MLX has no rule for is "unsupported" (gradcheck's status): neither is a finding.
"""
from __future__ import annotations

import numpy as np

from ..gradcheck import gradcheck
from . import api, corners

BY_ID = {e.id: e for e in api.ENTRIES}


def _mx():
    import mlx.core as mx
    return mx


def _inputs(case: corners.Case) -> list:
    mx = _mx()
    out = []
    casts = case.corner.casts or (None,) * len(case.inputs)
    for arg, v, cast in zip(case.entry.args, case.inputs, casts):
        if v is None:
            out.append(None)
        elif arg.differentiable and not cast:
            # float32 (complex64) point; gradcheck casts to the corner's dtype and to float64
            out.append(mx.array(v.astype(np.complex64 if np.iscomplexobj(v) else np.float32)))
        else:
            out.append(mx.array(v))
    return out


def _forward_refuses(case: corners.Case, xs: list) -> str | None:
    mx = _mx()
    try:
        mx.eval(case.fn(*xs))
    except Exception as e:   # the forward refuses this corner: nothing to differentiate
        return f"{type(e).__name__}: {str(e)[:200]}"
    return None


def conditioning(entry, case: corners.Case, dtype: str) -> tuple:
    """(tolerances or None, the note stating them) for an entry whose weights are
    exp(x_j - y) against a running log-sum y in the dtype (api.Entry.log_sum_scan). Each of
    the scan's n steps rounds y, of size at most M + log n (M = max |x|), by u (M + log n):
    every weight, hence the VJP and the JVP (sums of weights times the cotangent or the
    tangent), is off by up to eps = (n + 1) u (M + log n) relative, with u the dtype's
    unit roundoff; the 1 counts exp's own rounding. Where eps exceeds the dtype's
    tolerance (large inputs), it is the tolerance, and the record says so."""
    from ..gradcheck.options import TOLERANCES
    from ..gradcheck.transforms import UNIT
    floats = [v for a, v in zip(entry.args, case.inputs) if a is not None and a.differentiable and v is not None
              and not np.issubdtype(np.asarray(v).dtype, np.integer) and np.asarray(v).dtype != bool]
    if not entry.log_sum_scan or not floats or not any(v.size for v in floats):
        return None, ""
    big = max(float(np.max(np.abs(v))) for v in floats if v.size)
    n = max(max(v.shape, default=1) for v in floats)
    eps = (n + 1) * UNIT[dtype] * (big + np.log(n))
    atol, rtol = TOLERANCES[dtype]
    if eps <= max(atol, rtol):
        return None, ""
    return ({dtype: (max(atol, eps), max(rtol, eps))},
            f"conditioning: a running log-sum over {n} steps at inputs up to {big:.3g} rounds each weight by "
            f"up to {eps:.2g} relative in {dtype} ((n + 1) u (max|x| + log n)): that is the tolerance here")


def one(entry_id: str, corner_name: str, seed: int, shrink: float = 0.0) -> dict:
    """The record of one case: its checks that did not pass (and their count), notes."""
    entry = BY_ID[entry_id]
    corner = next(c for c in corners.corners(entry) if c.name == corner_name)
    case = corners.case(entry, corner, np.random.default_rng(seed))
    xs = _inputs(case)
    rec = {"entry": entry_id, "function": entry.name, "corner": corner_name, "seed": seed}
    why = _forward_refuses(case, xs)
    if why:
        return dict(rec, status="not applicable", detail=why)
    dtypes = None if corner.dtype in ("float32", "complex64") else [corner.dtype]
    tols, why = conditioning(entry, case, corner.dtype)
    # isolated: this runs in a sweep worker, where a crash is a finding of its own
    report = gradcheck(case.fn, xs, dtypes=dtypes, raise_exception=False, shrink=shrink, seed=seed, isolated=True,
                       tolerances=tols)
    report.notes += [why] if why else []
    kept = [c for c in report.to_json()["checks"] if c["status"] != "pass"]
    status = "fail" if report.failures else "pass"
    return dict(rec, status=status, checks=kept, total=len(report.checks), notes=list(report.notes),
                message=report.message() if report.failures else "", seconds=report.seconds)
