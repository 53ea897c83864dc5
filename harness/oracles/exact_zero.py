"""exact_zero: where the op is declared `exact` and runs in float32, exact zeros
wherever the reference is exactly zero: rows nothing selects and contributions
that cancel must not pick up even a denormal. Its reproducer holds the zeros of
the rule to exact zeros (cases/reproducer.py `exact`)."""
from __future__ import annotations

import numpy as np

from ..core import checks
from . import recheck
from .base import Oracle

# "Exactly zero": the smallest positive float64 normal, so checks.compare never
# divides by a zero tolerance, yet any nonzero float32 value fails.
EXACT = 2.2250738585072014e-308
# The reproducer's fragment: the comparison's extra condition and its comment.
REPRO_TEST = ' and (name == "forward" or not np.any(have[name][w == 0] != 0))'
REPRO_NOTE = "; zeros exact"


def measure(t, call) -> list:
    if not (t.s.info.exact and t.s.dtype == "float32"):
        return []
    out = []
    for n in t.s.wrt:
        want = np.asarray(t.expected[f"grad:{n}"])
        mask = want == 0
        if mask.any() and t.grads[n].shape == mask.shape:
            with np.errstate(over="ignore"):   # error / tiny tolerance may overflow to inf
                out.append(checks.compare(f"zero:{n}", t.grads[n][mask], want[mask], EXACT, 0.0,
                                          kind="exact_zero"))
    return out


ORACLE = Oracle("exact_zero", "exact zeros wherever the float64 reference is exactly zero (exact ops, float32)",
                ("exact_zero",), ("fuzz", "validator"), measure, recheck.self_consistent, confirms=True,
                first_order=True, symptom="unselected-nonzero")
