"""Scans and sorts along one axis, shared by cumsum, cumprod, cummax/cummin,
sort, topk, partition, logsumexp and softmax: the scan windows and flags,
lanes (the axis moved last; axis None is the flattened array), and the
strategies' shapes, distinct lane values and storage layouts.
"""
from __future__ import annotations

import numpy as np

from ...core import draw as D
from ...core.numeric import as_float64

# --- scan windows and flags ------------------------------------------------------------------

# Every (reverse, inclusive) combination, in catalog order.
SCAN_FLAGS = [(rev, inc) for rev in (False, True) for inc in (True, False)]


def summed(i: int, n: int, reverse: bool, inclusive: bool) -> list:
    """The input positions j that output position i of a scan combines, along an
    axis of length n: j <= i (j < i exclusive), mirrored when reversed."""
    if reverse:
        return [j for j in range(n) if j > i or (inclusive and j == i)]
    return [j for j in range(n) if j < i or (inclusive and j == i)]


def scan_flags(params):
    """(axis, reverse, inclusive) with MLX's defaults; axis None scans the flattened array."""
    axis = params.get("axis", 0)
    return (None if axis is None else int(axis)), bool(params.get("reverse", False)), \
        bool(params.get("inclusive", True))


def flag_name(rev, inc) -> str:
    """The catalog's name for a flag combination: forward/inclusive, reverse/exclusive, ..."""
    return f"{'reverse' if rev else 'forward'}/{'inclusive' if inc else 'exclusive'}"


# --- lanes -------------------------------------------------------------------------------------

def to_lanes(x, axis) -> np.ndarray:
    """float64 x (complex128 if complex) with the axis moved last (axis None: the
    flattened array, one lane)."""
    x = as_float64(x)
    return x.reshape(-1) if axis is None else np.moveaxis(x, axis, -1)


def from_lanes(y, axis) -> np.ndarray:
    """An output computed on lanes, its axis put back (axis None: it stays flat)."""
    return y if axis is None else np.moveaxis(y, -1, axis)


def lanes_to_input(dx, shape, axis) -> np.ndarray:
    """A gradient computed on lanes, back in the input's shape."""
    return dx.reshape(shape) if axis is None else np.moveaxis(dx, -1, axis)


# --- fuzz strategies: shapes, distinct values, layouts -----------------------------------------

SPACING = 4.0


def distinct_values(shape, seed, axis) -> np.ndarray:
    """Along every lane a permutation of 0..L-1 times 4, centred (seed 0: ascending).
    Lanes are at most 5 long (16 for axis None), so every value and every value
    +- 1.5 is exact even in bfloat16."""
    lanes = to_lanes(np.zeros(shape), axis)
    L = lanes.shape[-1]
    rng = np.random.RandomState(seed) if seed else None
    for lane in np.ndindex(lanes.shape[:-1]):
        order = np.arange(L) if rng is None else rng.permutation(L)
        lanes[lane] = SPACING * (order - L // 2)
    return lanes.reshape(shape) if axis is None else from_lanes(lanes, axis)


def with_layout(draw, values, dtype):
    """`values` as an operand stored contiguously, transposed, or as every other
    element of a wider buffer (shrinks towards contiguous)."""
    kind = draw(D.choice(("contiguous", "transpose", "stride")))
    v = np.asarray(values, dtype=np.float64)
    if kind == "transpose" and v.ndim >= 2:
        axes = list(range(v.ndim - 2)) + [v.ndim - 1, v.ndim - 2]
        return D.tensor(np.transpose(v, axes), dtype=dtype, views=[{"op": "transpose", "axes": axes}])
    if kind == "stride":
        store = np.full(v.shape[:-1] + (2 * v.shape[-1],), D.BACKING_BASE)
        store[..., ::2] = v
        spec = [[0, d] for d in v.shape[:-1]] + [[0, 2 * v.shape[-1], 2]]
        return D.tensor(store, dtype=dtype, views=[{"op": "slice", "index": spec}])
    return D.tensor(v, dtype=dtype)


def shape_and_axis(draw, axis_options):
    """Rank 1..3 with sides 1..5 and an axis from axis_options(rank); axis None (the
    whole array is one lane) on at most 4 x 4 elements."""
    rank = draw(D.irange(1, 3))
    axis = draw(D.choice(axis_options(rank)))
    if axis is None:
        return (draw(D.irange(1, 4)), draw(D.irange(1, 4))), axis
    return tuple(draw(D.irange(1, 5)) for _ in range(rank)), axis
