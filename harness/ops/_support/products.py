"""Matrix products with numpy's matmul semantics, and their exact reverse rule,
shared by matmul and addmm: batch axes broadcast, a 1-D left operand is a row
(its axis dropped from the result), a 1-D right operand a column.

For y = a @ b and cotangent g, MLX's convention (conjugate for complex, as
Matmul::vjp writes it) gives d a = g @ conj(b)^T and d b = conj(a)^T @ g, each
summed over the batch axes its operand was broadcast along; a real operand of a
complex product takes the real part.
"""
from __future__ import annotations

import numpy as np


def matmul(a, b) -> np.ndarray:
    return np.asarray(np.matmul(np.asarray(a), np.asarray(b)))


def sum_to(x, shape) -> np.ndarray:
    """x summed down to `shape` (the reverse of a broadcast)."""
    x = np.asarray(x)
    lead = x.ndim - len(shape)
    x = x.sum(axis=tuple(range(lead))) if lead > 0 else x
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and x.shape[i] != 1)
    return x.sum(axis=axes, keepdims=True).reshape(shape) if axes else x.reshape(shape)


def matmul_vjp(a, b, g) -> tuple:
    """(d a, d b) of y = a @ b for cotangent g."""
    a, b, g = np.asarray(a), np.asarray(b), np.asarray(g)
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = np.expand_dims(g2, -2 if b.ndim > 1 else 0)
    if b.ndim == 1:
        g2 = np.expand_dims(g2, -1)
    da = np.matmul(g2, np.conj(np.swapaxes(b2, -1, -2)))
    db = np.matmul(np.conj(np.swapaxes(a2, -1, -2)), g2)
    return _like(sum_to(da, a2.shape).reshape(a.shape), a), _like(sum_to(db, b2.shape).reshape(b.shape), b)


def _like(grad, x) -> np.ndarray:
    """A real operand of a complex product (MLX promotes it) takes the real part."""
    return grad if np.iscomplexobj(x) else np.real(grad)
