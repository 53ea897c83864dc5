"""Affine dequantization from exact integer codes and its chain rule, shared by
gather_qmm and quantized_matmul (numpy only).

W = code * scale + bias per group of `group_size` along W's stored last axis
(K when transposed, W stored (..., N, K); N otherwise, W stored (..., K, N)).
The codes are held fixed: x follows the gather_mm rule through W, and
dscale = sum over the group of code * dW, dbias = sum over the group of dW.
"""
from __future__ import annotations

import numpy as np

from . import gather as G


def dequantize(codes, scales, biases, group_size) -> np.ndarray:
    """Float64 weights from integer codes. Groups run along the stored last axis, as
    MLX quantizes: K when transposed (E, N, K), N otherwise (E, K, N)."""
    codes = np.asarray(codes, dtype=np.float64)
    C, S, B = G.mats(codes), G.mats(scales), G.mats(biases)
    W = [[[C[e][r][c] * S[e][r][c // group_size] + B[e][r][c // group_size]
           for c in range(codes.shape[-1])] for r in range(codes.shape[-2])] for e in range(len(C))]
    return np.array(W, dtype=np.float64).reshape(codes.shape) if codes.size else np.zeros(codes.shape)


def as_kn(w, transpose) -> np.ndarray:
    """Weights as (E, K, N): the transposed layout stores (E, N, K)."""
    return np.swapaxes(w, -1, -2) if transpose else w


def gather_qmm(x, codes, scales, biases, lhs=None, rhs=None, group_size=64, transpose=True):
    w = dequantize(codes, scales, biases, group_size)
    return G.gather_mm(x, as_kn(w, transpose), lhs, rhs)


def gather_qmm_vjp(x, codes, scales, biases, g, lhs=None, rhs=None, group_size=64,
                   transpose=True) -> dict:
    """dx by the gather_mm rule; dscale = sum_group code * dW, dbias = sum_group dW."""
    w = dequantize(codes, scales, biases, group_size)
    grads = G.gather_mm_vjp(x, as_kn(w, transpose), g, lhs, rhs)
    dW = G.mats(as_kn(grads["b"], transpose))   # back to the stored layout
    C = G.mats(np.asarray(codes, dtype=np.float64))
    ds, db = np.zeros(np.shape(scales)), np.zeros(np.shape(biases))
    flat = (len(C),) + ds.shape[-2:]   # explicit sizes: zero-size dimensions reshape too
    ds_m, db_m = ds.reshape(flat), db.reshape(flat)
    for e in range(len(C)):
        for r in range(len(C[e])):
            for c in range(len(C[e][r])):
                ds_m[e, r, c // group_size] += C[e][r][c] * dW[e][r][c]
                db_m[e, r, c // group_size] += dW[e][r][c]
    return {"x": grads["a"], "scales": ds, "biases": db}


def qargs(params) -> dict:
    """The dequantization params of a scenario (transposed unless it says otherwise)."""
    return {"group_size": int(params["group_size"]), "transpose": bool(params.get("transpose", True))}


def packed_expression(codes: str, bits: int) -> str:
    """The call files' pack(codes, bits) written inline: 32 // bits codes to a uint32 word,
    code t of a word at bits [t bits, (t + 1) bits) (disjoint, so the sum is the bitwise or)."""
    per = 32 // int(bits)
    return (f"mx.array(({codes}.reshape(*{codes}.shape[:-1], -1, {per}) << np.arange(0, {per * int(bits)}, "
            f"{int(bits)})).sum(-1).astype(np.uint32))")
