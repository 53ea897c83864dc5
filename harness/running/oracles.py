"""The MLX side of the oracles in judging/oracles.py: measure(trial, call) ->
[check] for each row that runs here. The checks have the results-schema shape
of core/checks.py; their `kind` names the row that made them.

Generic over the op registry: the op record says what applies (exact
arithmetic, multilinearity, equivalent params); nothing here names an op.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..cases import expected
from ..core import checks
from . import execute

# "Exactly zero": the smallest positive float64 normal, so checks.compare never
# divides by a zero tolerance, yet any nonzero float32 value fails.
EXACT = 2.2250738585072014e-308
FD_STEP = 0.5   # dyadic, so x +- h u stays exact for the small integer inputs


def _mx():
    import mlx.core as mx
    return mx


def _tol(t, kind="reference") -> tuple:
    return checks.tolerance(t.s.dtype, kind)


def reference(t, call) -> list:
    """Every value the float64 reference has (forward, each gradient, loss, H @ 1,
    no_vjp) against what MLX gave, within the dtype tolerance."""
    return [checks.compare(k, t.observed[k], t.expected[k], *_tol(t)) for k in t.expected]


def exact_zero(t, call) -> list:
    """Where the op is declared `exact` and runs in float32, exact zeros wherever
    the reference is exactly zero: rows nothing selects and contributions that
    cancel must not pick up even a denormal."""
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


def _objective64(s, y: np.ndarray, g: np.ndarray) -> float:
    """The scalar whose gradient the VJP is, evaluated in float64 from MLX's forward."""
    if s.objective == "pair_loss":
        flat = y.reshape((-1,) + y.shape[-2:])
        return float(0.5 * np.sum((flat[0] - flat[1]) ** 2))
    return float(np.sum(g * y))


def fd_elementwise(t, call) -> list:
    """Central differences through the actual MLX forward, one element at a time,
    where the scenario asks for them (fd_step): the check's expected values are
    the differences, its observed values MLX's gradient."""
    s, h = t.s, t.s.fd_step
    if not h or not t.grads:
        return []
    mx, out = _mx(), []
    for pos, name in enumerate(s.wrt):
        base = execute.to_numpy(call.primals[pos]).astype(np.float32)
        grad = np.zeros(base.shape)
        for i in np.ndindex(base.shape):
            vals = []
            for sign in (1.0, -1.0):
                bumped = base.copy()
                bumped[i] += np.float32(sign * h)
                args = list(call.primals)
                args[pos] = mx.array(bumped, dtype=call.primals[pos].dtype)
                vals.append(_objective64(s, execute.to_numpy(call(*args)), t.cotangent))
            grad[i] = (vals[0] - vals[1]) / (2 * h)
        out.append(checks.compare(f"fd:{name}", t.grads[name], grad, *_tol(t, "fd"), kind="fd"))
    return out


def metamorphic(t, call) -> list:
    """The same call under the op's equivalent params (gather_mm: sorted_indices
    off) must give the same gradients; only where the params differ."""
    alt = {**t.s.params, **t.s.info.equivalent_params}
    if not t.s.info.equivalent_params or alt == t.s.params or not t.grads:
        return []
    try:
        _, other = execute.Call(t.s, params=alt).vjp(t.cotangent)
    except Exception:   # the equivalent call failing is not this call's defect
        return []
    return [checks.compare(f"equivalent:{n}", t.grads[n], other[n], *_tol(t), kind="metamorphic")
            for n in t.s.wrt]


def directions(t) -> dict:
    """Random direction with entries +-1..3 (never 0, so every coordinate counts;
    small integers, so x + h u stays exact)."""
    rng = np.random.RandomState(t.seed % (2**32))
    shapes = {n: expected.logical_inputs(t.s)[n].shape for n in t.s.wrt}
    return {n: (rng.randint(1, 4, size=shape) * rng.choice((-1, 1), size=shape)).astype(np.float64)
            for n, shape in shapes.items()}


def fd_directional(t, call) -> list:
    """Gradcheck's fast mode: central difference of <cot, f(x + h u)> at h=0
    against sum_n <grad_n, u_n>, for one random direction u over all wrt.

    Only for ops declared `multilinear`: along any line they are polynomials of
    degree <= 2, so a central difference with a large dyadic step is exact and
    float32 rounding is all the tolerance absorbs. For other ops a step this
    size measures curvature, not a defect."""
    if not t.s.info.multilinear or not t.grads:
        return []
    mx, u = _mx(), directions(t)
    if any(np.shape(t.grads[n]) != u[n].shape for n in t.s.wrt):
        return []   # a wrongly shaped gradient has no directional derivative; the reference flags it
    base = [(execute.to_numpy(p), p.dtype) for p in call.primals]
    vals = []
    for sign in (1.0, -1.0):
        args = [mx.array((b + sign * FD_STEP * u[n]).astype(np.float32), dtype=dt)
                for (b, dt), n in zip(base, t.s.wrt)]
        vals.append(float(np.sum(t.cotangent * execute.to_numpy(call(*args)))))
    fd = (vals[0] - vals[1]) / (2 * FD_STEP)
    analytic = sum(float(np.sum(t.grads[n] * u[n])) for n in t.s.wrt)
    return [checks.compare("fd:directional", np.array(analytic), np.array(fd), *_tol(t, "fd"),
                           kind="fd_directional")]


def backward_twice(t, call) -> list:
    """A second VJP must repeat the first. Where it does not, the second result
    is also held against the reference (so nondeterminism that happened to
    match once is still confirmed as a defect)."""
    if not t.grads:
        return []
    try:   # a fresh call: new buffers, so a VJP reading past one shows it
        _, again = execute.Call(t.s).vjp(t.cotangent)
    except Exception as e:
        return [dict(checks.compare("twice:vjp", np.array(0.0), np.array(1.0), 0.0, 0.0, kind="twice"),
                     reason=f"second VJP raised: {type(e).__name__}")]
    out = [checks.compare(f"twice:{n}", again[n], t.grads[n], *_tol(t), kind="twice") for n in t.s.wrt]
    if not all(c["passed"] for c in out):
        out += [checks.compare(f"grad:{n}#2", again[n], t.expected[f"grad:{n}"], *_tol(t)) for n in t.s.wrt]
    return out


def jvp_consistency(t, call) -> list:
    """MLX against itself: <J u, v> from mx.jvp equals <u, J^T v> from the VJP
    (the inner-product identity JAX's check_vjp uses), for a random direction u.
    Ops whose MLX primitives have no JVP give no check."""
    if not t.grads:
        return []
    mx = _mx()
    u = directions(dataclasses.replace(t, seed=t.seed + 1))
    if any(np.shape(t.grads[n]) != u[n].shape for n in t.s.wrt):
        return []
    tangents = [mx.array(u[n].astype(np.float32), dtype=p.dtype) for n, p in zip(t.s.wrt, call.primals)]
    try:
        _, (ju,) = mx.jvp(call, call.primals, tangents)
        mx.eval(ju)
    except Exception:   # no JVP rule: nothing to compare
        return []
    forward_side = float(np.sum(execute.to_numpy(ju) * t.cotangent))
    reverse_side = sum(float(np.sum(t.grads[n] * u[n])) for n in t.s.wrt)
    return [checks.compare("jvp:inner_product", np.array(forward_side), np.array(reverse_side),
                           *_tol(t, "fd"), kind="jvp")]
