"""Scalar objectives a scenario can differentiate instead of a plain VJP
(numpy only, float64 scalar loops).

  vjp        <G, Y> for the scenario's cotangent G (all ones by default)
  pair_loss  L = 0.5 * sum((Y_0 - Y_1)^2) over exactly two products; its
             gradient and Hessian-vector product are checked as well
"""
from __future__ import annotations

import math

import numpy as np

OBJECTIVES = ("vjp", "pair_loss")


def _mats(arr) -> list:
    arr = np.asarray(arr, dtype=np.float64)
    return arr.reshape((-1,) + arr.shape[-2:]).tolist()


def pair_loss(y) -> float:
    Y = _mats(y)
    if len(Y) != 2:
        raise ValueError("pair_loss needs exactly two gathered products")
    return 0.5 * math.fsum((Y[0][m][n] - Y[1][m][n]) ** 2
                           for m in range(len(Y[0])) for n in range(len(Y[0][0])))


def pair_loss_cotangent(y) -> np.ndarray:
    """dL/dY: +D on the first product, -D on the second, D = Y_0 - Y_1."""
    y = np.asarray(y, dtype=np.float64)
    flat = y.reshape((-1,) + y.shape[-2:])
    d = flat[0] - flat[1]
    return np.stack([d, -d]).reshape(y.shape)
