"""A generic float64 reference VJP, for ops whose rule is long to write by hand.

J^T g is assembled one input coordinate at a time from derivatives of the
scalar phi(t) = <g, f(x + t e_i)> at t = 0, where f is the op's float64
reference forward:

* complex step (ops whose reference is analytic: only +, -, *, /, exp, log,
  sqrt, sin, cos, sums and matmuls on its floating inputs):
  phi'(0) = Im phi(i h) / h with h = 1e-100. No cancellation, so the result is
  the derivative to float64 rounding: relative error about 1e-16.
* otherwise, central differences D(h) = (phi(h) - phi(-h)) / 2h at
  h = H0 / 2^k, k = 0..3, combined by Richardson extrapolation into an
  O(h^8) estimate. The error is estimated as |T_3 - T_2| (the last two
  diagonal entries of the Richardson table), plus rounding
  (16 eps max|phi| / h_min).

The stated bound: a reference gradient is returned only when every
coordinate's estimated error is at most ACCURACY * (1 + |value|), i.e. at
least 1e4 times tighter than the float32 tolerance (3e-5) the MLX gradient is
judged by; otherwise ReferenceUndecided is raised and the case is not judged.
A non-finite estimate is undecided too. tests/core/test_numeric.py checks the
bound against exact derivatives.
Non-smooth ops (max, sort, abs) need inputs whose kinks are farther than
H0 from every coordinate; their generators keep values apart by >= 1.

Complex operands or outputs (complex64 calls, complex128 here) follow MLX's
convention (running/execute.py states it): the gradient of a call with
cotangent g is the real gradient of L(z) = Re sum(conj(g) * f(z)) packed as
dL/dRe z + i dL/dIm z. It is assembled from central differences of L along
each coordinate's real and imaginary directions (the complex step needs a
real input, so it is not used there), within the same bound.

`directional(F)` is the same machinery for an array-valued F(t): dF/dt at
t = 0, elementwise, within the same bound. It gives the second-order and
forward-mode references: J u = d/dt f(x + t u) and the Hessian-vector product
H u = d/dt J(x + t u)^T g (cases/expected.py).
"""
from __future__ import annotations

import warnings

import numpy as np

ACCURACY = 3e-9          # 1e-4 x the float32 tolerance of checks.TOLERANCE
H0 = 1.0 / 16            # first central-difference step; inputs are O(1) small integers
LEVELS = 4
COMPLEX_STEP = 1e-100


class ReferenceUndecided(ValueError):
    """The float64 reference cannot certify a gradient here (not accurate enough)."""


def as_float64(x) -> np.ndarray:
    """x in float64, or in complex128 when it is complex (its imaginary part kept): the
    precision every float64 reference computes in."""
    return np.asarray(x, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)


def _phi(forward, inputs, name, flat_index, g, t):
    x = inputs[name]
    bumped = x.astype(np.result_type(x.dtype, type(t))).copy()
    bumped.reshape(-1)[flat_index] += t
    y = forward(dict(inputs, **{name: bumped}))
    return np.sum(g * y)


def pairing(g, y) -> float:
    """Re sum(conj(g) * y): the real pairing of a cotangent with an output."""
    return float(np.real(np.sum(np.conj(g) * y)))


def inner_product_identity(v, ju, grads, us) -> tuple:
    """(<v, J u>, <J^T v, u>): the two sides of the identity between a JVP (ju = J u)
    and a VJP (grads = J^T v, one per input, us the direction's parts), which MLX's
    forward and reverse modes must satisfy (JAX's check_vjp). One definition for
    gradcheck's identity check and the catalog's jvp_consistency oracle."""
    return pairing(v, ju), sum(pairing(g, u) for g, u in zip(grads, us))


def _complex_step(forward, inputs, name, i, g) -> tuple:
    """A reference that drops the imaginary part (a cast to float64, abs, max)
    would give 0 silently: casts raise here, and a plain central difference
    must agree to 1e-6, so a wrongly declared `analytic` cannot pass."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        value = float(np.imag(_phi(forward, inputs, name, i, g, 1j * COMPLEX_STEP)) / COMPLEX_STEP)
    h = 1e-4
    plus, minus = (float(np.real(_phi(forward, inputs, name, i, g, s * h))) for s in (1.0, -1.0))
    check = (plus - minus) / (2 * h)
    if abs(check - value) > 1e-6 * (1.0 + abs(value) + max(abs(plus), abs(minus))):
        raise ReferenceUndecided(f"complex step and central difference disagree for d{name}[{i}] "
                                 f"({value:.9g} vs {check:.9g}): the reference is not analytic")
    return value, 0.0


def richardson(fn, levels: int = LEVELS, kinks: bool = True, h0: float = H0) -> tuple:
    """(estimate, estimated error) of F'(0), elementwise, for F(t) -> array
    (real or complex): central differences at H0 / 2^k, k < levels, combined
    by Richardson extrapolation; error |T_last - T_before| plus rounding. `h0`
    replaces H0 as the first step.

    A kink at t = 0 (ties, |x| at 0, a clamp at its bound) makes every central
    difference the average of the two one-sided slopes, which extrapolates
    cleanly to a number that is no derivative. It shows in the second difference
    over the step, a(h) = (F(h) - 2 F(0) + F(-h)) / h: h F''(0) for a smooth F
    (halving with h), the jump in slope at a kink (not shrinking). Where
    |a(h_min)| > 3/4 |a(2 h_min)| and above the bound, the error is inf.
    `kinks=False` skips the test (one evaluation fewer) for an F known to be a
    polynomial in t; with one level there is no table to extrapolate, and the
    error is the rounding term alone (exact only for such an F)."""
    table, scale, bends = [], 0.0, []
    centre = np.asarray(fn(0.0)) if kinks else None
    for k in range(levels):
        h = h0 / 2 ** k
        plus, minus = (np.asarray(fn(s * h)) for s in (1.0, -1.0))
        with np.errstate(invalid="ignore", over="ignore"):
            scale = np.maximum(scale, np.maximum(np.abs(plus), np.abs(minus)))
            bends.append(np.abs(plus - 2 * centre + minus) / h if kinks else 0.0)
            row = [(plus - minus) / (2 * h)]
            for j in range(1, k + 1):   # error terms h^2, h^4, ...: eliminate one per column
                row.append(row[j - 1] + (row[j - 1] - table[k - 1][j - 1]) / (4 ** j - 1))
        table.append(row)
    rounding = 16 * np.finfo(np.float64).eps * scale / (h0 / 2 ** (levels - 1))
    value = table[-1][-1]
    with np.errstate(invalid="ignore"):
        err = (np.abs(value - table[-2][-1]) if levels > 1 else 0.0) + rounding
        kink = ((bends[-1] > 0.75 * bends[-2]) & (bends[-1] > ACCURACY * (1.0 + np.abs(value)))
                if kinks and levels > 1 else False)
        return value, np.where(kink, np.inf, err)


def _richardson(forward, inputs, name, i, g, direction=1.0) -> tuple:
    """(estimate, estimated error) of phi'(0), phi the real pairing along `direction`."""
    def phi(t):
        x = inputs[name]
        bumped = x.astype(np.result_type(x.dtype, type(direction))).copy()
        bumped.reshape(-1)[i] += t * direction
        return pairing(g, forward(dict(inputs, **{name: bumped})))
    value, err = richardson(phi)
    return float(value), float(err)


