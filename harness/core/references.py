"""What the float64 reference derives from a bound scenario beyond its
forward (numpy only): the inputs as MLX holds them, the cotangent, the VJP, the
transform oracles' references, and the half-precision tolerance model's term
counts. cases/expected.py builds the expected values from these; the validator's
re-checks (harness/oracles/) re-derive the transform and precision values
from them, so both sides run the same arithmetic.

The reference is fed the numbers MLX holds (core/tensors.py `as_seen`: a
bfloat16 operand's values rounded as MLX rounds them), so what is left between
the two is MLX's arithmetic. Complex operands are complex128 here.

  directional  J u = d/dt f(x + t u) at t = 0 (forward mode, and the cotangent
               half of second order), from the reference forward
  hvp          H u = d/dt J(x + t u)^T g at t = 0, from the hand-written
               reference VJP (the Hessian of <g, f> is symmetric, so this is the
               gradient of <J^T g, u> MLX's VJP of its VJP gives)
  accumulation the per-element term count and magnitude of the half-precision
               tolerance model (core/checks.py)

each within core/numeric.py's stated bound (else numeric.ReferenceUndecided:
no verdict, never a loose pass).
"""
from __future__ import annotations

import contextlib
import warnings

import numpy as np

from . import checks, layout, numeric, objectives
from .tensors import as_seen

# Reference calls the accumulation count may make (one per nonzero element of each
# floating operand and the cotangent); a call beyond it is not judged in half precision.
COUNT_CALLS = 4096


