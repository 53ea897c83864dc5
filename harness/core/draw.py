"""Building blocks for op fuzz strategies: each op module's `fuzz_case(draw,
dtypes)` draws a Scenario with these.

Hypothesis is imported on first use, not on import, so op modules can use
these helpers and still load on the numpy-only validation path. Draw order
matters for shrinking: hypothesis shrinks each choice towards its first
option, so the simplest option comes first everywhere (contiguous layout,
cotangent of ones, the joint VJP, ...).

Values come from a drawn integer seed (cheap to draw, and the seed shrinks to
0, which means "all ones"); they are small integers so float32 arithmetic is
exact and a mismatch cannot be rounding.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import json

import numpy as np

from .scenario import Scenario
from .tensors import hashed_ints, index_tensor, tensor

BACKING_BASE = 50.0   # values outside the logical view are large and distinctive

__all__ = ["irange", "choice", "nonempty_subsets", "finish", "index_values", "broadcast_variant",
           "layout", "cotangent", "dtype_table", "hashed_ints", "tensor", "index_tensor"]


@functools.lru_cache(maxsize=None)
def irange(lo, hi):
    """An integer in [lo, hi]; shrinks towards lo. Cached: building a strategy
    object per draw would dominate generation time."""
    from hypothesis import strategies as st
    return st.integers(lo, hi)


_CHOICES: dict = {}


def choice(options):
    """One of `options` (a tuple); shrinks towards the first. Cached by value AND
    type: (1, 2) and (1.0, 2.0) are equal tuples, and one op's floats must never
    come back from another op's integers."""
    key = tuple((type(o), o) for o in options)
    if key not in _CHOICES:
        from hypothesis import strategies as st
        _CHOICES[key] = st.sampled_from(tuple(options))
    return _CHOICES[key]


def nonempty_subsets(names) -> list:
    """Joint first, then smaller subsets: shrinking moves towards the joint VJP."""
    out = []
    for r in range(len(names), 0, -1):
        out += list(itertools.combinations(names, r))
    return out


def case_name(op, payload) -> str:
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
    return f"fuzz/{op}/{digest}"


def finish(s: Scenario) -> Scenario:
    """Name a scenario by its content, so equal cases share a name."""
    d = s.to_dict()
    d.pop("name")
    return Scenario.from_dict(dict(d, name=case_name(s.op, d)))


def index_values(draw, shape, bound, sort):
    """Index array of `shape` into `bound` items: repeated, random, identity or with
    one item omitted (shrinks towards all-repeated). `sort` makes it non-decreasing
    in row-major order, as MLX's sorted_indices flag promises."""
    n = int(np.prod(shape, dtype=np.int64))
    pattern = draw(choice(("repeat", "random", "identity", "omit")))
    if pattern == "repeat":
        vals = [draw(irange(0, bound - 1))] * n
    elif pattern == "identity":
        vals = [q % bound for q in range(n)]
    elif pattern == "omit" and bound > 1:   # every index but one, so one item is unused
        skip = draw(irange(0, bound - 1))
        keep = [v for v in range(bound) if v != skip]
        vals = [keep[q % len(keep)] for q in range(n)]
    else:   # one seed instead of n draws: generation stays cheap
        vals = [int(v) for v in hashed_ints((n,), draw(irange(1, 2**16)), 0, bound)]
    if sort:
        vals = sorted(vals)
    return np.asarray(vals, dtype=np.int64).reshape(shape)


def broadcast_variant(draw, shape, allow_drop=True):
    """A shape that broadcasts to `shape`: some dims set to 1, leading dims maybe
    dropped. Each dim shrinks towards 1: the smaller counterexample (a shrink
    locked on the call form cannot take away a broadcast the form names)."""
    dims = [draw(choice((1, d))) if d > 1 else d for d in shape]
    drop = draw(irange(0, len(dims))) if allow_drop and draw(irange(0, 3)) == 3 else 0
    return tuple(dims[drop:])


def layout(draw, batch, inner, seed, dtype, lo=-4, hi=5):
    """An operand of logical shape batch+inner with a drawn storage layout
    (shrinks towards contiguous).

    slice: a window onto a larger buffer whose extra values are large (the
    backing tail); transpose: stored with the last two axes swapped; stride:
    every other element of the last axis; broadcast: a stride-0 view of one
    batch item.
    """
    shape = tuple(batch) + tuple(inner)
    kind = draw(choice(("contiguous", "slice", "transpose", "stride", "broadcast")))
    logical = hashed_ints(shape, seed, lo, hi)
    if kind == "slice" and batch:
        extra = draw(irange(1, 3))
        store_shape = (batch[0] + extra,) + shape[1:]
        store = BACKING_BASE + np.arange(np.prod(store_shape)).reshape(store_shape)
        store[: batch[0]] = logical
        spec = [[0, batch[0]]] + [[0, d] for d in shape[1:]]
        return tensor(store, dtype=dtype, views=[{"op": "slice", "index": spec}])
    if kind == "transpose" and len(shape) >= 2:
        axes = list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]
        return tensor(np.transpose(logical, axes), dtype=dtype,
                      views=[{"op": "transpose", "axes": axes}])
    if kind == "stride":
        store = BACKING_BASE + np.zeros(shape[:-1] + (2 * shape[-1],))
        store[..., ::2] = logical
        spec = [[0, d] for d in shape[:-1]] + [[0, 2 * shape[-1], 2]]
        return tensor(store, dtype=dtype, views=[{"op": "slice", "index": spec}])
    if kind == "broadcast" and batch and batch[0] > 1:
        return tensor(logical[:1], dtype=dtype, views=[{"op": "broadcast_to", "shape": list(shape)}])
    return tensor(logical, dtype=dtype)


def cotangent(draw, shape, dtype):
    """(Tensor or None for all ones, mode); shrinks towards all ones."""
    mode = draw(choice(("ones", "random", "zero", "negative")))
    if mode == "ones":
        return None, mode
    if mode == "zero":
        return tensor(np.zeros(shape), dtype=dtype), mode
    vals = hashed_ints(shape, draw(irange(1, 2**16)))
    if mode == "negative":
        vals = -np.abs(vals) - 1
    return tensor(vals, dtype=dtype), mode


def dtype_table(dtypes) -> tuple:
    """float32 (exact arithmetic, the report's dtype) drawn as often as the rest together."""
    dtypes = tuple(dtypes)
    return dtypes if "float32" not in dtypes or len(dtypes) == 1 else \
        ("float32",) * (len(dtypes) - 1) + dtypes
