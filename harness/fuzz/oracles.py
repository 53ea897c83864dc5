"""The oracles a fuzz case is judged by, listed once in ORACLES. Each returns
check records (the results-schema shape from harness.core.checks) whose `kind`
says which oracle made them.

  reference           MLX against the float64 reference (forward and every
                      gradient), plus exact zeros where no index selects
  metamorphic         sorted_indices=True against the same call unsorted
  finite_differences  v^T J u through the actual MLX forward, random direction
  backward_twice      a second VJP of the same call gives the same gradients
  jvp_consistency     <J u, v> from mx.jvp equals <u, J^T v> from the VJP
  vjp_exception       the VJP raised where the forward succeeded (an error,
                      recorded in the record's `error` field, not a check)

Generic over the op registry: nothing here names an op.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import ops
from ..cases import expected
from ..core import checks
from ..running import execute

# "Exactly zero": the smallest positive float64 normal, so checks.compare never
# divides by a zero tolerance, yet any nonzero float32 value fails.
EXACT = 2.2250738585072014e-308
FD_STEP = 0.5   # dyadic, so x +- h u stays exact for the small integer inputs


def _mx():
    import mlx.core as mx
    return mx


def run_vjp(s, cot: np.ndarray):
    """(forward, {operand: grad}) of the scenario's MLX call, as float64 numpy."""
    mx = _mx()
    call = execute.Call(s)
    c = mx.array(cot.astype(np.float32), dtype=getattr(mx, ops.dtype_of(s)))
    (y,), grads = mx.vjp(call, call.primals, [c])
    mx.eval(y, *grads)
    return execute.to_numpy(y), {n: execute.to_numpy(g) for n, g in zip(s.wrt, grads)}


def forward(s) -> np.ndarray:
    mx = _mx()
    call = execute.Call(s)
    y = call(*call.primals)
    mx.eval(y)
    return execute.to_numpy(y)


def exact_zeros(s) -> bool:
    """Whether a float32 case may be held to exact zeros: ops declared `exact`
    (sums of small-integer products, which float32 computes exactly)."""
    return ops.dtype_of(s) == "float32" and ops.get(s.op).exact


def reference(s, exp: dict, y, grads) -> list:
    """Forward and gradients within the dtype tolerance; where exact_zeros(s),
    also exact zeros wherever the reference is exactly zero: rows nothing
    selects and contributions that cancel must not pick up even a denormal."""
    tol = checks.tolerance(ops.dtype_of(s))
    out = [checks.compare("forward", y, exp["forward"], *tol)]
    out += [checks.compare(f"grad:{n}", grads[n], exp[f"grad:{n}"], *tol) for n in s.wrt]
    for n in s.wrt if exact_zeros(s) else ():
        want = np.asarray(exp[f"grad:{n}"])
        mask = want == 0
        if mask.any() and grads[n].shape == mask.shape:
            with np.errstate(over="ignore"):   # error / tiny tolerance may overflow to inf
                out.append(checks.compare(f"zero:{n}", grads[n][mask], want[mask], EXACT, 0.0,
                                          kind="exact_zero"))
    return out


def metamorphic(s, cot, grads) -> list:
    """Only where the flag can matter: a sorted call of an op that has the flag."""
    if not (s.sorted_indices and ops.get(s.op).has_sorted_flag):
        return []
    try:
        _, other = run_vjp(dataclasses.replace(s, sorted_indices=False), cot)
    except Exception:   # the unsorted control failing is not the sorted call's defect
        return []
    tol = checks.tolerance(ops.dtype_of(s))
    return [checks.compare(f"sorted_vs_unsorted:{n}", grads[n], other[n], *tol, kind="metamorphic")
            for n in s.wrt]


def _objective(call, args, cot) -> float:
    return float(np.sum(cot * execute.to_numpy(call(*args))))


def directions(s, seed: int) -> dict:
    """Random direction with entries +-1..3 (never 0, so every coordinate counts;
    small integers, so x + h u stays exact)."""
    rng = np.random.RandomState(seed % (2**32))
    shapes = {n: expected.logical_inputs(s)[n].shape for n in s.wrt}
    return {n: (rng.randint(1, 4, size=shape) * rng.choice((-1, 1), size=shape)).astype(np.float64)
            for n, shape in shapes.items()}


