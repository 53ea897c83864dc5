"""Fuzz targets for the gather family (harness.family): repeated, omitted and
identity indices, cotangents whose contributions cancel exactly, unused rows,
feature widths from 1 to above 64, and several accumulation steps.
These are controls today: any finding here is reported like any other.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .. import family  # registers the ops
from ..family import cancel_rows
from ..scenario import Scenario
from . import repro_family, repro_ops
from .strategies import (choice, finish, index_tensor, index_values, ints, irange, layout,
                         nonempty_subsets, register, tensor)

WIDTHS = (1, 2, 3, 5, 8, 17, 64, 65, 80)
COTANGENTS = ("ones", "random", "cancel", "zero", "negative")


def occurrence_cotangent(draw, rows_shape, keys, dtype):
    """Cotangent with one row per index occurrence (rows_shape = (n, width))."""
    mode = draw(choice(COTANGENTS))
    if mode == "ones":
        return None, mode
    if mode == "zero":
        return np.zeros(rows_shape), mode
    g = ints(rows_shape, draw(irange(1, 2**16)))
    if mode == "negative":
        g = -np.abs(g) - 1
    if mode == "cancel":
        g = cancel_rows(np.abs(g) + 1, keys)
    return g, mode


def _scenario(op, operands, idx, wrt, cot, params, desc):
    return finish(Scenario(name="", op=op, operands=operands, wrt=tuple(wrt),
                           lhs_indices=index_tensor(idx), cotangent=cot, params=params,
                           family="gather_family", description=f"generated: {desc}"))


def _cot_tensor(g, shape, dtype):
    return None if g is None else tensor(np.asarray(g).reshape(shape), dtype)


@st.composite
def table_case(draw, op, dtypes):
    """take / a[idx] / Embedding: rows (axis 0) or columns (take, axis 1) of a table."""
    dtype = draw(choice(dtypes))
    V, D = draw(irange(1, 6)), draw(choice(WIDTHS))
    axis = draw(choice((0, 1))) if op == "take" else 0
    steps = draw(choice((1, 2, 3))) if axis == 0 else 1
    shape = tuple(draw(irange(1, 5)) for _ in range(draw(irange(1, 2))))
    full = ((steps,) if steps > 1 else ()) + shape
    idx = index_values(draw, full, V if axis == 0 else D, False)
    name = "weight" if op == "embedding" else "a"
    a = layout(draw, (), (V, D), draw(irange(0, 2**16)), dtype)
    n = int(idx.size)
    if axis == 0:
        g, mode = occurrence_cotangent(draw, (n, D), idx.ravel().tolist(), dtype)
        cot = _cot_tensor(g, idx.shape + (D,), dtype)
    else:   # output (V,) + idx.shape: occurrence q owns the column out[:, q]
        g, mode = occurrence_cotangent(draw, (n, V), idx.ravel().tolist(), dtype)
        cot = None if g is None else tensor(np.moveaxis(g.reshape(idx.shape + (V,)), -1, 0), dtype)
    params = {"axis": axis} if op == "take" else {}
    if steps > 1:
        params["steps"] = steps
    return _scenario(op, {name: a}, idx, (name,), cot, params,
                     f"V={V} D={D} axis {axis} steps {steps}, cotangent {mode}")


@st.composite
def take_along_axis_case(draw, dtypes):
    dtype = draw(choice(dtypes))
    R, C, P = draw(irange(1, 5)), draw(choice(WIDTHS[:6])), draw(irange(1, 5))
    axis = draw(choice((1, 0)))
    shape, bound = ((R, P), C) if axis == 1 else ((P, C), R)
    idx = index_values(draw, shape, bound, False)
    a = layout(draw, (), (R, C), draw(irange(0, 2**16)), dtype)
    keys = [(r, int(idx[r, p])) if axis == 1 else (int(idx[r, p]), p)
            for r in range(shape[0]) for p in range(shape[1])]
    g, mode = occurrence_cotangent(draw, (len(keys), 1), keys, dtype)
    return _scenario("take_along_axis", {"a": a}, idx, ("a",), _cot_tensor(g, shape, dtype),
                     {"axis": axis}, f"R={R} C={C} axis {axis}, cotangent {mode}")


@st.composite
def at_add_case(draw, dtypes):
    """a.at[idx].add(v); values of repeated indices may cancel in the forward."""
    dtype = draw(choice(dtypes))
    V, D, P = draw(irange(1, 6)), draw(choice(WIDTHS)), draw(irange(1, 5))
    steps = draw(choice((1, 2, 3)))
    shape = ((steps,) if steps > 1 else ()) + (P,)
    idx = index_values(draw, shape, V, False)
    keys = idx.ravel().tolist()
    seed = draw(irange(0, 2**16))
    v = ints((len(keys), D), seed + 5)
    if draw(choice((False, True))):
        v = cancel_rows(v, keys)
    a = layout(draw, (), (V, D), seed, dtype)
    g, mode = occurrence_cotangent(draw, (V, D), list(range(V)), dtype)
    params = {"steps": steps} if steps > 1 else {}
    wrt = draw(choice(tuple(nonempty_subsets(("a", "v")))))
    return _scenario("at_add", {"a": a, "v": tensor(v.reshape(shape + (D,)), dtype)}, idx, wrt,
                     _cot_tensor(g, (V, D), dtype), params, f"V={V} D={D} steps {steps}, cotangent {mode}")


@st.composite
def put_along_axis_case(draw, dtypes):
    """Unique targets per row/column (then dv is a derivative), or one target
    written repeatedly with equal values (then only da is)."""
    dtype = draw(choice(dtypes))
    R, C = draw(irange(1, 5)), draw(irange(1, 5))
    axis = draw(choice((1, 0)))
    lines, bound = (R, C) if axis == 1 else (C, R)
    P = draw(irange(1, bound))
    repeat = draw(choice((False, True)))
    offs = [draw(irange(0, bound - 1)) for _ in range(lines)]
    rows = [[o] * P if repeat else [(o + p) % bound for p in range(P)] for o in offs]
    idx = np.array(rows, dtype=np.int64) if axis == 1 else np.array(rows, dtype=np.int64).T
    seed = draw(irange(0, 2**16))
    vals = ints((lines, 1 if repeat else P), seed + 7) * np.ones((lines, P))
    v = vals if axis == 1 else vals.T
    a = layout(draw, (), (R, C), seed, dtype)
    g, mode = occurrence_cotangent(draw, (R, C), list(range(R)), dtype)
    wrt = ("a",) if repeat else draw(choice(tuple(nonempty_subsets(("a", "v")))))
    return _scenario("put_along_axis", {"a": a, "v": tensor(v, dtype)}, idx, wrt,
                     _cot_tensor(g, (R, C), dtype), {"axis": axis},
                     f"R={R} C={C} axis {axis} {'repeated' if repeat else 'unique'}, cotangent {mode}")


for _op in ("take", "getitem", "embedding"):
    register(_op, (lambda op: lambda dtypes=("float32",): table_case(op, dtypes))(_op))
register("take_along_axis", take_along_axis_case)
register("at_add", at_add_case)
register("put_along_axis", put_along_axis_case)
for _op, _src in repro_family.SNIPPETS.items():
    repro_ops.register(_op, _src)
