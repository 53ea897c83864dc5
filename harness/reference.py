"""Float64 scalar-loop oracles for gather_mm and gather_qmm and their VJPs.

Independent of what they check: plain Python loops over nested lists, numpy
only for shapes and storage, never mlx. Each function states the reverse rule
it implements so a reader can audit it against the maths, not against MLX.
"""
from __future__ import annotations

import math

import numpy as np


def default_indices(batch_shape) -> np.ndarray:
    """MLX's default when an index array is omitted: arange over the operand's batch."""
    return np.arange(math.prod(batch_shape), dtype=np.int64).reshape(tuple(batch_shape))


def resolve_indices(a_batch, b_batch, lhs, rhs):
    """Broadcast the (possibly defaulted) index arrays; return flat lists and batch shape."""
    lhs = default_indices(a_batch) if lhs is None else np.asarray(lhs, dtype=np.int64)
    rhs = default_indices(b_batch) if rhs is None else np.asarray(rhs, dtype=np.int64)
    lhs_b, rhs_b = np.broadcast_arrays(lhs, rhs)
    for name, idx, bound in (("lhs", lhs_b, math.prod(a_batch)), ("rhs", rhs_b, math.prod(b_batch))):
        if idx.size and (idx.min() < 0 or idx.max() >= bound):
            raise ValueError(f"{name} index out of range [0, {bound})")
    return [int(v) for v in lhs_b.ravel()], [int(v) for v in rhs_b.ravel()], lhs_b.shape


def _mats(arr) -> list:
    """(..., R, C) -> list of R x C nested lists (flattened batch)."""
    arr = np.asarray(arr, dtype=np.float64)
    return arr.reshape((-1,) + arr.shape[-2:]).tolist()


def _zeros(n, r, c) -> list:
    return [[[0.0] * c for _ in range(r)] for _ in range(n)]


def _array(mats, batch_shape) -> np.ndarray:
    out = np.array(mats, dtype=np.float64)
    return out.reshape(tuple(batch_shape) + out.shape[1:])


# --- gather_mm: Y_q = A[i_q] @ B[j_q] -------------------------------------

def gather_mm(a, b, lhs=None, rhs=None) -> np.ndarray:
    ii, jj, batch = resolve_indices(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B = _mats(a), _mats(b)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    out = []
    for i, j in zip(ii, jj):
        out.append([[math.fsum(A[i][m][k] * B[j][k][n] for k in range(K)) for n in range(N)]
                    for m in range(M)])
    return _array(out, batch) if out else np.zeros(tuple(batch) + (M, N))


def gather_mm_vjp(a, b, g, lhs=None, rhs=None) -> dict:
    """dA[l] = sum_{q: i_q = l} G_q B[j_q]^T ;  dB[l] = sum_{q: j_q = l} A[i_q]^T G_q.

    Repeated selections accumulate; rows never selected stay exactly zero.
    """
    ii, jj, _ = resolve_indices(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B, G = _mats(a), _mats(b), _mats(g)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    dA, dB = _zeros(len(A), M, K), _zeros(len(B), K, N)
    for q, (i, j) in enumerate(zip(ii, jj)):
        for m in range(M):
            for k in range(K):
                dA[i][m][k] += math.fsum(G[q][m][n] * B[j][k][n] for n in range(N))
        for k in range(K):
            for n in range(N):
                dB[j][k][n] += math.fsum(A[i][m][k] * G[q][m][n] for m in range(M))
    return {"a": np.array(dA).reshape(a.shape), "b": np.array(dB).reshape(b.shape)}


# --- gather_qmm (affine): W = code * scale + bias, per group ----------------

def dequantize(codes, scales, biases, group_size, transpose=True) -> np.ndarray:
    """Float64 weights from integer codes. Groups run along the stored last axis, as
    MLX quantizes: K when transposed (E, N, K), N otherwise (E, K, N)."""
    codes = np.asarray(codes, dtype=np.float64)
    C, S, Bz = _mats(codes), _mats(scales), _mats(biases)
    E, R, Cn = len(C), codes.shape[-2], codes.shape[-1]
    W = _zeros(E, R, Cn)
    for e in range(E):
        for r in range(R):
            for c in range(Cn):
                gr, gc = r, c // group_size
                W[e][r][c] = C[e][r][c] * S[e][gr][gc] + Bz[e][gr][gc]
    return np.array(W).reshape(codes.shape)


def _as_kn(w, transpose) -> np.ndarray:
    """Weights as (E, K, N): the transposed layout stores (E, N, K)."""
    return np.swapaxes(w, -1, -2) if transpose else w


def gather_qmm(x, codes, scales, biases, lhs=None, rhs=None, group_size=64, transpose=True):
    w = dequantize(codes, scales, biases, group_size, transpose)
    return gather_mm(x, _as_kn(w, transpose), lhs, rhs)


def gather_qmm_vjp(x, codes, scales, biases, g, lhs=None, rhs=None, group_size=64,
                   transpose=True) -> dict:
    """dx by the gather_mm rule; dscale = sum_group code * dW, dbias = sum_group dW.

    Integer codes are held fixed: no derivative with respect to them is claimed.
    """
    w = dequantize(codes, scales, biases, group_size, transpose)
    grads = gather_mm_vjp(x, _as_kn(w, transpose), g, lhs, rhs)
    dW = _mats(_as_kn(grads["b"], transpose))   # back to the stored layout
    C = _mats(np.asarray(codes, dtype=np.float64))
    ds, db = np.zeros(np.shape(scales)), np.zeros(np.shape(biases))
    ds_m, db_m = ds.reshape((-1,) + ds.shape[-2:]), db.reshape((-1,) + db.shape[-2:])
    for e in range(len(C)):
        for r in range(len(C[e])):
            for c in range(len(C[e][r])):
                gr, gc = r, c // group_size
                ds_m[e, gr, gc] += C[e][r][c] * dW[e][r][c]
                db_m[e, gr, gc] += dW[e][r][c]
    return {"x": grads["a"], "scales": ds, "biases": db}


# --- the quadratic pair loss: L = 0.5 * sum((Y_0 - Y_1)^2) ------------------

def pair_loss(y) -> float:
    Y = _mats(np.asarray(y).reshape((-1,) + np.shape(y)[-2:]))
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
