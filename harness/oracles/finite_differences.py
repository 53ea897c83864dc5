"""finite_differences (directional): gradcheck's fast mode. The derivative of
<cot, f(x + h u)> at h=0 against sum_n <grad_n, u_n>, for one random direction u
over all wrt, by gradcheck's central difference (core/differences.py `central`) at
FD_STEP.

Only for ops declared `multilinear`: along any line they are polynomials of
degree <= 2, so the central difference with a large dyadic step is exact (a
shorter step or an extrapolation would only divide the forward's rounding, in a
half dtype too, by less) and float32 rounding is all the tolerance absorbs. For other ops a step this size
measures curvature, not a defect."""
from __future__ import annotations

import numpy as np

from ..core import checks, differences, numeric
from . import bridge, directions, recheck
from .base import Oracle, joint

FD_STEP = 0.5   # dyadic, so x +- h u stays exact for the small integer inputs


def measure(t, call) -> list:
    if not t.s.info.multilinear or not t.grads:
        return []
    u = directions.of_trial(t)
    if any(np.shape(t.grads[n]) != u[n].shape for n in t.s.wrt):
        return []   # a wrongly shaped gradient has no directional derivative; the reference flags it
    base = [(bridge.to_numpy(p), bridge.dtype_name(p)) for p in call.primals]

    def F(s):
        args = [bridge.array(b + s * u[n], dt) for (b, dt), n in zip(base, t.s.wrt)]
        return np.array([numeric.pairing(t.cotangent, bridge.to_numpy(call(*args)))])
    fd = float(differences.central(F, FD_STEP)[0][0])
    analytic = sum(numeric.pairing(t.grads[n], u[n]) for n in t.s.wrt)
    return [checks.compare("fd:directional", np.array(analytic), np.array(fd), *t.tol("fd"),
                           kind="fd_directional")]


ORACLE = Oracle("finite_differences", "v^T J u by one central difference along a random direction (multilinear ops)",
                ("fd_directional",), ("fuzz", "validator"), measure, recheck.self_consistent, confirms=False,
                gradient=joint)
