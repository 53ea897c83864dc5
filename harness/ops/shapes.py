"""The shape ops, one table: reshape, transpose, swapaxes, moveaxis, broadcast_to,
broadcast_arrays, expand_dims, squeeze, flatten, unflatten, concatenate, stack,
split, slicing (basic indexing) and contiguous; MLX's Reshape, Transpose,
Broadcast, ExpandDims, Squeeze, Flatten, Unflatten, Concatenate, Split, Slice
and Contiguous primitives.

Every output element of these ops is a copy of one input element, so the
reverse rule is the adjoint of a 0/1 map: each input element collects the
cotangent of every output that copies it (a broadcast input the sum over its
copies; a sliced-away or split-away element 0). The reference forward is
numpy's own op; the VJP runs that forward on element codes to find the map
(_support/copies.py), exact, with nothing differenced. One record per op, each
with its catalog (rank 0, singleton and zero-size axes, negative axes and
steps, and operands stored transposed, strided, reversed, broadcast or as a
window of a larger buffer: _support/views.py), a fuzz strategy and its call as
one expression. The MLX calls are ops/repro/shapes.py, one function per op.

Slicing with a step that selects one element of a longer span (MLX issue
#4444: Slice::vjp and Slice::vmap re-derive the span from a stored triple that
no longer round-trips) has its own scenarios, "slicing/one_element/..."; they
pass on MLX 0.32.4. A related defect does show there: an empty slice with a
negative step whose start lies before the axis (a[-3::-1] of two elements)
keeps a start of -1 that Slice::vjp, ::jvp and ::vmap normalize a second time,
so the VJP raises (".../defect/empty_negative_step").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints
from ._support import expression as E
from ._support.cases import case, in_half_precision, logical_inputs
from ._support.copies import copy_vjp
from ._support.views import draw_layout, draw_shape, draw_values, laid_out, with_imaginary

FLOATS = ("float32", "float16", "bfloat16")


@dataclass(frozen=True)
class ShapeOp:
    # Identity and the MLX primitives its call builds.
    name: str
    summary: str
    primitives: tuple
    # The call: operands (all floating and differentiable; `optional` ones may be left
    # out), numpy's forward on float64 values, and the one MLX call as an expression.
    operands: tuple
    forward: Callable
    expression: Callable
    # Catalog rows () -> [(name, {operand: (values, layout)}, params, description)] and
    # the strategy's (draw) -> ({operand: logical values}, params).
    rows: Callable
    drawn: Callable
    optional: tuple = ()

    def __post_init__(self):
        if not self.operands or not set(self.optional) <= set(self.operands[1:]):
            raise ValueError(f"ShapeOp {self.name!r}: field optional must name operands after the first")


def V(shape, seed=0):
    """Small integers, distinct enough that a misplaced element shows."""
    return seeded_ints(tuple(shape), 300 + seed)


def _axis_list(axis):
    return axis if isinstance(axis, int) or axis is None else tuple(axis)


# --- numpy forwards ------------------------------------------------------------------------------

def _flatten(a, p):
    a = np.asarray(a)
    if a.ndim == 0:
        return a.reshape(1)
    s, e = p.get("start_axis", 0) % a.ndim, p.get("end_axis", -1) % a.ndim
    return a.reshape(a.shape[:s] + (-1 if a.size else int(np.prod(a.shape[s:e + 1])),) + a.shape[e + 1:])


def _unflatten(a, p):
    ax = p["axis"] % a.ndim
    return a.reshape(a.shape[:ax] + tuple(p["shape"]) + a.shape[ax + 1:])


def _concatenate(inp, p):
    arrays = [np.asarray(inp[n]) for n in ("a", "b", "c") if n in inp]
    axis = p.get("axis", 0)
    return np.concatenate([x.reshape(-1) for x in arrays] if axis is None else arrays, axis=axis)


def _split(a, p):
    pieces = np.split(a, p["sections"], axis=p.get("axis", 0))
    pick = p.get("pick", "reversed")
    return np.concatenate(pieces[::-1], axis=p.get("axis", 0)) if pick == "reversed" else pieces[pick]


def _index(spec):
    if spec is None:
        return None
    if spec == "...":
        return Ellipsis
    return spec if isinstance(spec, int) else slice(*spec)


def _slicing(a, p):
    return np.asarray(a)[tuple(_index(s) for s in p["index"])]


# --- call expressions ----------------------------------------------------------------------------

def _x_transpose(p, n):
    return E.call("mx.transpose", n["a"]) if p.get("axes") is None else \
        E.call("mx.transpose", n["a"], E.lit(tuple(p["axes"])))


def _x_squeeze(p, n):
    return E.call("mx.squeeze", n["a"]) if p.get("axis") is None else \
        E.call("mx.squeeze", n["a"], axis=E.lit(p["axis"]))


def _x_concatenate(p, n):
    arrays = "[" + ", ".join(n[k] for k in ("a", "b", "c") if k in n) + "]"
    return E.call("mx.concatenate", arrays, axis=E.lit(p.get("axis", 0)))


def _x_split(p, n):
    split = E.call("mx.split", n["a"], E.lit(p["sections"]), axis=E.lit(p.get("axis", 0)))
    if p.get("pick", "reversed") == "reversed":
        return E.call("mx.concatenate", split + "[::-1]", axis=E.lit(p.get("axis", 0)))
    return f"{split}[{p['pick']}]"


def _x_slicing(p, n):
    def text(spec):
        return "None" if spec is None else "..." if spec == "..." else E.slice_text(spec)
    return n["a"] + E.subscript([text(s) for s in p["index"]])


# --- catalog rows: (name, {operand: (values, layout)}, params, description) -------------------

def _rows_reshape():
    return [
        ("matrix", {"a": (V((2, 3)), "contiguous")}, {"shape": [3, 2]}, ""),
        ("infer", {"a": (V((2, 3, 2), 1), "contiguous")}, {"shape": [-1, 4]}, "a -1 dimension"),
        ("rank0_to_1x1", {"a": (V((), 2), "contiguous")}, {"shape": [1, 1]}, "a 0-d operand"),
        ("to_rank0", {"a": (V((1,), 3), "contiguous")}, {"shape": []}, "to a 0-d output"),
        ("zero_size", {"a": (V((2, 0, 3)), "contiguous")}, {"shape": [3, 0]}, "no elements"),
        ("transposed", {"a": (V((3, 4), 4), "transposed")}, {"shape": [2, 6]}, "a transposed view: a copy"),
        ("strided", {"a": (V((2, 3), 5), "strided")}, {"shape": [6]}, ""),
        ("reversed", {"a": (V((2, 4), 6), "reversed")}, {"shape": [4, 2]}, "a negative stride"),
        ("broadcast", {"a": (V((3, 2), 7), "broadcast")}, {"shape": [2, 3]}, "a stride-0 leading axis"),
        ("singleton_view", {"a": (V((2, 1, 3), 8), "singleton")}, {"shape": [3, 2]}, ""),
    ]


def _rows_transpose():
    return [
        ("matrix", {"a": (V((2, 3)), "contiguous")}, {"axes": [1, 0]}, ""),
        ("default_axes", {"a": (V((2, 3, 4), 1), "contiguous")}, {"axes": None}, "axes reversed"),
        ("rank3_cycle", {"a": (V((2, 3, 4), 2), "contiguous")}, {"axes": [2, 0, 1]}, ""),
        ("negative_axes", {"a": (V((2, 1, 3), 3), "singleton")}, {"axes": [-1, 0, -2]}, ""),
        ("rank0", {"a": (V((), 4), "contiguous")}, {"axes": []}, ""),
        ("zero_size", {"a": (V((0, 3)), "contiguous")}, {"axes": [1, 0]}, ""),
        ("transposed_back", {"a": (V((3, 4), 5), "transposed")}, {"axes": [1, 0]}, "a transpose of a transpose"),
        ("reversed", {"a": (V((2, 3), 6), "reversed")}, {"axes": [1, 0]}, ""),
        ("broadcast", {"a": (V((3, 2, 2), 7), "broadcast")}, {"axes": [2, 0, 1]}, ""),
    ]


def _rows_swapaxes():
    return [
        ("matrix", {"a": (V((2, 3)), "contiguous")}, {"axis1": 0, "axis2": 1}, ""),
        ("negative", {"a": (V((2, 3, 4), 1), "contiguous")}, {"axis1": -1, "axis2": 0}, ""),
        ("same_axis", {"a": (V((2, 3), 2), "strided")}, {"axis1": 1, "axis2": -1}, "a swap that changes nothing"),
        ("zero_size", {"a": (V((2, 0, 1)), "contiguous")}, {"axis1": 0, "axis2": 2}, ""),
        ("window", {"a": (V((3, 2, 2), 3), "window")}, {"axis1": 0, "axis2": 2}, ""),
    ]


def _rows_moveaxis():
    return [
        ("first_to_last", {"a": (V((2, 3, 4)), "contiguous")}, {"source": 0, "destination": -1}, ""),
        ("last_to_first", {"a": (V((2, 3, 4), 1), "transposed")}, {"source": -1, "destination": 0}, ""),
        ("middle", {"a": (V((2, 3, 4), 2), "reversed")}, {"source": 1, "destination": 2}, ""),
        ("zero_size", {"a": (V((0, 2, 3)), "contiguous")}, {"source": 0, "destination": 2}, ""),
    ]


def _rows_broadcast_to():
    return [
        ("new_leading", {"a": (V((3,)), "contiguous")}, {"shape": [2, 3]}, "each a[j] copied twice"),
        ("inner_singleton", {"a": (V((2, 1), 1), "contiguous")}, {"shape": [2, 4]}, ""),
        ("both", {"a": (V((1, 3), 2), "contiguous")}, {"shape": [2, 4, 3]}, "a new axis and a widened one"),
        ("rank0", {"a": (V((), 3), "contiguous")}, {"shape": [2, 2]}, "a 0-d operand everywhere"),
        ("zero_size_operand", {"a": (V((0, 3)), "contiguous")}, {"shape": [2, 0, 3]}, ""),
        ("unchanged", {"a": (V((2, 3), 5), "strided")}, {"shape": [2, 3]}, "a broadcast to its own shape"),
        ("singleton_view", {"a": (V((2, 1), 6), "singleton")}, {"shape": [3, 2, 2]}, ""),
        ("reversed", {"a": (V((1, 3), 7), "reversed")}, {"shape": [2, 3]}, ""),
        ("broadcast_input", {"a": (V((2, 3), 8), "broadcast")}, {"shape": [2, 2, 3]},
         "a broadcast of a broadcast"),
    ]


def _rows_broadcast_arrays():
    return [
        ("row_and_column", {"a": (V((1, 3)), "contiguous"), "b": (V((2, 1), 1), "contiguous")}, {}, ""),
        ("rank0_and_matrix", {"a": (V((), 2), "contiguous"), "b": (V((2, 3), 3), "transposed")}, {}, ""),
        ("same_shape", {"a": (V((2, 2), 4), "reversed"), "b": (V((2, 2), 5), "contiguous")}, {}, ""),
        ("zero_size", {"a": (V((0, 3)), "contiguous"), "b": (V((1, 0, 3), 6), "contiguous")}, {}, ""),
    ]


def _rows_expand_dims():
    return [
        ("leading", {"a": (V((2, 3)), "contiguous")}, {"axis": 0}, ""),
        ("negative", {"a": (V((2, 3), 1), "transposed")}, {"axis": -1}, ""),
        ("several", {"a": (V((2, 3), 2), "strided")}, {"axis": [0, 2]}, ""),
        ("rank0", {"a": (V((), 3), "contiguous")}, {"axis": [0, 1]}, ""),
        ("zero_size", {"a": (V((0, 2)), "contiguous")}, {"axis": 1}, ""),
    ]


def _rows_squeeze():
    return [
        ("all", {"a": (V((1, 3, 1)), "contiguous")}, {"axis": None}, ""),
        ("one_negative", {"a": (V((2, 1, 3), 1), "singleton")}, {"axis": -2}, "the singleton of a view"),
        ("several", {"a": (V((1, 2, 1), 2), "contiguous")}, {"axis": [0, 2]}, ""),
        ("to_rank0", {"a": (V((1, 1), 3), "contiguous")}, {"axis": None}, ""),
        ("zero_size", {"a": (V((0, 1)), "contiguous")}, {"axis": 1}, ""),
        ("transposed", {"a": (V((1, 3), 4), "transposed")}, {"axis": 0}, ""),
    ]


def _rows_flatten():
    return [
        ("all", {"a": (V((2, 3, 2)), "contiguous")}, {"start_axis": 0, "end_axis": -1}, ""),
        ("middle", {"a": (V((2, 3, 2, 2), 1), "contiguous")}, {"start_axis": 1, "end_axis": 2}, ""),
        ("negative", {"a": (V((2, 3, 2), 2), "transposed")}, {"start_axis": -2, "end_axis": -1}, ""),
        ("one_axis", {"a": (V((2, 3), 3), "strided")}, {"start_axis": 1, "end_axis": 1}, "nothing merged"),
        ("rank0", {"a": (V((), 4), "contiguous")}, {"start_axis": 0, "end_axis": -1}, "a 0-d operand: shape (1,)"),
        ("zero_size", {"a": (V((2, 0, 3)), "contiguous")}, {"start_axis": 0, "end_axis": 1}, ""),
        ("broadcast", {"a": (V((2, 2, 2), 5), "broadcast")}, {"start_axis": 0, "end_axis": 1}, ""),
    ]


def _rows_unflatten():
    return [
        ("middle", {"a": (V((2, 6)), "contiguous")}, {"axis": 1, "shape": [3, 2]}, ""),
        ("infer", {"a": (V((6, 2), 1), "transposed")}, {"axis": 0, "shape": [-1, 3]}, "a -1 size"),
        ("negative_axis", {"a": (V((2, 4), 2), "reversed")}, {"axis": -1, "shape": [2, 1, 2]}, ""),
        ("to_singleton", {"a": (V((3,), 3), "strided")}, {"axis": 0, "shape": [3, 1]}, ""),
        ("zero_size", {"a": (V((0, 4)), "contiguous")}, {"axis": 1, "shape": [2, 2]}, ""),
    ]


def _rows_concatenate():
    return [
        ("axis0", {"a": (V((2, 3)), "contiguous"), "b": (V((1, 3), 1), "contiguous")}, {"axis": 0}, ""),
        ("axis1_three", {"a": (V((2, 1), 2), "contiguous"), "b": (V((2, 3), 3), "transposed"),
                         "c": (V((2, 2), 4), "strided")}, {"axis": 1}, "three operands, mixed layouts"),
        ("negative_axis", {"a": (V((2, 2), 5), "reversed"), "b": (V((2, 1), 6), "contiguous")}, {"axis": -1}, ""),
        ("flattened", {"a": (V((2, 2), 7), "contiguous"), "b": (V((3,), 8), "contiguous")}, {"axis": None},
         "axis None: both flattened first"),
        ("zero_size_operand", {"a": (V((2, 0)), "contiguous"), "b": (V((2, 3), 9), "contiguous")}, {"axis": 1},
         "an empty operand: its gradient is empty"),
        ("broadcast", {"a": (V((2, 3), 10), "broadcast"), "b": (V((2, 3), 11), "window")}, {"axis": 0}, ""),
    ]


def _rows_stack():
    return [
        ("axis0", {"a": (V((2, 3)), "contiguous"), "b": (V((2, 3), 1), "contiguous")}, {"axis": 0}, ""),
        ("last", {"a": (V((2, 3), 2), "transposed"), "b": (V((2, 3), 3), "strided")}, {"axis": -1}, ""),
        ("rank0", {"a": (V((), 4), "contiguous"), "b": (V((), 5), "contiguous")}, {"axis": 0}, ""),
        ("zero_size", {"a": (V((0, 2)), "contiguous"), "b": (V((0, 2)), "contiguous")}, {"axis": 1}, ""),
    ]


def _rows_split():
    return [
        ("sections_reversed", {"a": (V((2, 6)), "contiguous")}, {"sections": 3, "axis": 1, "pick": "reversed"},
         "three pieces, joined back in reverse order"),
        ("indices_middle_piece", {"a": (V((5, 2), 1), "contiguous")}, {"sections": [1, 3], "axis": 0, "pick": 1},
         "one piece returned: the others' cotangents are zeros"),
        ("last_piece_negative_axis", {"a": (V((2, 4), 2), "transposed")},
         {"sections": [3], "axis": -1, "pick": 1}, ""),
        ("empty_piece", {"a": (V((4, 2), 3), "strided")}, {"sections": [2, 2], "axis": 0, "pick": "reversed"},
         "repeated indices: an empty middle piece"),
        ("reversed_layout", {"a": (V((3, 2), 4), "reversed")}, {"sections": 3, "axis": 0, "pick": 2}, ""),
        ("zero_size", {"a": (V((0, 4)), "contiguous")}, {"sections": 2, "axis": 1, "pick": "reversed"}, ""),
    ]


def _rows_slicing():
    m = (V((4, 5)), "contiguous")
    return [
        ("range", {"a": m}, {"index": [[1, 3], [0, 5, 2]]}, "a[1:3, 0:5:2]"),
        ("negative_step", {"a": m}, {"index": [[None, None, -1], [4, 0, -2]]}, "a[::-1, 4:0:-2]"),
        ("int_and_step", {"a": (V((3, 4), 1), "transposed")}, {"index": [1, [None, None, 3]]}, "a[1, ::3]"),
        ("newaxis_ellipsis", {"a": (V((2, 3), 2), "strided")}, {"index": [None, "...", [1, None]]},
         "a[None, ..., 1:]"),
        ("empty_range", {"a": m}, {"index": [[3, 1]]}, "a[3:1]: nothing selected, the gradient is 0"),
        ("zero_size_operand", {"a": (V((0, 3)), "contiguous")}, {"index": [[None, None], [1, None, 2]]}, ""),
        ("reversed_view", {"a": (V((2, 5), 3), "reversed")}, {"index": [[None, None], [1, 4, 2]]}, ""),
        ("broadcast_view", {"a": (V((3, 4), 4), "broadcast")}, {"index": [[None, None, 2], [None, None, -1]]}, ""),
        ("one_element/step2_of_2", {"a": (V((2, 3), 5), "contiguous")}, {"index": [[0, None, 2]]},
         "z[0::2] of 2 rows: one row selected by a stride (MLX issue #4444)"),
        ("one_element/step5_of_3", {"a": (V((5,), 6), "contiguous")}, {"index": [[1, 4, 5]]},
         "a[1:4:5]: one element of a span of 3 (MLX issue #4444)"),
        ("one_element/negative_step", {"a": (V((5, 2), 7), "contiguous")}, {"index": [[3, 0, -5]]},
         "a[3:0:-5]: one element by a negative stride (MLX issue #4444)"),
        ("one_element/inner_axis", {"a": (V((2, 4), 8), "transposed")}, {"index": [[None, None], [2, None, 3]]},
         "a[:, 2::3] of a transposed view (MLX issue #4444)"),
        ("defect/empty_negative_step", {"a": (np.array([1.0, 2.0]), "contiguous")}, {"index": [[-3, None, -1]]},
         "a[-3::-1] of 2 elements is empty, but Slice stores start -1 and its VJP normalizes it again to 1: "
         "the VJP raises"),
        ("defect/empty_negative_step/zero_size", {"a": (V((2, 0)), "contiguous")}, {"index": [[-3, None, -2]]},
         "found by the fuzzer on a zero-size operand"),
    ]


def _rows_contiguous():
    return [
        ("transposed", {"a": (V((2, 3)), "transposed")}, {"allow_col_major": False}, ""),
        ("col_major_allowed", {"a": (V((3, 2), 1), "transposed")}, {"allow_col_major": True}, ""),
        ("strided", {"a": (V((2, 3), 2), "strided")}, {"allow_col_major": False}, ""),
        ("broadcast", {"a": (V((2, 3), 3), "broadcast")}, {"allow_col_major": True}, ""),
        ("reversed", {"a": (V((3, 2), 4), "reversed")}, {"allow_col_major": False}, ""),
        ("rank0", {"a": (V((), 5), "contiguous")}, {"allow_col_major": False}, ""),
        ("zero_size", {"a": (V((0, 3)), "contiguous")}, {"allow_col_major": True}, ""),
    ]


# --- strategies: (draw) -> ({operand: logical values}, params) ---------------------------------

def _perm(draw, rank) -> list:
    """A permutation of range(rank), some axes written negative."""
    rest, out = list(range(rank)), []
    while rest:
        ax = rest.pop(draw(D.irange(0, len(rest) - 1)))
        out.append(ax - rank if draw(D.irange(0, 3)) == 3 else ax)
    return out


def _axis(draw, rank) -> int:
    return draw(D.irange(-rank, rank - 1))


def _draw_reshape(draw):
    shape = draw_shape(draw)
    n = int(np.prod(shape, dtype=np.int64))
    targets = [list(shape[::-1]), [n], [1, n], [-1] if n else [0, 2]]
    if len(shape) >= 2:
        targets.append([shape[0] * shape[1]] + list(shape[2:]))
    return {"a": draw_values(draw, shape)}, {"shape": targets[draw(D.irange(0, len(targets) - 1))]}


def _draw_transpose(draw):
    shape = draw_shape(draw)
    axes = None if draw(D.irange(0, 3)) == 0 else _perm(draw, len(shape))
    return {"a": draw_values(draw, shape)}, {"axes": axes}


def _draw_swapaxes(draw):
    shape = draw_shape(draw, 1)
    return {"a": draw_values(draw, shape)}, {"axis1": _axis(draw, len(shape)), "axis2": _axis(draw, len(shape))}


def _draw_moveaxis(draw):
    shape = draw_shape(draw, 1)
    return {"a": draw_values(draw, shape)}, {"source": _axis(draw, len(shape)),
                                              "destination": _axis(draw, len(shape))}


def _source_shape(draw, out) -> tuple:
    """A shape that broadcasts to `out`, never along an axis of size 0: Broadcast::vjp
    would sum the cotangent over that empty axis, which MLX 0.32.4's CPU reduction
    does not do safely (harness/ops/reduce.py)."""
    if 0 in out:
        return tuple(out)
    return D.broadcast_variant(draw, out)


def _draw_broadcast_to(draw):
    out = draw_shape(draw)
    return {"a": draw_values(draw, _source_shape(draw, out))}, {"shape": list(out)}


def _draw_broadcast_arrays(draw):
    out = draw_shape(draw)
    a, b = _source_shape(draw, out), _source_shape(draw, out)
    return {"a": draw_values(draw, a), "b": draw_values(draw, b)}, {}


def _draw_expand_dims(draw):
    shape = draw_shape(draw)
    r = len(shape)
    if draw(D.irange(0, 1)) or r == 0:
        return {"a": draw_values(draw, shape)}, {"axis": draw(D.irange(-(r + 1), r))}
    first = draw(D.irange(0, r))
    return {"a": draw_values(draw, shape)}, {"axis": [first, draw(D.irange(first + 1, r + 1)) - (r + 2)]}


def _draw_squeeze(draw):
    shape = tuple(draw(D.choice((1, 2, 1, 3, 0))) for _ in range(draw(D.irange(1, 3))))
    ones = [i for i, d in enumerate(shape) if d == 1]
    if not ones or draw(D.irange(0, 2)) == 0:
        return {"a": draw_values(draw, shape)}, {"axis": None}
    kept = [ax for ax in ones if draw(D.irange(0, 1)) or ax == ones[0]]
    axes = [ax - len(shape) if draw(D.irange(0, 1)) else ax for ax in kept]
    return {"a": draw_values(draw, shape)}, {"axis": axes[0] if len(axes) == 1 else axes}


def _draw_flatten(draw):
    shape = draw_shape(draw, 0, 4, 3)
    r = max(len(shape), 1)
    s = draw(D.irange(0, r - 1))
    e = draw(D.irange(s, r - 1))
    neg = draw(D.irange(0, 1))
    return {"a": draw_values(draw, shape)}, {"start_axis": s - r if neg else s, "end_axis": e - r if neg else e}


def _draw_unflatten(draw):
    shape = list(draw_shape(draw, 1, 3, 6))
    ax = draw(D.irange(0, len(shape) - 1))
    d = shape[ax]
    f = draw(D.choice(tuple(k for k in range(1, 7) if d % k == 0))) if d else 2
    parts = [f, d // f if d else 0]
    if 0 not in shape and draw(D.irange(0, 2)) == 0:   # -1 cannot be inferred for an empty array
        parts[draw(D.irange(0, 1))] = -1
    return {"a": draw_values(draw, shape)}, {"axis": ax - len(shape) if draw(D.irange(0, 1)) else ax,
                                              "shape": parts}


def _draw_concatenate(draw):
    shape = list(draw_shape(draw, 1, 3, 3))
    ax = draw(D.irange(0, len(shape) - 1))
    names = ("a", "b", "c")[: draw(D.irange(2, 3))]
    if draw(D.irange(0, 4)) == 0:
        return {n: draw_values(draw, draw_shape(draw, 0, 2, 3)) for n in names}, {"axis": None}
    vals = {n: draw_values(draw, shape[:ax] + [draw(D.irange(0, 3))] + shape[ax + 1:]) for n in names}
    return vals, {"axis": ax - len(shape) if draw(D.irange(0, 1)) else ax}


def _draw_stack(draw):
    shape = draw_shape(draw, 0, 2, 3)
    r = len(shape)
    return {"a": draw_values(draw, shape), "b": draw_values(draw, shape)}, {"axis": draw(D.irange(-(r + 1), r))}


def _draw_split(draw):
    shape = list(draw_shape(draw, 1, 3, 6))
    ax = draw(D.irange(0, len(shape) - 1))
    d = shape[ax]
    if draw(D.irange(0, 1)):
        sections = draw(D.choice(tuple(k for k in range(1, 7) if d % k == 0))) if d else 1
        pieces = sections
    else:
        sections = sorted(draw(D.irange(0, d)) for _ in range(draw(D.irange(1, 3))))
        pieces = len(sections) + 1
    pick = draw(D.choice(("reversed",) + tuple(range(pieces))))
    return {"a": draw_values(draw, shape)}, {"sections": sections, "axis": ax - len(shape) if
                                              draw(D.irange(0, 1)) else ax, "pick": pick}


def _draw_entry(draw, d):
    if d and draw(D.irange(0, 4)) == 0:
        return draw(D.irange(-d, d - 1))
    step = draw(D.choice((1, 2, -1, 3, -2, None)))
    bound = lambda: draw(D.choice((None, draw(D.irange(-d - 1, d + 1)))))   # noqa: E731
    return [bound(), bound(), step]


def _draw_slicing(draw):
    shape = draw_shape(draw, 1, 3)
    index = [_draw_entry(draw, d) for d in shape[: draw(D.irange(1, len(shape)))]]
    extra = draw(D.choice(("none", "newaxis", "ellipsis")))
    if extra == "newaxis":
        index.insert(draw(D.irange(0, len(index))), None)
    elif extra == "ellipsis":   # after the entries: before them it would move them to the last axes
        index.append("...")
    return {"a": draw_values(draw, shape)}, {"index": index}


def _draw_contiguous(draw):
    shape = draw_shape(draw)
    return {"a": draw_values(draw, shape)}, {"allow_col_major": bool(draw(D.irange(0, 1)))}


# --- the table -----------------------------------------------------------------------------------

def _one(fn):
    """A forward of operand a alone."""
    return lambda inp, p: fn(np.asarray(inp["a"]), p)


TABLE = (
    ShapeOp("reshape", "mx.reshape (Reshape): -1 sizes, rank 0, zero-size, non-contiguous views", ("Reshape",),
            ("a",), _one(lambda a, p: np.reshape(a, tuple(p["shape"]))),
            lambda p, n: E.call("mx.reshape", n["a"], E.lit(tuple(p["shape"]))), _rows_reshape, _draw_reshape),
    ShapeOp("transpose", "mx.transpose (Transpose): explicit, default and negative axes", ("Transpose",),
            ("a",), _one(lambda a, p: np.transpose(a, None if p.get("axes") is None else tuple(p["axes"]))),
            _x_transpose, _rows_transpose, _draw_transpose),
    ShapeOp("swapaxes", "mx.swapaxes (Transpose)", ("Transpose",), ("a",),
            _one(lambda a, p: np.swapaxes(a, p["axis1"], p["axis2"])),
            lambda p, n: E.call("mx.swapaxes", n["a"], E.lit(p["axis1"]), E.lit(p["axis2"])),
            _rows_swapaxes, _draw_swapaxes),
    ShapeOp("moveaxis", "mx.moveaxis (Transpose)", ("Transpose",), ("a",),
            _one(lambda a, p: np.moveaxis(a, p["source"], p["destination"])),
            lambda p, n: E.call("mx.moveaxis", n["a"], E.lit(p["source"]), E.lit(p["destination"])),
            _rows_moveaxis, _draw_moveaxis),
    ShapeOp("broadcast_to", "mx.broadcast_to (Broadcast): new and widened axes, rank 0, to zero size",
            ("Broadcast",), ("a",), _one(lambda a, p: np.broadcast_to(a, tuple(p["shape"])).copy()),
            lambda p, n: E.call("mx.broadcast_to", n["a"], E.lit(tuple(p["shape"]))),
            _rows_broadcast_to, _draw_broadcast_to),
    ShapeOp("broadcast_arrays", "mx.stack(mx.broadcast_arrays(a, b)) (Broadcast, ExpandDims, Concatenate)",
            ("Broadcast", "ExpandDims", "Concatenate"), ("a", "b"),
            lambda inp, p: np.stack(np.broadcast_arrays(np.asarray(inp["a"]), np.asarray(inp["b"]))),
            lambda p, n: E.call("mx.stack", E.call("mx.broadcast_arrays", n["a"], n["b"])),
            _rows_broadcast_arrays, _draw_broadcast_arrays),
    ShapeOp("expand_dims", "mx.expand_dims (ExpandDims): one or several axes, negative, rank 0",
            ("ExpandDims",), ("a",), _one(lambda a, p: np.expand_dims(a, _axis_list(p["axis"]))),
            lambda p, n: E.call("mx.expand_dims", n["a"], E.lit(p["axis"])), _rows_expand_dims, _draw_expand_dims),
    ShapeOp("squeeze", "mx.squeeze (Squeeze): all, one (negative) or several axes", ("Squeeze",), ("a",),
            _one(lambda a, p: np.squeeze(a, _axis_list(p.get("axis")))), _x_squeeze, _rows_squeeze,
            _draw_squeeze),
    ShapeOp("flatten", "mx.flatten (Flatten; a 0-d operand is a Reshape): start and end axes",
            ("Flatten", "Reshape"), ("a",), _one(_flatten),
            lambda p, n: E.call("mx.flatten", n["a"], start_axis=E.lit(p.get("start_axis", 0)),
                                end_axis=E.lit(p.get("end_axis", -1))), _rows_flatten, _draw_flatten),
    ShapeOp("unflatten", "mx.unflatten (Unflatten): -1 sizes, negative axes", ("Unflatten",), ("a",),
            _one(_unflatten),
            lambda p, n: E.call("mx.unflatten", n["a"], E.lit(p["axis"]), E.lit(tuple(p["shape"]))),
            _rows_unflatten, _draw_unflatten),
    ShapeOp("concatenate", "mx.concatenate (Concatenate): two or three operands, any axis or None, empty ones",
            ("Concatenate", "Flatten"), ("a", "b", "c"), _concatenate, _x_concatenate, _rows_concatenate,
            _draw_concatenate, optional=("c",)),
    ShapeOp("stack", "mx.stack (ExpandDims, Concatenate)", ("ExpandDims", "Concatenate"), ("a", "b"),
            lambda inp, p: np.stack([np.asarray(inp["a"]), np.asarray(inp["b"])], axis=p.get("axis", 0)),
            lambda p, n: E.call("mx.stack", f"[{n['a']}, {n['b']}]", axis=E.lit(p.get("axis", 0))),
            _rows_stack, _draw_stack),
    ShapeOp("split", "mx.split (Split): sections or indices, one piece or all re-joined", ("Split", "Concatenate"),
            ("a",), _one(_split), _x_split, _rows_split, _draw_split),
    ShapeOp("slicing", "basic indexing a[...] (Slice; Squeeze and Gather for ints, ExpandDims for None): "
                       "steps, negative steps, one-element strided selections", ("Slice", "Squeeze", "ExpandDims"),
            ("a",), _one(_slicing), _x_slicing, _rows_slicing, _draw_slicing),
    ShapeOp("contiguous", "mx.contiguous (Contiguous) of transposed, strided, broadcast, reversed views",
            ("Contiguous",), ("a",), _one(lambda a, p: np.array(a)),
            lambda p, n: E.call("mx.contiguous", n["a"], allow_col_major=E.lit(p.get("allow_col_major", False))),
            _rows_contiguous, _draw_contiguous),
)

COMPLEX_ROW = 0   # the first catalog row of every op also runs with complex64 operands


# --- records -------------------------------------------------------------------------------------

def _reference(op: ShapeOp):
    return lambda inp, params: op.forward(inp, params)


def _reference_vjp(op: ShapeOp):
    def vjp(inp, g, params):
        names = [n for n in op.operands if n in inp]
        return copy_vjp(lambda i: op.forward(i, params), inp, g, names)
    return vjp


# Known defects of MLX 0.32.4, by the catalog row that shows them. empty_negative_step: a
# negative-step slice whose start lies before the axis (a[-3::-1] of 2 elements) is empty,
# but Slice keeps the once-normalized start -1, and Slice::vjp (slice_update), ::jvp and
# ::vmap (slice) normalize it again to n - 1: the VJP raises, the JVP and vmap select elements.
TAGS = {"defect/empty_negative_step": ("empty_negative_step",),
        "defect/empty_negative_step/zero_size": ("empty_negative_step",)}
DEFECTS = {"slicing": (KnownDefect("empty_negative_step"),)}


def _scenario(op: ShapeOp, row, dtype="float32", seed=0):
    name, specs, params, desc = row
    operands = {n: laid_out(v, lay, dtype)[0] for n, (v, lay) in specs.items()}
    return case(op.name, name if dtype == "float32" else f"{name}/{dtype}", operands, params,
                reference=_reference(op), seed=seed, family="shape", desc=desc, fd=seed == 0,
                tags=TAGS.get(name, ()) if op.name == "slicing" else ())


def _scenarios(op: ShapeOp):
    def build():
        rows = op.rows()
        out = [_scenario(op, row, seed=k) for k, row in enumerate(rows)]
        out.append(_scenario(op, rows[COMPLEX_ROW], "complex64", seed=len(rows)))
        return out + in_half_precision(out, picks=1)
    return build


def _strategy(op: ShapeOp):
    def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
        dtype = draw(D.choice(dtypes))
        values, params = op.drawn(draw)
        operands = {n: draw_layout(draw, with_imaginary(draw, v, dtype), dtype)[0] for n, v in values.items()}
        y = op.forward(logical_inputs(operands), params)
        cot, mode = D.cotangent(draw, np.shape(y), dtype)
        shapes = ", ".join(f"{n}{np.shape(v)}" for n, v in values.items())
        return D.finish(Scenario(name="", op=op.name, operands=operands, wrt=tuple(operands), params=params,
                                 cotangent=cot, family="shape", description=f"generated: {shapes}, cotangent {mode}"))
    return fuzz_case


def _record(op: ShapeOp) -> OpInfo:
    return OpInfo(
        name=op.name, known_defects=DEFECTS.get(op.name, ()), summary=op.summary, operands=op.operands,
        differentiable=op.operands,
        optional_operands=op.optional, reference=_reference(op), reference_vjp=_reference_vjp(op),
        exact=True, multilinear=True, mlx_call=f".ops.repro.shapes:{op.name}", call_expression=op.expression,
        primitives=op.primitives, dtypes=FLOATS, complex=True, scenarios=_scenarios(op),
        strategy=_strategy(op),
        rule="every output element copies one input element: d x[j] = sum of g over the outputs that copy x[j]")


OPS = tuple(_record(op) for op in TABLE)
