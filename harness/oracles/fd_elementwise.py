"""fd_elementwise: central differences through the actual MLX forward, one
element at a time, where the scenario asks for them (fd_step): the check's
expected values are the differences, its observed values MLX's gradient. A
complex operand is stepped along its real and its imaginary part (MLX's
convention: the gradient is dL/dRe + i dL/dIm). Its failure alone confirms
nothing: a wrong forward moves the differences too.

The difference is gradcheck's central difference (core/differences.py `central`, the
formula its Richardson estimates are built from), taken alone: the scenario's step is
chosen where the objective is affine along it and the stepped values are exact in the
call's dtype, so the difference is exact and a shorter step (or extrapolation) would
only add the forward's rounding, divided by a smaller step."""
from __future__ import annotations

import numpy as np

from ..core import checks, differences, numeric
from . import bridge, recheck as rc
from .base import Oracle


def measure(t, call) -> list:
    s, h = t.s, t.s.fd_step
    if not h or not t.grads:
        return []
    out = []
    for pos, name in enumerate(s.wrt):
        base = bridge.to_numpy(call.primals[pos])
        parts = (1.0, 1j) if np.iscomplexobj(base) else (1.0,)
        grad = np.zeros(base.shape, dtype=base.dtype)
        for i in np.ndindex(base.shape):
            for d in parts:
                grad[i] += d * _derivative(t, call, pos, base, i, d, h)
        out.append(checks.compare(f"fd:{name}", t.grads[name], grad, *t.tol("fd"), kind="fd"))
    return out


def _objective64(s, y: np.ndarray, g: np.ndarray) -> float:
    """The scalar whose gradient the VJP is, evaluated in float64 from MLX's forward."""
    if s.objective == "pair_loss":
        flat = y.reshape((-1,) + y.shape[-2:])
        return float(0.5 * np.sum((flat[0] - flat[1]) ** 2))
    return numeric.pairing(g, y)


def _derivative(t, call, pos, base, i, direction, h) -> float:
    """d/ds objective(x + s direction e_i) at 0 through MLX's forward, by the central
    difference at h."""
    def F(s):
        bumped = base.copy()
        bumped[i] += s * direction
        args = list(call.primals)
        args[pos] = bridge.like(bumped, call.primals[pos])
        return np.array([_objective64(t.s, bridge.to_numpy(call(*args)), t.cotangent)])
    return float(differences.central(F, h)[0][0])


def recheck(c: dict, ctx) -> tuple:
    """observed must be the recorded gradient (expected holds the differences through
    MLX's forward); where MLX's forward is right the differences must also land on the
    reference gradient."""
    name, tol = c["name"], ctx.tolerance("fd")
    operand = name.split(":", 1)[1] if name.startswith("fd:") else ""
    if operand not in ctx.scenario.wrt:
        return [f"{name!r} names no differentiated operand"], dict(c, passed=False)
    reasons = rc.kind_problems(c, "fd") + rc.tolerance_problems(c, tol)
    grad = ctx.by_name.get(f"grad:{operand}")
    if grad is None or not checks.same_values(c.get("observed"), grad.get("observed")):
        reasons.append(f"observed values are not the recorded grad:{operand} values")
    fd = c.get("expected")   # the differences MLX's forward gave
    new = checks.compare(name, checks.shaped(c.get("observed"), c.get("observed_shape")),
                         checks.shaped(fd, c.get("expected_shape")), *tol, kind="fd")
    # Central differences of the actual forward follow the maths whenever that
    # forward is right, so they must land on the reference gradient.
    if ctx.forward_ok and not rc.passes(fd, ctx.expected[f"grad:{operand}"], *tol):
        reasons.append("recorded finite differences disagree with the reference gradient "
                       "although the forward agrees with the reference")
    return reasons + rc.verdict_matches(c, new), new


ORACLE = Oracle("fd_elementwise", "elementwise central differences through MLX's own forward (fd_step)",
                ("fd",), ("run", "gate", "validator"), measure, recheck, confirms=False, first_order=True)
