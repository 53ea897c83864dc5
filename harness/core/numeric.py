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
tests/test_numeric.py checks the bound against exact derivatives.
Non-smooth ops (max, sort, abs) need inputs whose kinks are farther than
H0 from every coordinate; their generators keep values apart by >= 1.
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


def _phi(forward, inputs, name, flat_index, g, t):
    x = inputs[name]
    bumped = x.astype(np.result_type(x.dtype, type(t))).copy()
    bumped.reshape(-1)[flat_index] += t
    y = forward(dict(inputs, **{name: bumped}))
    return np.sum(g * y)


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


def _richardson(forward, inputs, name, i, g) -> tuple:
    """(estimate, estimated error) of phi'(0)."""
    table, scale = [], 0.0
    for k in range(LEVELS):
        h = H0 / 2 ** k
        plus, minus = (float(_phi(forward, inputs, name, i, g, s * h)) for s in (1.0, -1.0))
        scale = max(scale, abs(plus), abs(minus))
        row = [(plus - minus) / (2 * h)]
        for j in range(1, k + 1):   # error terms h^2, h^4, ...: eliminate one per column
            row.append(row[j - 1] + (row[j - 1] - table[k - 1][j - 1]) / (4 ** j - 1))
        table.append(row)
    rounding = 16 * np.finfo(np.float64).eps * scale / (H0 / 2 ** (LEVELS - 1))
    return table[-1][-1], abs(table[-1][-1] - table[-2][-1]) + rounding


def vjp_by_differences(forward, inputs: dict, g, wrt, *, analytic: bool = False) -> dict:
    """{operand: J^T g} for the differentiable operands `wrt`.

    `forward(inputs) -> ndarray` is the op's float64 reference with the index
    arguments bound; `inputs` maps operand names to float64 (or int64) arrays.
    Raises ReferenceUndecided when the estimated error exceeds the bound."""
    g = np.asarray(g, dtype=np.float64)
    inputs = {k: np.asarray(v) for k, v in inputs.items()}
    one = _complex_step if analytic else _richardson
    out = {}
    for name in wrt:
        x = np.asarray(inputs[name], dtype=np.float64)
        base = dict(inputs, **{name: x})
        grad = np.zeros(x.size)
        for i in range(x.size):
            value, err = one(forward, base, name, i, g)
            grad[i] = value
            if err > ACCURACY * (1.0 + abs(value)):
                raise ReferenceUndecided(
                    f"float64 differences for d{name}[{i}] have estimated error {err:.3g}, above "
                    f"{ACCURACY:g} x (1 + |{value:.6g}|): the reference cannot judge this case")
        out[name] = grad.reshape(x.shape)
    return out
