"""The exact reverse rule of an op that is real-linear in its operand (the FFTs:
complex outputs of real or complex inputs, and real outputs of complex ones),
from the op's own float64 forward, with nothing differenced.

With L(x) = Re sum(conj(g) * f(x)) and f linear, the derivative of L along a
unit direction e is L(e) exactly. MLX's convention packs the gradient of a
complex operand as dL/dRe x + i dL/dIm x (running/execute.py), so each
coordinate k takes L(e_k) + i L(i e_k), and a real operand L(e_k) alone. One
forward per coordinate and part: for the small operands of the catalog and the
strategies that is cheap, and as accurate as the forward itself (float64
rounding).
"""
from __future__ import annotations

import numpy as np


def _pairing(g, y) -> float:
    return float(np.real(np.sum(np.conj(g) * y)))


def linear_vjp(forward, x, g) -> np.ndarray:
    """J^T g (MLX's packing) of the real-linear `forward(x)` at any x."""
    x, g = np.asarray(x), np.asarray(g)
    parts = (1.0, 1j) if np.iscomplexobj(x) else (1.0,)
    grad = np.zeros(x.size, dtype=np.complex128 if np.iscomplexobj(x) else np.float64)
    for k in range(x.size):
        for d in parts:
            unit = np.zeros(x.size, dtype=x.dtype)
            unit[k] = d
            grad[k] += d * _pairing(g, forward(unit.reshape(x.shape)))
    return grad.reshape(x.shape)
