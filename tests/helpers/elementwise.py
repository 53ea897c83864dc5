"""Checks shared by the tests of the table-driven elementwise ops (ops/elementwise.py,
binary.py, comparison.py).

`against_differences(op)`: every catalog scenario's hand-written reference VJP
against float64 differences of the reference forward, computed here
independently of core/numeric.py's stated-bound machinery (whose first step,
1/16, is too long for arccos near 0.75 to decide): the complex step (exact to
rounding) where the op record says its forward is analytic and the inputs are
real, else central differences with a step of 1e-6 along every coordinate (and
its imaginary direction, for a complex operand: MLX's convention, the gradient
is dL/dRe + i dL/dIm of L = Re sum(conj(g) f)). Convention scenarios sit on
kinks, where differences say nothing: they are left out. Piecewise constant
forwards that round (astype) are differenced with core/numeric.py, whose
dyadic steps the rounding keeps.
"""
from __future__ import annotations

import numpy as np

from helpers import wrong_vjp as W
from mlx_vjpcheck.cases import expected
from mlx_vjpcheck.core import numeric

H = 1e-6
COMPLEX_STEP = 1e-30


def _pairing(g, y) -> float:
    return float(np.real(np.sum(np.conj(g) * y)))


def central(forward, inputs, g, name) -> np.ndarray:
    """dL/dx (+ i dL/dIm x for complex x) by central differences of step H."""
    x = np.asarray(inputs[name])
    parts = (1.0, 1j) if np.iscomplexobj(x) else (1.0,)
    grad = np.zeros(x.shape, dtype=x.dtype)
    for i in np.ndindex(x.shape):
        for d in parts:
            vals = []
            for sign in (1.0, -1.0):
                bumped = x.astype(np.result_type(x, type(d))).copy()
                bumped[i] += sign * H * d
                vals.append(_pairing(g, forward(dict(inputs, **{name: bumped}))))
            grad[i] += d * (vals[0] - vals[1]) / (2 * H)
    return grad


def complex_step(forward, inputs, g, name) -> np.ndarray:
    x = np.asarray(inputs[name], dtype=np.float64)
    grad = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        bumped = x.astype(np.complex128)
        bumped[i] += 1j * COMPLEX_STEP
        grad[i] = np.imag(np.sum(g * forward(dict(inputs, **{name: bumped})))) / COMPLEX_STEP
    return grad


def differences(s, name) -> np.ndarray:
    inputs = expected.logical_inputs(s)
    y = s.info.reference(inputs, s.params)
    g = expected.cotangent(s, y)
    forward = lambda v: s.info.reference(v, s.params)   # noqa: E731
    if s.op == "astype":
        return numeric.vjp_by_differences(forward, inputs, g, (name,))[name]
    real = not np.iscomplexobj(inputs[name]) and not np.iscomplexobj(y)
    return (complex_step if s.info.analytic and real else central)(forward, inputs, g, name)


def against_differences(op: str, info=None) -> tuple:
    """(number compared, [names whose hand-written VJP differs from the differences]); `info`:
    judge another record of the op (a negative control's wrong reference)."""
    compared, wrong = 0, []
    for s in W.scenarios(op):
        if "/convention/" in s.name:
            continue
        s = s if info is None else s.bound(info)
        inputs = expected.logical_inputs(s)
        y = s.info.reference(inputs, s.params)
        got = s.info.reference_vjp(inputs, expected.cotangent(s, y), s.params)
        compared += 1
        for n in s.wrt:
            want = differences(s, n)
            if np.shape(got[n]) != np.shape(want) or not np.allclose(got[n], want, rtol=1e-6, atol=1e-6):
                wrong.append(f"{s.name}:{n}")
    return compared, wrong
