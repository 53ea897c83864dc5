"""Building scenario Tensors from values (numpy only).

The one place that turns numbers into `Tensor` records: catalog scenarios,
fuzz strategies and op modules all build their operands here. Two value
generators, because they serve different jobs: `seeded_ints` (numpy's
RandomState, what the catalog's fixed values were drawn with) and
`hashed_ints` (a cheap position hash, so a fuzz strategy draws one seed per
operand instead of one number per element).
"""
from __future__ import annotations

import numpy as np

from .scenario import Tensor


def tensor(values, shape=None, dtype: str = "float32", views=()) -> Tensor:
    """A float tensor; `shape` defaults to the shape of `values`."""
    arr = np.asarray(values, dtype=np.float64)
    shape = arr.shape if shape is None else tuple(shape)
    return Tensor(tuple(float(v) for v in arr.ravel()), tuple(shape), dtype, tuple(views))


def index_tensor(values) -> Tensor:
    """An index array (stored as uint32, as MLX takes them)."""
    arr = np.asarray(values, dtype=np.int64)
    return Tensor(tuple(int(v) for v in arr.ravel()), tuple(arr.shape), "uint32")


def integer_tensor(values, dtype: str = "uint32") -> Tensor:
    """Integer data held fixed (quantization codes, say)."""
    arr = np.asarray(values, dtype=np.int64)
    return Tensor(tuple(int(v) for v in arr.ravel()), tuple(arr.shape), dtype)


def seeded_ints(shape, seed, lo=-4, hi=5) -> np.ndarray:
    """Small integers in [lo, hi) from numpy's RandomState(seed)."""
    return np.random.RandomState(seed).randint(lo, hi, size=shape).astype(np.float64)


def hashed_ints(shape, seed, lo=-4, hi=5) -> np.ndarray:
    """Small integers in [lo, hi) from a seed (0 means all ones). A multiplicative
    hash of the position is enough here and far cheaper than a seeded RNG."""
    n = int(np.prod(shape, dtype=np.int64))
    if seed == 0:
        return np.ones(shape)
    h = (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(2654435761)
         + np.uint64(seed) * np.uint64(40503)) % np.uint64(2**32)
    h = (h ^ (h >> np.uint64(13))) * np.uint64(2246822519) % np.uint64(2**32)
    return (((h >> np.uint64(8)) % np.uint64(hi - lo)).astype(np.float64) + lo).reshape(shape)
