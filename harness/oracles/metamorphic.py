"""metamorphic (sorted-vs-unsorted): the same call under the op's equivalent
params (OpInfo.equivalent_params; gather_mm: sorted_indices off) must give the
same gradients; only where the params differ."""
from __future__ import annotations

from ..core import checks
from . import bridge, recheck
from .base import Oracle


def measure(t, call) -> list:
    alt = {**t.s.params, **t.s.info.equivalent_params}
    if not t.s.info.equivalent_params or alt == t.s.params or not t.grads:
        return []
    try:
        _, other = bridge.Call(t.s, params=alt).vjp(t.cotangent)
    except Exception:   # the equivalent call failing is not this call's defect
        return []
    return [checks.compare(f"equivalent:{n}", t.grads[n], other[n], *t.tol(), kind="metamorphic")
            for n in t.s.wrt]


ORACLE = Oracle("metamorphic", "the call under its equivalent params (sorted flag off) gives the same gradients",
                ("metamorphic",), ("fuzz", "validator"), measure, recheck.self_consistent, confirms=False)