def decided(value, err, what: str) -> np.ndarray:
    """`value` when every element is within the stated bound, else ReferenceUndecided."""
    value, err = np.asarray(value), np.asarray(err)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(value) | ~(err <= ACCURACY * (1.0 + np.abs(value)))
    if np.any(bad):
        k = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape)) if bad.ndim else ()
        v = np.asarray(value)[k]
        shown = f"{float(v.real):.6g}" if not np.iscomplexobj(v) or v.imag == 0 else f"{complex(v):.6g}"
        raise ReferenceUndecided(
            f"float64 differences for {what}{list(k) if k else ''} have estimated error "
            f"{float(np.asarray(err)[k]):.3g} on {shown} (a kink, or above {ACCURACY:g} x (1 + |value|), "
            "or not finite): the reference cannot judge this case")
    return value


def directional(fn, what: str = "a directional derivative", *, quadratic: bool = False) -> np.ndarray:
    """dF/dt at t = 0 for F(t) -> array, within the stated bound (else ReferenceUndecided).
    `quadratic`: F is declared a polynomial of degree <= 2 in t (an op declared
    `multilinear` promises that for its forward along any line, and so for its
    VJP): two levels then suffice, since every central difference is exact and
    the error estimate is rounding alone; a record that promises too much (a
    higher degree) shows in the estimate and is refused, never judged.
    A polynomial has no kink, so that test is skipped. Otherwise the steps start
    at H0 / 8: a direction's entries reach 3, and a smooth function near the edge
    of its domain (arccos, tan, a logarithm) needs the shorter steps for its
    extrapolation to meet the bound (the rounding term, which grows as the steps
    shrink, stays near 1e-11 of the values)."""
    if quadratic:
        return decided(*richardson(fn, 2, kinks=False), what)
    return decided(*richardson(fn, LEVELS, h0=H0 / 8), what)


def vjp_by_differences(forward, inputs: dict, g, wrt, *, analytic: bool = False) -> dict:
    """{operand: J^T g} for the differentiable operands `wrt`.

    `forward(inputs) -> ndarray` is the op's float64 reference with the index
    arguments bound; `inputs` maps operand names to float64 (or int64) arrays.
    Raises ReferenceUndecided when the estimated error exceeds the bound."""
    g = np.asarray(g)
    g = g.astype(np.complex128) if np.iscomplexobj(g) else g.astype(np.float64)
    inputs = {k: np.asarray(v) for k, v in inputs.items()}
    if np.iscomplexobj(g) or any(np.iscomplexobj(inputs[n]) for n in wrt):
        return _complex_vjp(forward, inputs, g, wrt)
    one = _complex_step if analytic else _richardson
    out = {}
    for name in wrt:
        x = np.asarray(inputs[name], dtype=np.float64)
        base = dict(inputs, **{name: x})
        grad = np.zeros(x.size)
        for i in range(x.size):
            value, err = one(forward, base, name, i, g)
            grad[i] = decided(value, err, f"d{name}[{i}]")
        out[name] = grad.reshape(x.shape)
    return out


def _complex_vjp(forward, inputs, g, wrt) -> dict:
    """MLX's convention: dL/dRe z + i dL/dIm z, L = Re sum(conj(g) * f(z)); a real
    operand gets the real part only."""
    out = {}
    for name in wrt:
        x = np.asarray(inputs[name])
        base = dict(inputs, **{name: x})
        parts = (1.0, 1j) if np.iscomplexobj(x) else (1.0,)
        grad = np.zeros(x.size, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)
        for i in range(x.size):
            for d in parts:
                value, err = _richardson(forward, base, name, i, g, d)
                grad[i] += d * decided(value, err, f"d{name}[{i}]{'.imag' if d == 1j else ''}")
        out[name] = grad.reshape(x.shape)
    return out
