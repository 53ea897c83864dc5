"""masked_scatter: `out = copy(a); out[mask] = v` with a boolean mask, MLX's
MaskedScatter primitive.

Semantics (mlx/ops.cpp masked_scatter): the mask covers the leading mask.ndim axes
of `a` and is repeated along the rest; walking `a` in row-major order, the k-th
selected element takes the k-th element of the source. The source is v broadcast
to (n, *a.shape[mask.ndim:]), where n = v.shape[0] when v has one more axis than
the unmasked ones, and n = mask.size (every selected slot sees the same values)
when it has fewer. Source elements past the last selected one are unused.

What is claimed (a true derivative everywhere: out is affine in a and in v, and no
position is written twice): d a = the cotangent with selected positions zeroed;
d v = the cotangent of the position each source element landed on, summed over
the broadcast copies of a v element, zero for unused source elements. The mask is
an integer operand (0/1), never differentiated.

MaskedScatter::vjp rebuilds the source positions with an exclusive cumsum of the
flattened mask and a scatter_add, which is the kind of index arithmetic (tail
positions past the last true, partial masks, broadcast sources) checked here.
The MLX call is ops/repro/masked_scatter.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core import layout
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, integer_tensor, tensor
from ._support import expression as E
from ._support.complex_parts import complex_op

# --- float64 reference ----------------------------------------------------------------------


def source_map(a_shape, mask_shape, v_shape) -> np.ndarray:
    """Flat index into v of every source element (n, *trailing), row-major."""
    k = len(mask_shape)
    trailing = tuple(a_shape[k:])
    n = v_shape[0] if len(v_shape) == len(trailing) + 1 else int(np.prod(mask_shape, dtype=np.int64))
    ids = np.arange(int(np.prod(v_shape, dtype=np.int64))).reshape(v_shape)
    return np.broadcast_to(ids, (n,) + trailing).ravel()


def selected(a_shape, mask) -> list:
    """Flat positions of a that the mask selects, in row-major order."""
    mask = np.asarray(mask, dtype=np.int64) != 0
    full = np.broadcast_to(mask.reshape(mask.shape + (1,) * (len(a_shape) - mask.ndim)), a_shape)
    return np.flatnonzero(full.ravel()).tolist()


def _pairs(inp):
    a, v = (np.asarray(inp[k], dtype=np.float64) for k in ("a", "v"))
    src = source_map(a.shape, np.shape(inp["mask"]), v.shape)
    pos = selected(a.shape, inp["mask"])
    if len(pos) > src.size:
        raise ValueError(f"{len(pos)} selected positions but only {src.size} source elements")
    return a, v, list(zip(pos, src[: len(pos)].tolist()))


def reference(inp, params):
    a, v, pairs = _pairs(inp)
    out, vf = a.ravel().copy(), v.ravel()
    for p, s in pairs:
        out[p] = vf[s]
    return out.reshape(a.shape)


def reference_vjp(inp, g, params):
    a, v, pairs = _pairs(inp)
    g = np.asarray(g, dtype=np.float64).ravel()
    da, dv = g.copy(), np.zeros(v.size)
    for p, s in pairs:
        da[p] = 0.0
        dv[s] += g[p]
    return {"a": da.reshape(a.shape), "v": dv.reshape(v.shape)}


# --- catalog ------------------------------------------------------------------------------------

def _case(name, a, mask, v, cot_seed=0, desc=""):
    """a, v: Tensors (any layout); the cotangent has a's logical shape."""
    shape = np.shape(layout.logical(a))
    cot = tensor(np.random.RandomState(130 + cot_seed).randint(-4, 5, size=shape))
    return Scenario(name=f"masked_scatter/{name}", op="masked_scatter",
                    operands={"a": a, "mask": integer_tensor(mask), "v": v}, wrt=("a", "v"),
                    cotangent=cot, fd_step=1.0 / 16, family="masked_scatter", description=desc)


def _a(shape, seed=1):
    return tensor(np.random.RandomState(seed).randint(-4, 5, size=shape))


def _v(shape, seed=0):
    return tensor(np.random.RandomState(120 + seed).randint(5, 10, size=shape))