def finite_differences(s, cot, grads, seed: int = 0) -> list:
    """Gradcheck's fast mode: central difference of <cot, f(x + t u)> at t=0
    against sum_n <grad_n, u_n>, for one random direction u over all wrt.

    Only for ops declared `multilinear`: along any line they are polynomials of
    degree <= 2, so a central difference with a large dyadic step is exact and
    float32 rounding is all the tolerance absorbs. For other ops a step this
    size measures curvature, not a defect."""
    if not ops.get(s.op).multilinear:
        return []
    mx = _mx()
    call = execute.Call(s)
    u = directions(s, seed)
    if any(np.shape(grads[n]) != u[n].shape for n in s.wrt):
        return []   # a wrongly shaped gradient has no directional derivative; the reference flags it
    base = [(execute.to_numpy(p), p.dtype) for p in call.primals]
    vals = []
    for sign in (1.0, -1.0):
        args = [mx.array((b + sign * FD_STEP * u[n]).astype(np.float32), dtype=dt)
                for (b, dt), n in zip(base, s.wrt)]
        vals.append(_objective(call, args, cot))
    fd = (vals[0] - vals[1]) / (2 * FD_STEP)
    analytic = sum(float(np.sum(grads[n] * u[n])) for n in s.wrt)
    rec = checks.compare("fd:directional", np.array(analytic), np.array(fd),
                         *checks.tolerance(ops.dtype_of(s), "fd"), kind="fd")
    return [rec]


def backward_twice(s, cot, grads, exp=None) -> list:
    """A second VJP must repeat the first. Where it does not, the second result
    is also held against the reference (so nondeterminism that happened to
    match once is still confirmed as a defect)."""
    try:
        _, again = run_vjp(s, cot)
    except Exception as e:
        return [dict(checks.compare("twice:vjp", np.array(0.0), np.array(1.0), 0.0, 0.0,
                                    kind="twice"), reason=f"second VJP raised: {type(e).__name__}")]
    tol = checks.tolerance(ops.dtype_of(s))
    out = [checks.compare(f"twice:{n}", again[n], grads[n], *tol, kind="twice") for n in s.wrt]
    if exp is not None and not all(c["passed"] for c in out):
        out += [checks.compare(f"grad:{n}#2", again[n], exp[f"grad:{n}"], *tol) for n in s.wrt]
    return out


def jvp_consistency(s, cot, grads, seed: int = 0) -> list:
    """MLX against itself: <J u, v> from mx.jvp equals <u, J^T v> from the VJP
    (the inner-product identity JAX's check_vjp uses), for a random direction u.
    Ops whose MLX primitives have no JVP give no check."""
    mx = _mx()
    call = execute.Call(s)
    u = directions(s, seed + 1)
    if any(np.shape(grads[n]) != u[n].shape for n in s.wrt):
        return []
    tangents = [mx.array(u[n].astype(np.float32), dtype=p.dtype) for n, p in zip(s.wrt, call.primals)]
    try:
        _, (ju,) = mx.jvp(call, call.primals, tangents)
        mx.eval(ju)
    except Exception:   # no JVP rule: nothing to compare
        return []
    forward_side = float(np.sum(execute.to_numpy(ju) * cot))
    reverse_side = sum(float(np.sum(grads[n] * u[n])) for n in s.wrt)
    return [checks.compare("jvp:inner_product", np.array(forward_side), np.array(reverse_side),
                           *checks.tolerance(ops.dtype_of(s), "fd"), kind="jvp")]


@dataclass(frozen=True)
class Case:
    """What every oracle may look at: the scenario, the reference's expected
    values, the cotangent, and MLX's forward and gradients from the first VJP."""
    s: object
    expected: dict
    cotangent: np.ndarray
    forward: np.ndarray
    grads: dict
    fd_seed: int = 0


@dataclass(frozen=True)
class Oracle:
    name: str
    kinds: tuple          # `kind` of the checks it makes
    run: Callable | None  # Case -> [check]; None: judged from the VJP's exception
    confirms: bool        # its failure alone makes a finding (the rest need the reference)


# Priority order: a finding is named after the first oracle that flags it.
ORACLES = (
    Oracle("vjp_exception", (), None, confirms=True),
    Oracle("reference", ("reference", "exact_zero"),
           lambda c: reference(c.s, c.expected, c.forward, c.grads), confirms=True),
    Oracle("metamorphic", ("metamorphic",), lambda c: metamorphic(c.s, c.cotangent, c.grads),
           confirms=False),
    Oracle("finite_differences", ("fd",),
           lambda c: finite_differences(c.s, c.cotangent, c.grads, c.fd_seed), confirms=False),
    Oracle("backward_twice", ("twice",),
           lambda c: backward_twice(c.s, c.cotangent, c.grads, c.expected), confirms=False),
    Oracle("jvp_consistency", ("jvp",),
           lambda c: jvp_consistency(c.s, c.cotangent, c.grads, c.fd_seed), confirms=False),
)
NAMES = tuple(o.name for o in ORACLES)
CONFIRMING = tuple(o.name for o in ORACLES if o.confirms)
KIND_TO_ORACLE = {k: o.name for o in ORACLES for k in o.kinds}


def run_all(case: Case) -> list:
    """Every oracle's checks, in table order."""
    return [c for o in ORACLES if o.run is not None for c in o.run(case)]
