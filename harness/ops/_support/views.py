"""Storage layouts for operands of any rank, shared by the issue-20 op modules
(reductions, shapes, matmul, fft, search): the catalog names a layout, the
strategies draw one. Each turns a logical value into a Tensor whose views
(core/layout.py) MLX replays onto real storage, so the call sees a strided,
transposed, reversed, broadcast or windowed array while the reference sees
only the logical value.

  contiguous  row-major, as it is
  transposed  stored with its axes reversed, a transpose view back (rank >= 2)
  strided     every other element of the last axis of a wider buffer
  reversed    a negative stride: the last axis stored backwards, viewed [::-1]
  broadcast   a stride-0 leading axis: the first item broadcast (the logical
              value changes to that broadcast, so it is returned with it)
  singleton   a size-1 axis inserted by an expand_dims view (needs a 1 in the shape)
  window      the leading rows of a taller buffer whose tail holds large values
"""
from __future__ import annotations

import numpy as np

from ...core import draw as D
from ...core.tensors import hashed_ints, tensor

BACKING = 50.0   # values outside the logical view: large and distinctive
LAYOUTS = ("contiguous", "transposed", "strided", "reversed", "broadcast", "singleton", "window")


def applies(kind: str, shape) -> bool:
    """Whether a layout can hold a logical value of this shape."""
    shape = tuple(shape)
    if kind == "contiguous":
        return True
    if not shape or 0 in shape:
        return False
    return {"transposed": len(shape) >= 2, "broadcast": shape[0] > 1, "singleton": 1 in shape,
            "window": True, "strided": True, "reversed": True}[kind]


def laid_out(values, kind: str = "contiguous", dtype: str = "float32"):
    """(Tensor, logical value) of `values` in layout `kind` (a layout that cannot
    hold the shape is refused: a catalog bug)."""
    v = np.asarray(values, dtype=np.complex128 if dtype == "complex64" else np.float64)
    if not applies(kind, v.shape):
        raise ValueError(f"layout {kind!r} cannot hold shape {v.shape}")
    if kind == "transposed":
        axes = list(range(v.ndim))[::-1]
        return tensor(np.transpose(v, axes), dtype=dtype, views=[{"op": "transpose", "axes": axes}]), v
    if kind == "strided":
        store = np.full(v.shape[:-1] + (2 * v.shape[-1],), BACKING, dtype=v.dtype)
        store[..., ::2] = v
        spec = [[0, d] for d in v.shape[:-1]] + [[0, 2 * v.shape[-1], 2]]
        return tensor(store, dtype=dtype, views=[{"op": "slice", "index": spec}]), v
    if kind == "reversed":
        spec = [[0, d] for d in v.shape[:-1]] + [[None, None, -1]]
        return tensor(v[..., ::-1], dtype=dtype, views=[{"op": "slice", "index": spec}]), v
    if kind == "broadcast":
        first = v[:1]
        return (tensor(first, dtype=dtype, views=[{"op": "broadcast_to", "shape": list(v.shape)}]),
                np.broadcast_to(first, v.shape).copy())
    if kind == "singleton":
        axis = list(v.shape).index(1)
        return tensor(np.squeeze(v, axis), dtype=dtype, views=[{"op": "expand_dims", "axis": axis}]), v
    if kind == "window":
        store = np.full((v.shape[0] + 2,) + v.shape[1:], BACKING, dtype=v.dtype)
        store[: v.shape[0]] = v
        spec = [[0, v.shape[0]]] + [[0, d] for d in v.shape[1:]]
        return tensor(store, dtype=dtype, views=[{"op": "slice", "index": spec}]), v
    return tensor(v, dtype=dtype), v


def draw_layout(draw, values, dtype: str, exclude=()):
    """(Tensor, logical value) in a drawn layout that can hold the shape (shrinks
    towards contiguous); `exclude` names layouts the op cannot take (a broadcast
    makes ties, say)."""
    kinds = tuple(k for k in LAYOUTS if applies(k, np.shape(values)) and k not in exclude)
    return laid_out(values, draw(D.choice(kinds)), dtype)


def draw_shape(draw, rank_lo=0, rank_hi=3, size_hi=4, zero=True) -> tuple:
    """A shape of rank in [rank_lo, rank_hi], sizes 1..size_hi, now and then one axis 0."""
    rank = draw(D.irange(rank_lo, rank_hi))
    shape = [draw(D.irange(1, size_hi)) for _ in range(rank)]
    if zero and rank and draw(D.irange(0, 7)) == 7:
        shape[draw(D.irange(0, rank - 1))] = 0
    return tuple(shape)


def draw_values(draw, shape, lo=-4, hi=5) -> np.ndarray:
    """Small integers of `shape` from one drawn seed (0: all ones)."""
    return hashed_ints(tuple(shape), draw(D.irange(0, 2**16)), lo, hi)


def with_imaginary(draw, values, dtype: str) -> np.ndarray:
    """`values`, given a small-integer imaginary part when the call is complex."""
    if dtype != "complex64":
        return np.asarray(values, dtype=np.float64)
    return np.asarray(values) + 1j * draw_values(draw, np.shape(values))
