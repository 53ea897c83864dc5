"""Building scenario Tensors from values (numpy only).

The one place that turns numbers into `Tensor` records: catalog scenarios,
fuzz strategies and op modules all build their operands here. Two value
generators, because they serve different jobs: `seeded_ints` (numpy's
RandomState, what the catalog's fixed values were drawn with) and
`hashed_ints` (a cheap position hash, so a fuzz strategy draws one seed per
operand instead of one number per element).

Complex operands (dtype "complex64") store each element as a [re, im] pair, so
the record stays strict JSON (a non-finite part is written like any other
non-finite number). `as_seen` gives the values MLX holds for a given dtype,
which is what the float64 reference is fed: the reference sees exactly the
numbers MLX sees, so the only discrepancy left is MLX's arithmetic.
"""
from __future__ import annotations

import numpy as np

from .scenario import Tensor

FLOATING = ("float32", "float16", "bfloat16", "float64")
COMPLEX = ("complex64",)


def is_complex(dtype: str) -> bool:
    return dtype in COMPLEX


def pairs(arr) -> tuple:
    """A complex array's elements as (re, im) pairs, row-major."""
    arr = np.asarray(arr, dtype=np.complex128).ravel()
    return tuple((float(z.real), float(z.imag)) for z in arr)


def tensor(values, shape=None, dtype: str = "float32", views=()) -> Tensor:
    """A floating (or complex64) tensor; `shape` defaults to the shape of `values`."""
    if is_complex(dtype):
        arr = np.asarray(values, dtype=np.complex128)
        shape = arr.shape if shape is None else tuple(shape)
        return Tensor(pairs(arr), tuple(shape), dtype, tuple(views))
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


def _bfloat16(x32: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 -> float32, round to nearest even on the bit pattern
    (NaN stays NaN), as MLX converts."""
    x32 = np.asarray(x32, dtype=np.float32)
    bits = np.ascontiguousarray(x32).reshape(-1).view(np.uint32).astype(np.uint64)
    rounded = (bits + np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))) & np.uint64(0xFFFF0000)
    out = rounded.astype(np.uint32).view(np.float32).reshape(x32.shape)
    return np.where(np.isnan(x32), np.float32(np.nan), out)


def as_seen(arr, dtype: str) -> np.ndarray:
    """The values MLX holds when `arr` (float64 or complex128) is handed over in
    `dtype` the way running/execute.py does it (float64 -> float32 -> dtype;
    float64 itself directly), back in float64 / complex128."""
    arr = np.asarray(arr)
    if np.iscomplexobj(arr) or is_complex(dtype):
        c = np.asarray(arr, dtype=np.complex128).astype(np.complex64)
        return c.astype(np.complex128)
    if dtype == "float64":
        return np.asarray(arr, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        x32 = np.asarray(arr, dtype=np.float64).astype(np.float32)
        if dtype == "float16":
            x32 = x32.astype(np.float16).astype(np.float32)
        elif dtype == "bfloat16":
            x32 = _bfloat16(x32)
    return x32.astype(np.float64)


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
