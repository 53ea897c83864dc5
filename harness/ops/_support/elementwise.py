"""What the table-driven elementwise ops share (ops/elementwise.py, binary.py,
comparison.py): where their values come from, the storage layouts their
operands take, the cotangents, the shapes their strategies draw.

Values. Every real value lies on a 1/16 grid inside the op's `Domain`: a closed
interval the function is smooth on, whose non-differentiable points (`kinks`,
any of: 0 for abs and sign, the integers for floor and ceil, the half-integers
for round) and whose edges (arccos at +-1, log at 0, tan at pi/2) are at least
a margin away, never less than MARGIN. MARGIN exceeds the largest step the
float64 differences take around a value (3 * core/numeric.H0 = 3/16: a
direction entry of 3 at the first step), so a kink never falls inside the
differences the transform oracles take; scenarios AT a kink are the catalog's
"/convention/" ones, written by the op. Complex values have both parts in
+-[1/4, 3/4] (COMPLEX_PARTS): off the real axis, so off the cuts of log,
sqrt, arccos, arccosh and arctanh there; inside |Im z| < 1, so off the cuts of
arcsinh and arctan on the imaginary axis; far from the poles of tan and tanh.

Layouts (LAYOUTS): the logical operand MLX differentiates is a view onto
storage it does not own: contiguous, transposed (axes reversed), strided (every
other element from offset 1, the skipped ones large), reversed (negative steps:
the last axis read backwards with step -2, axis 0 reversed), both at once
(strided_reversed), broadcast (a stride-0 leading axis), singleton (an axis of
size 1 inserted by expand_dims) and both at once (broadcast_singleton). The
reference only ever sees the logical value (core/layout.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import draw as D
from ...core.scenario import Scenario
from ...core.tensors import hashed_ints, tensor

GRID = 1.0 / 16
MARGIN = 0.25
BACKING = 50.0
KINDS = ("zero", "integers", "halves")
LAYOUTS = ("contiguous", "transposed", "strided", "reversed", "strided_reversed", "broadcast", "singleton",
           "broadcast_singleton")
HALF = ("float16", "bfloat16")
COMPLEX = "complex64"


@dataclass(frozen=True)
class Domain:
    """Where an operand's values come from: the grid points of [lo, hi] at least
    `margin` (never less than MARGIN) from every kink of the kinds named."""
    lo: float
    hi: float
    kinks: tuple = ()
    margin: float = MARGIN

    def __post_init__(self):
        where = f"Domain({self.lo!r}, {self.hi!r})"
        if not (np.isfinite(self.lo) and np.isfinite(self.hi) and self.lo < self.hi):
            raise ValueError(f"{where}: lo must be below hi, both finite")
        if not isinstance(self.kinks, tuple) or not set(self.kinks) <= set(KINDS):
            raise ValueError(f"{where}: field kinks {self.kinks!r} is not a tuple of {KINDS}")
        if not self.margin >= MARGIN:
            raise ValueError(f"{where}: field margin {self.margin!r} is below the stated MARGIN {MARGIN}")
        if self.grid().size < 2:
            raise ValueError(f"{where}: fewer than 2 grid values away from its kinks")

    def grid(self) -> np.ndarray:
        pts = np.arange(round(self.lo / GRID), round(self.hi / GRID) + 1) * GRID
        return pts[self.inside(pts)]

    def inside(self, x) -> np.ndarray:
        """Whether each value is in [lo, hi] and `margin` from every kink."""
        x = np.asarray(x, dtype=np.float64)
        ok = (x >= self.lo) & (x <= self.hi)
        for kind in self.kinks:
            ok &= kink_distance(x, kind) >= self.margin
        return ok

    def values(self, shape, seed: int) -> np.ndarray:
        """Grid values of `shape` from a seed (0: all the same value, the one nearest 1)."""
        pts = self.grid()
        if seed == 0:
            return np.full(shape, pts[int(np.argmin(np.abs(pts - 1.0)))])
        return pts[hashed_ints(shape, seed, 0, len(pts)).astype(np.int64)]


def kink_distance(x, kind: str) -> np.ndarray:
    """Distance from each value to the nearest kink of the kind."""
    x = np.asarray(x, dtype=np.float64)
    if kind == "zero":
        return np.abs(x)
    if kind == "integers":
        return np.abs(x - np.round(x))
    return np.abs(x - np.floor(x) - 0.5)   # "halves"


COMPLEX_PARTS = np.concatenate([-np.arange(12, 3, -1), np.arange(4, 13)]) * GRID   # +-[1/4, 3/4]


def complex_values(shape, seed: int, parts=COMPLEX_PARTS) -> np.ndarray:
    """Complex values with both parts from `parts` (default: +-[1/4, 3/4] on the grid)."""
    parts = np.asarray(parts, dtype=np.float64)
    re = parts[hashed_ints(shape, seed + 1, 0, len(parts)).astype(np.int64)]
    im = parts[hashed_ints(shape, seed + 2, 0, len(parts)).astype(np.int64)]
    return re + 1j * im


# --- storage layouts ----------------------------------------------------------------------------

def layout_possible(kind: str, shape) -> bool:
    """Whether a logical shape can take the layout (a transpose needs two axes, a
    broadcast a leading axis longer than 1, a singleton an axis of size 1, after
    the first one when it is broadcast as well)."""
    shape = tuple(shape)
    lead = len(shape) >= 1 and shape[0] > 1
    return {"transposed": len(shape) >= 2, "strided": len(shape) >= 1, "reversed": len(shape) >= 1,
            "strided_reversed": len(shape) >= 1, "broadcast": lead, "singleton": 1 in shape,
            "broadcast_singleton": lead and 1 in shape[1:]}.get(kind, kind == "contiguous")


def operand(values_of, shape, kind: str, dtype: str):
    """A Tensor of logical `shape` in layout `kind` (LAYOUTS); values_of(shape) -> the
    values, called once, for the shape the storage needs."""
    shape = tuple(shape)
    if not layout_possible(kind, shape):
        raise ValueError(f"layout {kind!r} does not fit shape {shape}")
    if kind in ("broadcast", "singleton", "broadcast_singleton"):
        return _broadcast(values_of, shape, kind, dtype)
    logical = np.asarray(values_of(shape))
    if kind == "transposed":
        axes = list(range(len(shape)))[::-1]   # reversed axes are their own inverse
        return tensor(np.transpose(logical, axes), dtype=dtype, views=[{"op": "transpose", "axes": axes}])
    if kind in ("strided", "reversed", "strided_reversed"):
        return _strided(logical, dtype, step=-2 if kind == "reversed" else 2, flip=kind != "strided")
    return tensor(logical, dtype=dtype)


def _broadcast(values_of, shape, kind: str, dtype: str):
    """A stride-0 leading axis (broadcast_to) and/or an axis of size 1 inserted by
    expand_dims (the first one after the leading axis when both)."""
    views, store_shape = [], shape
    if kind != "broadcast":
        axis = shape.index(1, 1 if kind == "broadcast_singleton" else 0)
        store_shape = shape[:axis] + shape[axis + 1:]
        views.append({"op": "expand_dims", "axis": axis})
    if kind != "singleton":
        store_shape = (1,) + store_shape[1:]
        views.append({"op": "broadcast_to", "shape": list(shape)})
    return tensor(values_of(store_shape), dtype=dtype, views=views)


def _strided(logical, dtype: str, step: int, flip: bool):
    """Every other element of the last axis (from offset 1 going forwards, from the
    end going backwards with step -2), the skipped ones large; `flip`: axis 0 (when
    there are two or more) read in reverse as well."""
    shape = logical.shape
    store = np.full(shape[:-1] + (2 * shape[-1] + (step > 0),), BACKING, dtype=logical.dtype)
    if step > 0:
        store[..., 1::2] = logical
        last = [1, 2 * shape[-1] + 1, 2]
    else:   # positions 2n-1, 2n-3, ..., 1
        store[..., ::-2] = logical
        last = [None, None, -2]
    spec = [[0, d] for d in shape[:-1]] + [last]
    if flip and len(shape) >= 2:
        store = store[::-1].copy()
        spec[0] = [None, None, -1]
    return tensor(store, dtype=dtype, views=[{"op": "slice", "index": spec}])


# --- cotangents ------------------------------------------------------------------------------------

def cotangent_values(shape, seed: int, is_complex: bool) -> np.ndarray:
    """Small nonzero integers (and imaginary parts, for a complex output)."""
    vals = hashed_ints(shape, seed, -3, 3)
    vals = np.where(vals >= 0, vals + 1, vals)   # -3..-1, 1..3: no zero, every entry counts
    if is_complex:
        im = hashed_ints(shape, seed + 5, -3, 3)
        vals = vals + 1j * np.where(im >= 0, im + 1, im)
    return vals


def cotangent_tensor(shape, seed: int, out_dtype: str):
    """The cotangent Tensor of an output of dtype `out_dtype` (complex64 or a float)."""
    return tensor(cotangent_values(shape, seed, out_dtype == COMPLEX), dtype=out_dtype)


def draw_cotangent(draw, shape, out_dtype: str):
    """(Tensor or None for all ones, mode), shrinking towards all ones."""
    mode = draw(D.choice(("ones", "random", "zero")))
    if mode == "ones":
        return None, mode
    if mode == "zero":
        return tensor(np.zeros(shape), dtype=out_dtype), mode
    return cotangent_tensor(shape, draw(D.irange(1, 2**16)), out_dtype), mode


# --- shapes and names -------------------------------------------------------------------------------

def draw_shape(draw):
    """Rank 0..3, sides 0..4 (shrinks towards one element of rank 1); a zero side now and then."""
    rank = draw(D.choice((1, 0, 2, 3)))
    side = D.choice((1, 2, 3, 4, 0))
    return tuple(draw(side) for _ in range(rank))


def draw_shape_and_layout(draw) -> tuple:
    """(logical shape, layout), shrinking towards contiguous: the singleton layout
    gets an axis of size 1 appended when the shape has none; a layout the shape
    cannot take falls back to contiguous."""
    shape = draw_shape(draw)
    kind = draw(D.choice(LAYOUTS))
    if kind in ("singleton", "broadcast_singleton") and 1 not in shape[1:]:
        shape = shape + (1,)
    return shape, (kind if layout_possible(kind, shape) else "contiguous")


def finish(s: Scenario) -> Scenario:
    return D.finish(s)


def unbroadcast(grad, shape) -> np.ndarray:
    """A gradient over the broadcast output summed back to an operand's shape."""
    grad = np.asarray(grad)
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead))) if lead > 0 else grad
    axes = tuple(i for i, d in enumerate(shape) if d == 1 and grad.shape[i] != 1)
    return grad.sum(axis=axes, keepdims=True) if axes else grad.reshape(shape)