def scenarios() -> list:
    m2 = [[1, 0, 1, 0, 0], [0, 0, 1, 1, 0], [1, 0, 0, 0, 1]]    # 6 of 15, last row ends selected
    rows = [1, 0, 1, 1]
    transposed = tensor(np.random.RandomState(5).randint(-4, 5, size=(5, 3)),   # stored (5, 3)
                        views=[{"op": "transpose", "axes": [1, 0]}])
    strided_v = tensor(np.stack([np.arange(6) + 5, 50 + np.zeros(6)], axis=1).ravel(),
                       views=[{"op": "slice", "index": [[0, 12, 2]]}])
    return [
        _case("full/exact", _a((3, 5)), m2, _v((6,)), desc="one source value per selected element"),
        _case("full/extra_source", _a((3, 5)), m2, _v((9,), 1), 1,
              desc="three source values past the last selected one: their gradient is 0"),
        _case("full/scalar", _a((3, 5)), m2, _v((), 2), 2,
              desc="a[mask] = scalar: dv sums the cotangent over every selected element"),
        _case("full/none_selected", _a((3, 5)), np.zeros((3, 5), int), _v((2,), 3), 3,
              desc="nothing selected: d a = g, d v = 0 exactly"),
        _case("full/all_selected", _a((2, 3), 2), np.ones((2, 3), int), _v((6,), 4), 4),
        _case("rows/exact", _a((4, 3), 3), rows, _v((3, 3), 5), 5,
              desc="mask over the leading axis: whole rows"),
        _case("rows/broadcast_row", _a((4, 3), 3), rows, _v((3,), 6), 6,
              desc="one row written to every selected row: dv sums over them"),
        _case("rows/trailing_broadcast", _a((4, 3), 3), rows, _v((3, 1), 7), 7,
              desc="source (n, 1) broadcast along each row"),
        _case("rank3/leading2", _a((2, 3, 4), 4), [[0, 1, 1], [1, 0, 0]], _v((3, 4), 8), 8,
              desc="a 2-D mask over a 3-D array"),
        _case("full/transposed_a", transposed, m2, _v((6,), 9), 9, desc="a stored transposed"),
        _case("full/strided_v", _a((3, 5)), m2, strided_v, 10,
              desc="v a stride-2 view of a larger buffer"),
    ]


# --- fuzz strategy ------------------------------------------------------------------------------

def _mask(draw, shape):
    kind = draw(D.choice(("random", "all", "none", "one")))
    n = int(np.prod(shape, dtype=np.int64))
    if kind == "all":
        bits = np.ones(n)
    elif kind == "none":
        bits = np.zeros(n)
    elif kind == "one":
        bits = np.eye(n)[draw(D.irange(0, n - 1))]
    else:
        bits = hashed_ints((n,), draw(D.irange(1, 2**16)), 0, 2)
    return bits.astype(np.int64).reshape(shape), kind


def _v_shape(draw, n_sel, mask_size, trailing):
    form = draw(D.choice(("exact", "extra", "broadcast", "trailing_ones")))
    if form == "extra":
        return (n_sel + draw(D.irange(1, 3)),) + trailing, form
    if form == "broadcast":   # fewer axes: one set of values for every selected slot
        return trailing[draw(D.irange(0, len(trailing))):], form
    if form == "trailing_ones" and trailing:
        return (max(n_sel, 1),) + (1,) * len(trailing), form
    return (max(n_sel, 1) if mask_size else 1,) + trailing, form


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape = tuple(draw(D.irange(1, 4)) for _ in range(draw(D.irange(1, 3))))
    k = draw(D.irange(1, len(shape)))
    mask, mkind = _mask(draw, shape[:k])
    n_sel = int(mask.sum())
    v_shape, vform = _v_shape(draw, n_sel, mask.size, shape[k:])
    seed = draw(D.irange(0, 2**16))
    a = D.layout(draw, shape[:-2], shape[-2:], seed, dtype) if len(shape) >= 2 else \
        tensor(hashed_ints(shape, seed), dtype=dtype)
    v = tensor(hashed_ints(v_shape, seed + 1, 5, 10), dtype=dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "v")))))
    cot, cmode = D.cotangent(draw, shape, dtype)
    return D.finish(Scenario(name="", op="masked_scatter",
                             operands={"a": a, "mask": integer_tensor(mask), "v": v}, wrt=wrt,
                             cotangent=cot, family="masked_scatter",
                             description=f"generated: a{shape} mask{mask.shape} {mkind}, "
                                         f"v{v_shape} {vform}, cotangent {cmode}"))


def call_expression(params, names) -> str:
    """out[mask] = v on a copy of a (assignment replaces the copy's graph node, never a's), as one
    expression: (out := copy).__setitem__(mask, v) or out."""
    return E.call(f"(out := mx.array({names['a']})).__setitem__", f"mx.array({names['mask']} != 0)",
                  names["v"]) + " or out"


OPS = (complex_op(OpInfo(
    name="masked_scatter", summary="a[mask] = v (MaskedScatter): full and leading masks, broadcast sources",
    operands=("a", "mask", "v"), differentiable=("a", "v"), integer_operands=("mask",),
    reference=reference, reference_vjp=reference_vjp, exact=True, multilinear=True,
    rule="the k-th selected position of a (row-major) takes source element k; d a = g with the selected "
         "positions zeroed; d v = sum of g over the positions each element of v landed on, 0 if unused",
    mlx_call=".ops.repro.masked_scatter:mlx_call", call_expression=call_expression,
    primitives=("MaskedScatter", "AsType", "Broadcast", "ExpandDims", "Reshape", "Squeeze"),
    dtypes=("float32", "float16", "bfloat16"),
    complex=False,
    scenarios=scenarios, strategy=fuzz_case)),)