@contextlib.contextmanager
def strict_complex():
    """A reference that drops an imaginary part (a cast to float64 inside it) would
    judge a complex call against the wrong numbers: it raises ReferenceUndecided."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            yield
        except np.exceptions.ComplexWarning as e:
            raise numeric.ReferenceUndecided(f"the reference dropped an imaginary part ({e}): "
                                             "it does not take complex inputs") from None


def logical_inputs(s) -> dict:
    """Every present operand's logical value (integer operands as int64), floating
    ones as MLX holds them in their dtype."""
    ints = s.info.integer_operands
    return {name: layout.logical(t, np.int64) if name in ints else as_seen(layout.logical(t), t.dtype)
            for name, t in s.operands.items()}


def cotangent(s, y) -> np.ndarray:
    if s.objective == "pair_loss":
        return objectives.pair_loss_cotangent(y)
    if s.cotangent is None:
        return np.ones_like(y)
    g = as_seen(layout.logical(s.cotangent), s.cotangent.dtype)
    if g.shape != np.shape(y):
        raise ValueError(f"cotangent shape {g.shape} != output shape {np.shape(y)}")
    return g


def reference_vjp(info, inputs, g, params, wrt) -> dict:
    """The op's hand-written float64 VJP, or its reference differentiated
    (core/numeric.py; raises numeric.ReferenceUndecided beyond the error bound)."""
    if info.reference_vjp is not None:
        return info.reference_vjp(inputs, g, params)
    return numeric.vjp_by_differences(lambda x: info.reference(x, params), inputs, g, wrt,
                                      analytic=info.analytic)


# --- transform references ---------------------------------------------------------------

def direction(s, seed: int) -> dict:
    """A random direction per differentiated operand, entries +-1..3 (never 0, so
    every coordinate counts; small integers, so x + h u stays exact), complex
    operands with an imaginary part of the same kind. A function of the scenario
    and the seed alone: a check records the seed, and the validator regenerates u."""
    rng = np.random.RandomState(int(seed) % (2**32))
    inputs = logical_inputs(s)
    out = {}
    for n in s.wrt:
        shape = np.shape(inputs[n])
        out[n] = (rng.randint(1, 4, size=shape) * rng.choice((-1, 1), size=shape)).astype(np.float64)
        if np.iscomplexobj(inputs[n]):
            out[n] = out[n] + 1j * (rng.randint(1, 4, size=shape) * rng.choice((-1, 1), size=shape))
    return out


def _along(inputs, u, t):
    return dict(inputs, **{n: inputs[n] + t * np.asarray(d) for n, d in u.items()})


def directional(s, u: dict) -> np.ndarray:
    """J u: the derivative of the reference forward along direction u (operand -> array)."""
    inputs = logical_inputs(s)
    with strict_complex():
        return numeric.directional(lambda t: s.info.reference(_along(inputs, u, t), s.params), "J u",
                                   quadratic=s.info.multilinear)


def hvp(s, g, u: dict) -> dict:
    """H u per differentiated operand: the derivative of the hand-written reference
    VJP along u, every operand at once (numeric.ReferenceUndecided where it has no
    stated bound, or the op has no hand-written VJP)."""
    if s.info.reference_vjp is None:
        raise numeric.ReferenceUndecided("no hand-written reference VJP to differentiate again")
    inputs = logical_inputs(s)
    shapes = {n: np.shape(inputs[n]) for n in s.wrt}

    def flat(t):
        grads = s.info.reference_vjp(_along(inputs, u, t), g, s.params)
        return np.concatenate([np.ravel(grads[n]) for n in s.wrt] + [np.zeros(0)])
    with strict_complex():
        both = numeric.directional(flat, "H u", quadratic=s.info.multilinear)
    out, at = {}, 0
    for n in s.wrt:
        size = int(np.prod(shapes[n], dtype=np.int64))
        out[n] = both[at:at + size].reshape(shapes[n])
        at += size
    return out


# --- the half-precision tolerance model: terms and magnitude per element -----------------

def accumulation(s, exp: dict) -> dict:
    """{check name: accumulation record} where the half-precision model applies
    (core/checks.py): ops declared multilinear with a hand-written VJP, float16 /
    bfloat16 calls, plain VJPs.

    A multilinear op is affine in each floating operand X (and its VJP in the
    cotangent and in every operand but the one differentiated). With every other
    floating operand at its absolute value, c_ij = F(X = e_j) - F(X = 0) is the
    coefficient of X_j in output element i, and the element sums
    n_i = sum over X of #{j : c_ij X_j != 0} terms of total magnitude
    sum over X of sum_j |c_ij X_j| (exact for sums of operands, an over-estimate
    by the number of factors for products of them). Raises
    numeric.ReferenceUndecided where the bound is useless (k u >= 1/2) or the
    count would take more than COUNT_CALLS reference calls: a precision limit,
    not a verdict."""
    info = s.info
    if not (info.multilinear and checks.accumulates(s.dtype) and info.has_vjp
            and s.objective == "vjp" and info.reference_vjp is not None):
        return {}
    inputs = logical_inputs(s)
    floats = [n for n in inputs if n not in info.integer_operands]
    g = cotangent(s, exp["forward"])
    calls = 2 * sum(int(np.count_nonzero(inputs[n])) for n in floats) + int(np.count_nonzero(g))
    if calls > COUNT_CALLS:
        raise numeric.ReferenceUndecided(f"the half-precision bound needs {calls} reference calls "
                                         f"(more than {COUNT_CALLS}): a precision limit")
    base = dict(inputs, **{n: np.abs(inputs[n]) for n in floats})
    forward = lambda i: {"forward": info.reference(i, s.params)}   # noqa: E731
    backward = lambda i, c: {f"grad:{w}": v for w, v in info.reference_vjp(i, c, s.params).items()  # noqa: E731
                             if w in s.wrt}
    counts = _count(forward, base, floats, skip={})
    grads = _count(lambda i: backward(i, np.abs(g)), base, floats, skip={f"grad:{w}": w for w in s.wrt})
    for key, (n, m) in _count_cotangent(lambda c: backward(base, c), np.abs(g)).items():
        n0, m0 = grads.get(key, (0, 0.0))
        grads[key] = (n + n0, m + m0)
    counts.update(grads)
    depth = 2 * len(floats) + 1
    recs = {k: checks.accumulation(n, m, depth, s.dtype) for k, (n, m) in counts.items()}
    if not all(checks.useful(r) for r in recs.values()):
        most = max(int(np.max(r["terms"], initial=0)) for r in recs.values())
        raise numeric.ReferenceUndecided(f"{s.dtype} accumulation of up to {most} terms: the rounding "
                                         "bound exceeds the values (a precision limit)")
    return recs


def _add(acc: dict, key, col, weight) -> None:
    col = np.abs(np.asarray(col)).astype(np.float64)   # |complex| first: astype would drop the imaginary part
    n, m = acc.get(key, (np.zeros(col.shape, dtype=np.int64), np.zeros(col.shape)))
    acc[key] = (n + (col != 0), m + col * weight)


def _count(fn, base, floats, skip) -> dict:
    """Terms and magnitude of fn's outputs from each floating operand's coefficients
    (an output named in `skip` does not depend on the operand it names)."""
    acc = {}
    for x in floats:
        v = np.asarray(base[x], dtype=np.float64)
        zero = fn(dict(base, **{x: np.zeros(v.shape)}))
        for key in zero:
            acc.setdefault(key, (np.zeros(np.shape(zero[key]), dtype=np.int64), np.zeros(np.shape(zero[key]))))
        for j in np.flatnonzero(v):
            unit = np.zeros(v.size)
            unit[j] = 1.0
            out = fn(dict(base, **{x: unit.reshape(v.shape)}))
            for key, col in out.items():
                if skip.get(key) != x:
                    _add(acc, key, np.asarray(col) - np.asarray(zero[key]), v.ravel()[j])
    return acc


def _count_cotangent(fn, g) -> dict:
    """The VJP is linear in the cotangent: its columns are the VJPs of unit cotangents."""
    acc = {}
    for j in np.flatnonzero(g):
        unit = np.zeros(g.size)
        unit[j] = 1.0
        for key, col in fn(unit.reshape(g.shape)).items():
            _add(acc, key, col, g.ravel()[j])
    return acc
