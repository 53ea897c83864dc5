"""jvp_consistency: MLX against itself. <J u, v> from mx.jvp equals <u, J^T v>
from the VJP (the inner-product identity JAX's check_vjp uses), for a random
direction u (core/numeric.py's inner_product_identity, which gradcheck's identity
check uses too). Ops whose MLX primitives have no JVP give no check."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core import checks, numeric
from . import bridge, directions, recheck
from .base import Oracle, joint


def measure(t, call) -> list:
    if not t.grads:
        return []
    mx = bridge.mx()
    u = directions.of_trial(dataclasses.replace(t, seed=t.seed + 1))
    if any(np.shape(t.grads[n]) != u[n].shape for n in t.s.wrt):
        return []
    tangents = [bridge.like(u[n], p) for n, p in zip(t.s.wrt, call.primals)]
    try:
        _, (ju,) = mx.jvp(call, call.primals, tangents)
        mx.eval(ju)
    except Exception:   # no JVP rule: nothing to compare
        return []
    ju = bridge.to_numpy(ju)
    if ju.shape != np.shape(t.cotangent):   # a JVP of the wrong shape: the forward_mode oracle reports it
        return [checks.compare("jvp:inner_product", ju, np.asarray(t.cotangent), *t.tol("fd"), kind="jvp")]
    forward_side, reverse_side = numeric.inner_product_identity(
        t.cotangent, ju, [t.grads[n] for n in t.s.wrt], [u[n] for n in t.s.wrt])
    return [checks.compare("jvp:inner_product", np.array(forward_side), np.array(reverse_side),
                           *t.tol("fd"), kind="jvp")]


ORACLE = Oracle("jvp_consistency", "<J u, v> from mx.jvp equals <u, J^T v> from the VJP",
                ("jvp",), ("fuzz", "validator"), measure, recheck.self_consistent, confirms=False,
                gradient=joint)
