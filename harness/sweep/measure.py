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
    # isolated: this runs in a sweep worker, where a crash is a finding of its own
    report = gradcheck(case.fn, xs, dtypes=dtypes, raise_exception=False, shrink=shrink, seed=seed, isolated=True)
    kept = [c for c in report.to_json()["checks"] if c["status"] != "pass"]
    status = "fail" if report.failures else "pass"
    return dict(rec, status=status, checks=kept, total=len(report.checks), notes=list(report.notes),
                message=report.message() if report.failures else "", seconds=report.seconds)
