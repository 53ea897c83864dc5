"""Systematic corners, derived from an API entry's arguments alone (no entry lists its
own): sizes 0 and 1 in every dimension, rank 0, broadcasting, views (transposed,
strided, reversed, offset), every dtype the entry may take, and special values (zeros,
ties, large magnitudes, the domain's edges, duplicate indices). Operands that are not
differentiated are given in every integer and bool dtype MLX may take for them (index
operands in every integer type their bound fits, a condition as int32, uint8 or float32),
and a free float operand of a function of several is given as int32, uint8 or bool too
(MLX casts it from that type: the gradient of the others is still checked).

A corner is data (`Corner`); `case(entry, corner, rng)` turns it into what gradcheck
takes: a function of the differentiated arguments and the inputs. A corner that
makes MLX's forward refuse the call is not a finding: the sweep records it as not
applicable (the VJP may refuse what the forward refuses).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import api, values

DTYPES = ("float32", "float16", "bfloat16")
FILLS = ("generic", "zeros", "ties", "large", "edges", "duplicates")
VIEWS = ("transposed", "strided", "reversed", "offset")


@dataclass(frozen=True)
class Corner:
    name: str
    dtype: str = "float32"
    # Per argument: a replacement shape, or None to keep the entry's.
    shapes: tuple = ()
    fill: str = "generic"
    view: str = ""
    # Per argument: the dtype it is given in (an integer or bool type), or None to keep it.
    casts: tuple = ()


def _free(entry: api.Entry) -> list:
    return [i for i, a in enumerate(entry.args) if a is not None and a.free]


def _float_args(entry: api.Entry) -> list:
    return [i for i, a in enumerate(entry.args) if a is not None and a.differentiable]


def _shape_corners(entry: api.Entry) -> list:
    """Sizes 0 and 1 in every dimension of every differentiated argument (one at a time;
    free arguments change together, so elementwise calls still broadcast), rank 0 for
    free arguments, and broadcasting between free arguments."""
    out, free = [], _free(entry)
    for i in _float_args(entry):
        together = free if i in free else [i]
        for d in range(len(entry.args[i].shape)):
            for size in (0, 1):
                if entry.args[i].shape[d] == size:
                    continue
                shapes = [None] * len(entry.args)
                for j in together:
                    s = list(entry.args[j].shape)
                    if d < len(s):
                        s[d] = size
                    shapes[j] = tuple(s)
                out.append(Corner(f"size{size}-arg{i}-dim{d}", shapes=tuple(shapes)))
        if i in free and i == (free[0] if free else None):
            out.append(Corner("rank0", shapes=tuple(() if j in free else None for j in range(len(entry.args)))))
    if len(free) >= 2:
        shapes = [None] * len(entry.args)
        first = entry.args[free[0]].shape
        shapes[free[0]] = first[:-1] + (1,) if first else ()
        shapes[free[1]] = (1,) + entry.args[free[1]].shape[1:] if entry.args[free[1]].shape else ()
        out.append(Corner("broadcast", shapes=tuple(shapes)))
    return out


def corners(entry: api.Entry) -> list:
    """Every corner of an entry, the generic point first."""
    out = [Corner("generic")]
    out += [Corner(f"dtype-{d}", dtype=d) for d in DTYPES[1:]]
    if not entry.real_only:
        out.append(Corner("dtype-complex64", dtype="complex64"))
    if not entry.layer:
        out += _shape_corners(entry)
        out += [Corner(f"view-{v}", view=v) for v in VIEWS]
    out += _operand_corners(entry)
    out += [Corner(f"fill-{f}", fill=f) for f in FILLS[1:]
            if f != "duplicates" or any(a is not None and a.domain == api.INDEX and a.dtype == "int32"
                                        for a in entry.args)]
    return out


# Integer types an index operand may come in, with the largest index each holds.
INDEX_DTYPES = {"uint8": 255, "int8": 127, "int16": 2**15 - 1, "uint16": 2**16 - 1, "uint32": 2**32 - 1,
                "int64": 2**63 - 1, "uint64": 2**64 - 1}
CONDITION_DTYPES = ("int32", "uint8", "float32")
OPERAND_DTYPES = ("int32", "uint8", "bool")   # a float operand given as an integer or bool


def _operand_corners(entry: api.Entry) -> list:
    """Each non-differentiated operand in every other dtype MLX may take for it, and each
    free float operand of a function of several given as an integer or bool."""
    out, floats = [], _float_args(entry)

    def one(i, t):
        casts = tuple(t if j == i else None for j in range(len(entry.args)))
        return Corner(f"operand-{t}-arg{i}", casts=casts)
    for i, a in enumerate(entry.args):
        if a is None:
            continue
        if a.domain == api.INDEX and a.dtype == "int32":
            out += [one(i, t) for t, top in INDEX_DTYPES.items() if a.bound - 1 <= top]
        elif a.dtype == "bool":
            out += [one(i, t) for t in CONDITION_DTYPES]
        elif a.differentiable and a.free and len(floats) >= 2:
            out += [one(i, t) for t in OPERAND_DTYPES]
    return out


def _cast(arg: api.Arg, base: np.ndarray, dtype: str) -> np.ndarray:
    """An operand's values in an integer or bool dtype: indices and conditions as they are;
    a float operand rounded to small integers inside its domain (>= 1 where it must be
    positive), or its sign as a bool."""
    if not arg.differentiable:
        return base.astype(dtype)
    if dtype == "bool":
        return base > 0
    ints = np.rint(3 * base)
    if arg.domain in (api.POSITIVE, api.ABOVE_ONE, api.NONZERO) or dtype.startswith("uint"):
        ints = np.maximum(np.abs(ints), 2 if arg.domain == api.ABOVE_ONE else 1)
    return ints.astype(dtype)


# --- values ------------------------------------------------------------------------------

LARGE = {"float32": 3e4, "float16": 120.0, "bfloat16": 3e4, "complex64": 3e4}
EDGE = {api.UNIT: 0.999, api.POSITIVE: 1e-3, api.ABOVE_ONE: 1.001, api.PROB: 1e-3}


def _fill(arg: api.Arg, base: np.ndarray, fill: str, dtype: str, rng) -> np.ndarray:
    if arg.domain == api.INDEX:
        return np.zeros_like(base) if fill == "duplicates" else base
    if not arg.differentiable or fill == "generic":
        return base
    if fill == "zeros" and arg.domain in (api.REAL, api.PROB):
        return np.zeros_like(base)
    if fill == "ties":   # every element equal: max, sort, median... decide among equals
        return np.full_like(base, base.flat[0]) if base.size else base
    if fill == "large" and arg.domain in (api.REAL, api.NONZERO, api.POSITIVE, api.ABOVE_ONE):
        return base * LARGE[dtype]
    if fill == "edges" and arg.domain in EDGE:
        edge = EDGE[arg.domain]
        return np.where(base < 0, -edge, edge) if arg.domain == api.UNIT else np.full_like(base, edge)
    return base


def _view_shape(shape: tuple, view: str) -> tuple:
    """The shape of the base array a view is taken from."""
    if not shape:
        return shape
    if view == "transposed":
        return tuple(reversed(shape))
    if view == "strided":
        return shape[:-1] + (2 * shape[-1],)
    if view == "offset":
        return shape[:-1] + (shape[-1] + 1,)
    return shape


def _embed(v: np.ndarray, view: str) -> np.ndarray:
    """A base array whose view (_take_view) is v; the elements the view skips are 0.5."""
    if v.ndim == 0 or not view:
        return v
    if view == "transposed":
        return np.ascontiguousarray(v.T)
    if view == "reversed":
        return np.ascontiguousarray(v[..., ::-1])
    base = np.full(_view_shape(v.shape, view), 0.5)
    if view == "strided":
        base[..., ::2] = v
    else:
        base[..., 1:] = v   # offset
    return base


def _take_view(x, view: str):
    mx = api._mx()
    if x.ndim == 0 or not view:
        return x
    if view == "transposed":
        return mx.transpose(x)
    if view == "strided":
        return x[..., ::2]
    if view == "reversed":
        return x[..., ::-1]
    return x[..., 1:]   # offset


def _complex(rng, base: np.ndarray) -> np.ndarray:
    return base + 1j * values.draw(api.Arg(base.shape), rng)


@dataclass
class Case:
    entry: api.Entry
    corner: Corner
    fn: object        # a function of the entry's arguments (views taken inside)
    inputs: list      # numpy arrays (float64 for differentiated arguments) or None


def case(entry: api.Entry, corner: Corner, rng) -> Case:
    shapes = corner.shapes or (None,) * len(entry.args)
    casts = corner.casts or (None,) * len(entry.args)
    shrunk = _shrunk(entry, shapes)
    inputs = []
    for arg, shape, cast in zip(entry.args, shapes, casts):
        if arg is None:
            inputs.append(None)
            continue
        shape = arg.shape if shape is None else shape
        if arg.domain == api.INDEX and arg.dtype == "int32" and arg.bound in shrunk:
            # the indices point into a dimension the corner made smaller: they stay inside it
            # (an index past the end is not a gradient question: MLX does not check bounds);
            # into an empty dimension there are none
            new = shrunk[arg.bound]
            arg = api.Arg(arg.shape, arg.domain, arg.dtype, max(new, 1), arg.free)
            shape = shape[:-1] + (0,) if new == 0 and shape else shape
        if corner.view and arg.differentiable and arg.domain == api.SIMPLEX:
            # a distribution along the last axis of what the function sees, not of the base
            # (MLX's cross_entropy relies on rows summing to 1): drawn at the viewed shape
            base = _embed(values.draw(arg, rng, shape), corner.view)
        elif corner.view and arg.differentiable:
            base = values.draw(arg, rng, _view_shape(shape, corner.view))
        else:
            base = values.draw(arg, rng, shape)
        base = _fill(arg, base, corner.fill, corner.dtype, rng)
        if corner.dtype == "complex64" and arg.differentiable:
            base = _complex(rng, base)
        inputs.append(_cast(arg, base, cast) if cast else base)
    return Case(entry, corner, _function(entry, corner), inputs)


def _shrunk(entry: api.Entry, shapes: tuple) -> dict:
    """{old size: new size} of the differentiated arguments' dimensions a corner made smaller."""
    out = {}
    for arg, shape in zip(entry.args, shapes):
        if arg is not None and arg.differentiable and shape is not None and len(shape) == len(arg.shape):
            out.update({a: b for a, b in zip(arg.shape, shape) if b < a})
    return out


def _function(entry: api.Entry, corner: Corner):
    if entry.layer:
        return entry.call()
    if not corner.view:
        return entry.call
    diff = [a is not None and a.differentiable for a in entry.args]

    def viewed(*xs):
        return entry.call(*[_take_view(x, corner.view) if d else x for x, d in zip(xs, diff)])
    return viewed
