"""Gather index machinery shared by gather_mm, gather_qmm and quantized
matmul: MLX's defaulted and broadcast index arrays, the float64 gather-matmul
rule in plain loops, and the index plans their fuzz strategies draw.

The rule: Y_q = A[i_q] B[j_q]; dA[l] = sum_{q: i_q = l} G_q B[j_q]^T;
dB[l] = sum_{q: j_q = l} A[i_q]^T G_q. Repeated selections accumulate,
rows never selected stay exactly zero.
"""
from __future__ import annotations

import math

import numpy as np

from ...core import draw as D
from ...core.tensors import index_tensor, seeded_ints, tensor

LHS, RHS = "lhs_indices", "rhs_indices"
SORTED = "sorted_indices"
# Why a fuzz-found class of the first patch has corpus entries (harness/regressions/) and no
# register entry: gather_vjp_sorted.diff fixes it with the register's classes.
CORPUS_ONLY = ("found by fuzz campaigns; held by the regression corpus and fixed by "
               "gather_vjp_sorted.diff (patch/series.json catalog_defect_tags), no register entry of its own")
FLAG_VARIANTS = (("sorted", {SORTED: True}), ("unsorted", {SORTED: False}))
FD_STEP = 1.0 / 16


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


def mats(arr) -> list:
    """(..., R, C) -> list of R x C nested lists (flattened batch)."""
    arr = np.asarray(arr, dtype=np.float64)   # explicit sizes: zero-size dimensions reshape too
    return arr.reshape((math.prod(arr.shape[:-2]),) + arr.shape[-2:]).tolist()


def _zeros(n, r, c) -> list:
    return [[[0.0] * c for _ in range(r)] for _ in range(n)]


def gather_mm(a, b, lhs=None, rhs=None) -> np.ndarray:
    """Y_q = A[i_q] @ B[j_q] over the broadcast index pairs (i_q, j_q)."""
    ii, jj, batch = resolve_indices(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B = mats(a), mats(b)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    out = [[[math.fsum(A[i][m][k] * B[j][k][n] for k in range(K)) for n in range(N)]
            for m in range(M)] for i, j in zip(ii, jj)]
    if not out:
        return np.zeros(tuple(batch) + (M, N))
    return np.array(out, dtype=np.float64).reshape(tuple(batch) + (M, N))


def gather_mm_vjp(a, b, g, lhs=None, rhs=None) -> dict:
    """dA[l] = sum_{q: i_q = l} G_q B[j_q]^T ;  dB[l] = sum_{q: j_q = l} A[i_q]^T G_q."""
    ii, jj, _ = resolve_indices(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B = mats(a), mats(b)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    G = np.asarray(g, dtype=np.float64).reshape((len(ii), M, N)).tolist()
    dA, dB = _zeros(len(A), M, K), _zeros(len(B), K, N)
    for q, (i, j) in enumerate(zip(ii, jj)):
        for m in range(M):
            for k in range(K):
                dA[i][m][k] += math.fsum(G[q][m][n] * B[j][k][n] for n in range(N))
        for k in range(K):
            for n in range(N):
                dB[j][k][n] += math.fsum(A[i][m][k] * G[q][m][n] for m in range(M))
    return {"a": np.array(dA).reshape(a.shape), "b": np.array(dB).reshape(b.shape)}


def indices_of(inp) -> tuple:
    """The scenario's index operands (None where omitted: MLX's default applies)."""
    return inp.get(LHS), inp.get(RHS)


def index_operands(lhs=None, rhs=None) -> dict:
    """Index operands for a scenario from plain lists (omitted when None)."""
    return {k: index_tensor(v) for k, v in ((LHS, lhs), (RHS, rhs)) if v is not None}


def ints(shape, seed, lo=-4, hi=5):
    return tensor(seeded_ints(shape, seed, lo, hi))


# --- fuzz strategies: index arrays of every rank, sides, broadcasting -------------------

# Sizes above 1 drawn more often (1 shrinks first, and is where nothing can repeat).
DIMS = {2: (1, 2, 2), 3: (1, 2, 3)}
ITEMS = {3: (1, 2, 3, 2, 3), 4: (1, 2, 3, 4)}
# One index array (the only case where the sorted flag acts) twice as often.
SIDES = ("lhs", "rhs", "both", "none", "lhs", "rhs")


def index_plan(draw, max_dim=3):
    """Which index arrays are given, their shapes, and the sorted flag.

    Returns (side, sorted, out_batch, lhs_shape, rhs_shape); a missing array's
    shape is None. Index arrays of rank 0 to 3 are all accepted by MLX.
    """
    side = draw(D.choice(SIDES))
    srt = draw(D.choice((False, True, True)))   # the sorted path is where the defects live
    rank = draw(D.choice((1, 1, 2, 3) if side == "none" else (1, 1, 1, 1, 0, 2, 3)))
    out = tuple(draw(D.choice(DIMS[max_dim])) for _ in range(rank))
    lhs = rhs = None
    if side in ("lhs", "both"):
        lhs = out if side == "lhs" else D.broadcast_variant(draw, out)
    if side in ("rhs", "both"):
        rhs = out if side == "rhs" else D.broadcast_variant(draw, out)
    return side, srt, out, lhs, rhs


def operand_batch(draw, idx_shape, other_shape, max_items=4, shared=False):
    """Batch shape of one operand. With an index array it is any (E,) / (E1, E2);
    without one its default arange must broadcast against the other side: some
    dims set to 1 or dropped, or with `shared`, half the time one item shared by
    the whole index batch (every batch dim 1)."""
    if idx_shape is not None:
        return tuple(draw(D.choice(ITEMS[max_items])) for _ in range(draw(D.irange(1, 2))))
    if other_shape is None:
        return None   # decided by the caller (side "none")
    if shared and draw(D.choice((False, True))):
        return (1,) * len(other_shape)
    return D.broadcast_variant(draw, other_shape)


def form(side, srt, a_batch, out_batch) -> str:
    """Call form used in signatures: which array is given, whether the sorted
    flag takes effect (exactly one array), and left broadcasting."""
    name = side + ("-sorted" if srt and side in ("lhs", "rhs") else "")
    if side == "rhs" and int(np.prod(a_batch, dtype=np.int64)) < int(np.prod(out_batch, dtype=np.int64)):
        name += "+bcast-left"
    return name


def draw_index(draw, shape, bound, srt):
    """Index values of `shape` into `bound` items (None when the array is omitted)."""
    return None if shape is None else D.index_values(draw, shape, bound, srt)


def draw_batches(draw, side, out, lhs, rhs, max_items=4, shared_left=False):
    """The two operands' batch shapes. `shared_left`: a left operand without an
    index array is half the time one item broadcast over every right index (the
    left broadcast the right-sorted fast path reads past: rhs-sorted+bcast-left)."""
    if side == "none":
        return D.broadcast_variant(draw, out), D.broadcast_variant(draw, out)
    return (operand_batch(draw, lhs, rhs, max_items, shared=shared_left),
            operand_batch(draw, rhs, lhs, max_items))


def out_batch_of(a_batch, b_batch, lhs, rhs):
    la = np.shape(lhs) if lhs is not None else a_batch
    rb = np.shape(rhs) if rhs is not None else b_batch
    return tuple(np.broadcast_shapes(tuple(la), tuple(rb)))
