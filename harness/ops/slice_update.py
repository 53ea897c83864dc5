"""slice_update and dynamic_slice: writing and reading a rectangular region.

slice_update (operands a, u), params["form"]:
  dynamic     mx.slice_update(a, u, start, axes): DynamicSliceUpdate, the start
              indices an array (the integer operand `start`), axes in any order, negative
              axes allowed. MLX's shape rule: u is right-aligned against a; leading
              axes u lacks take a's full extent (extent 1 on a listed axis), the
              others u's extent; u is broadcast to that region.
  static      out = copy(a); out[key] = u: SliceUpdate (None), key per axis an int
              or [start, stop, step] with steps of either sign; u broadcasts to the
              selected region (ints drop their axis).
  static_add  a.at[key].add(u): SliceUpdate (Sum).
dynamic_slice (operands a, start): mx.slice(a, start, axes, slice_size):
  DynamicSlice; unlisted axes start at 0.
params["start_dtype"] (uint32 default, int32, int64, uint8) and ["scalar_start"]
(a 0-d start for one axis) vary how the start array reaches MLX.

What is claimed: each output element is one input element (or a sum of two, for
static_add) and no position is written twice, so the outputs are affine in every
operand and the derivatives exist everywhere: d a = g outside the region (and
inside too for static_add), d u = g over the region summed over u's broadcast
copies; dynamic_slice: d a = g placed in the region, zero elsewhere. The start
indices are not differentiated (MLX refuses that). Starts always keep the region
inside a: MLX does not clamp dynamic starts (out-of-range starts read or write
outside the buffer), so such calls are not a gradient question. The MLX calls are
ops/repro/slice_update.py; the slices are drawn as at_max's (_support/scatter.py).

Known defect of MLX 0.32.4, tagged by rule (`partial_update`), vmap_unbatched_update: under
mx.vmap, a slice update whose update is not batched writes batch element 0 only
(SliceUpdate::vmap and DynamicSliceUpdate::vmap). The VJP for a is such an update (g
with the region set to an unbatched zero), so the mapped VJP leaves every other
example's region unzeroed: wherever a is differentiated, the form writes (dynamic,
static) and the region is not the whole array (which MLX writes as a broadcast).
"""
from __future__ import annotations


import numpy as np

from ..core import draw as D
from ..core import layout
from ..core.opinfo import KnownDefect, OpInfo, tag_by_rules
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, index_tensor, tensor
from ._support.scatter import draw_slices
from ._support import expression as E
from ._support.complex_parts import complex_op

START = "start"
START_DTYPES = ("uint32", "int32", "int64", "uint8")

# --- the region: per axis, which positions of a; which axes the update keeps ------------------


def _axes(params, ndim) -> list:
    return [ax % ndim for ax in params["axes"]]


def dynamic_extent(a_shape, u_shape, axes) -> tuple:
    """MLX's slice_update shape rule (mlx/ops.cpp): the region u is broadcast to."""
    diff = max(len(a_shape) - len(u_shape), 0)
    up = list(a_shape[:diff]) + list(u_shape)
    for d in range(diff, len(a_shape)):
        up[d] = min(up[d], a_shape[d])
    for ax in axes:
        if ax < diff:
            up[ax] = 1
    return tuple(up)


def _starts(start_idx, axes, ndim) -> list:
    start = [0] * ndim
    for ax, s in zip(axes, np.asarray(start_idx, dtype=np.int64).reshape(-1).tolist()):
        start[ax] = s
    return start


def _span(start, extent, n, ax):
    if start < 0 or start + extent > n:
        raise ValueError(f"region [{start}, {start + extent}) leaves axis {ax} of length {n}: "
                         "MLX does not clamp dynamic starts")
    return list(range(start, start + extent))


def region(a_shape, u_shape, start_idx, params) -> tuple:
    """(positions per axis, kept axes): the region of a, in the update's order."""
    form, n = params.get("form", "slice"), len(a_shape)
    if form in ("static", "static_add"):
        pos = [[s % m] if isinstance(s, int) else list(range(*slice(*s).indices(m)))
               for s, m in zip(params["slices"], a_shape)]
        return pos, [d for d, s in enumerate(params["slices"]) if not isinstance(s, int)]
    axes = _axes(params, n)
    size = dynamic_extent(a_shape, u_shape, axes) if form == "dynamic" else tuple(params["size"])
    start = _starts(start_idx, axes, n)
    return [_span(start[d], size[d], a_shape[d], d) for d in range(n)], list(range(n))


def region_map(a_shape, u_shape, start_idx, params) -> tuple:
    """(flat index into a, flat index into u, or None without u) for every region element."""
    pos, kept = region(a_shape, u_shape, start_idx, params)
    grid = np.ix_(*[np.asarray(p, dtype=np.int64) for p in pos])
    flat = np.ravel_multi_index(grid, a_shape)
    flat = flat.reshape([len(pos[d]) for d in kept])
    if u_shape is None:
        return flat.ravel(), None
    src = np.broadcast_to(np.arange(int(np.prod(u_shape, dtype=np.int64))).reshape(u_shape), flat.shape)
    return flat.ravel(), src.ravel()


# --- float64 references ---------------------------------------------------------------------

def _f64(x):
    return np.asarray(x, dtype=np.float64)


def reference(inp, params):
    a, u = _f64(inp["a"]), _f64(inp["u"])
    tgt, src = region_map(a.shape, u.shape, inp.get(START), params)
    out, uf = a.ravel().copy(), u.ravel()
    add = params["form"] == "static_add"
    for t, s in zip(tgt.tolist(), src.tolist()):
        out[t] = out[t] + uf[s] if add else uf[s]
    return out.reshape(a.shape)


def reference_vjp(inp, g, params):
    a, u, g = _f64(inp["a"]), _f64(inp["u"]), _f64(g).ravel()
    tgt, src = region_map(a.shape, u.shape, inp.get(START), params)
    da, du = g.copy(), np.zeros(u.size)
    for t, s in zip(tgt.tolist(), src.tolist()):
        du[s] += g[t]
        if params["form"] != "static_add":
            da[t] = 0.0
    return {"a": da.reshape(a.shape), "u": du.reshape(u.shape)}


def slice_reference(inp, params):
    a = _f64(inp["a"])
    tgt, _ = region_map(a.shape, None, inp[START], params)
    return a.ravel()[tgt].reshape(tuple(params["size"]))


def slice_reference_vjp(inp, g, params):
    a = _f64(inp["a"])
    tgt, _ = region_map(a.shape, None, inp[START], params)
    da = np.zeros(a.size)
    for t, x in zip(tgt.tolist(), _f64(g).ravel().tolist()):
        da[t] += x
    return {"a": da.reshape(a.shape)}


# --- catalog ------------------------------------------------------------------------------------

def _vals(shape, seed, lo=-4, hi=5):
    return np.random.RandomState(seed).randint(lo, hi, size=shape)


def _start_operand(start) -> dict:
    """The start indices as an operand (none for the static forms)."""
    return {} if start is None else {START: index_tensor(start)}


def _upd(name, a, u_shape, params, start=None, seed=0, desc=""):
    a = a if hasattr(a, "views") else tensor(_vals(a, 140 + seed))
    a_shape = np.shape(layout.logical(a))
    u = tensor(_vals(u_shape, 150 + seed, 5, 10))
    return Scenario(name=f"slice_update/{name}", op="slice_update",
                    operands={"a": a, "u": u, **_start_operand(start)}, wrt=("a", "u"), params=params,
                    cotangent=tensor(_vals(a_shape, 160 + seed)), fd_step=1.0 / 16, family="slice",
                    description=desc)


def _transposed3():
    """Logical (2, 4, 3), stored (2, 3, 4) with the last two axes swapped."""
    return tensor(_vals((2, 3, 4), 170), views=[{"op": "transpose", "axes": [0, 2, 1]}])


VMAP_UNBATCHED = "vmap_unbatched_update"


def partial_update(s: Scenario) -> bool:
    """VMAP_UNBATCHED's rule (module text): a differentiated through an update that leaves
    some of it alone."""
    a_shape = np.shape(layout.logical(s.operands["a"]))
    u_shape = np.shape(layout.logical(s.operands["u"]))
    start = layout.logical(s.operands[START], np.int64) if START in s.operands else None
    tgt, _ = region_map(a_shape, u_shape, start, s.params)
    partial = len(set(tgt.tolist())) < int(np.prod(a_shape, dtype=np.int64))
    return "a" in s.wrt and s.params["form"] != "static_add" and partial and s.objective == "vjp"


DEFECTS = (KnownDefect(VMAP_UNBATCHED, revealed_by="vmap", rule=partial_update),)


def update_scenarios() -> list:
    return [tag_by_rules(s, DEFECTS) for s in _update_scenarios()]


def _update_scenarios() -> list:
    full = [None, None, None]
    dyn = lambda axes, **k: dict({"form": "dynamic", "axes": axes}, **k)   # noqa: E731
    st = lambda slices, form="static": {"form": form, "slices": slices}     # noqa: E731
    return [
        _upd("dynamic/rows", (4, 5), (2, 5), dyn([0]), [1], desc="rows 1..2"),
        _upd("dynamic/both_axes", (4, 5), (2, 3), dyn([0, 1]), [2, 1], 1),
        _upd("dynamic/axes_reversed", (4, 5), (3, 2), dyn([1, 0]), [3, 1], 2,
             desc="axes listed as (1, 0): start[0] belongs to axis 1"),
        _upd("dynamic/negative_axis", (4, 5), (4, 2), dyn([-1]), [2], 3),
        _upd("dynamic/lower_rank_update", (4, 5), (2,), dyn([1]), [3], 4,
             desc="u of shape (2,) covers every row: du sums the cotangent over the rows"),
        _upd("dynamic/broadcast_update", (4, 5), (1, 3), dyn([0, 1]), [1, 2], 5,
             desc="u (1, 3) into a region of one row"),
        _upd("dynamic/rank3_transposed", _transposed3(), (1, 2, 3), dyn([0, 1]), [1, 2], 6),
        _upd("dynamic/int64_start", (4, 5), (2, 2), dyn([0, 1], start_dtype="int64"), [2, 3], 7),
        _upd("dynamic/scalar_start", (4, 5), (4, 3), dyn([1], scalar_start=True), [1], 8),
        _upd("static/rows", (4, 5), (2, 5), st([[1, 3, None], full]), seed=9),
        _upd("static/negative_step", (4, 5), (2, 3), st([[None, None, -2], [1, 4, None]]), seed=10,
             desc="a[::-2, 1:4] = u"),
        _upd("static/int_row", (4, 5), (5,), st([2, full]), seed=11),
        _upd("static/broadcast", (4, 5), (1, 3), st([[1, 3, None], [None, None, 2]]), seed=12,
             desc="one row of u broadcast over two rows"),
        _upd("static/full", (3, 4), (4,), st([full, full]), seed=13,
             desc="the whole array: MLX returns broadcast(u) without a SliceUpdate (control)"),
        _upd("static_add/strided", (4, 5), (2, 4), st([[None, None, 2], [1, None, None]], "static_add"),
             seed=14, desc="a.at[::2, 1:].add(u)"),
        _upd("static_add/int_col_reversed", (4, 5), (4,), st([[None, None, -1], 3], "static_add"),
             seed=15),
    ]


def _sl(name, a, size, axes, start, seed=0, desc="", **extra):
    a = a if hasattr(a, "views") else tensor(_vals(a, 180 + seed))
    return Scenario(name=f"dynamic_slice/{name}", op="dynamic_slice", operands={"a": a, **_start_operand(start)},
                    wrt=("a",), params=dict({"axes": axes, "size": size}, **extra),
                    cotangent=tensor(_vals(tuple(size), 190 + seed)), fd_step=1.0 / 16, family="slice",
                    description=desc)


def slice_scenarios() -> list:
    return [
        _sl("rows", (4, 5), [2, 5], [0], [1]),
        _sl("both_axes", (4, 5), [2, 3], [0, 1], [2, 1], 1),
        _sl("partial_unlisted_axis", (4, 5), [2, 3], [0], [1], 2,
            desc="axis 1 is not listed: it starts at 0 and keeps 3 of 5"),
        _sl("axes_reversed", (4, 5), [3, 2], [1, 0], [3, 1], 3),
        _sl("negative_axis", (4, 5), [4, 2], [-1], [2], 4),
        _sl("rank3_transposed", _transposed3(), [1, 2, 3], [0, 1], [1, 2], 5),
        _sl("scalar_int32_start", (4, 5), [4, 3], [1], [2], 6, scalar_start=True, start_dtype="int32"),
    ]


# --- fuzz strategies -----------------------------------------------------------------------------

def _a_operand(draw, shape, seed, dtype):
    return D.layout(draw, shape[:-2], shape[-2:], seed, dtype) if len(shape) >= 2 else \
        tensor(hashed_ints(shape, seed), dtype=dtype)


def _start_params(draw, n_axes):
    params = {}
    dt = draw(D.choice(START_DTYPES))
    if dt != "uint32":
        params["start_dtype"] = dt
    if n_axes == 1 and draw(D.choice((False, True))):
        params["scalar_start"] = True
    return params


def _dynamic_region(draw, shape):
    """(axes as passed, start per listed axis, extent per axis)."""
    n = len(shape)
    axes = [d for d in range(n) if draw(D.choice((True, False)))] or [n - 1]
    if draw(D.choice((False, True))):
        axes = axes[::-1]
    if draw(D.choice((False, True))):
        axes = [ax - n for ax in axes]
    extent = [draw(D.irange(1, m)) for m in shape]
    start = [draw(D.irange(0, shape[ax % n] - extent[ax % n])) for ax in axes]
    return axes, start, extent


def _shrunk_update(draw, region_shape, allow_drop):
    """A shape that broadcasts to the region: some axes 1, maybe leading axes dropped."""
    dims = [draw(D.choice((m, 1))) if m > 1 else m for m in region_shape]
    drop = draw(D.irange(0, len(dims) - 1)) if allow_drop and len(dims) > 1 else 0
    return tuple(dims[drop:])


def update_fuzz(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape = tuple(draw(D.irange(1, 5)) for _ in range(draw(D.irange(1, 3))))
    form = draw(D.choice(("dynamic", "static", "static_add")))
    start = None
    if form == "dynamic":
        axes, start, extent = _dynamic_region(draw, shape)
        params = dict({"form": form, "axes": axes}, **_start_params(draw, len(axes)))
        listed = {ax % len(shape) for ax in axes}
        u_shape = tuple(extent[d] if d in listed or draw(D.choice((True, False))) else
                        draw(D.choice((1, extent[d]))) for d in range(len(shape)))
        # leading axes u drops take a's full extent, or 1 where listed: MLX's rule
        u_shape = u_shape[draw(D.irange(0, len(shape) - 1)):] if draw(D.irange(0, 3)) == 3 else u_shape
    else:
        params = {"form": form, "slices": draw_slices(draw, shape)}
        pos, kept = region(shape, None, None, params)
        u_shape = _shrunk_update(draw, tuple(len(pos[d]) for d in kept), True)
    seed = draw(D.irange(0, 2**16))
    u = tensor(hashed_ints(u_shape, seed + 1, 5, 10), dtype=dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "u")))))
    cot, cmode = D.cotangent(draw, shape, dtype)
    return D.finish(Scenario(name="", op="slice_update",
                             operands={"a": _a_operand(draw, shape, seed, dtype), "u": u,
                                       **_start_operand(start)},
                             wrt=wrt, params=params, cotangent=cot, family="slice",
                             description=f"generated: {form} a{shape} u{u_shape}, cotangent {cmode}"))


def slice_fuzz(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape = tuple(draw(D.irange(1, 5)) for _ in range(draw(D.irange(1, 3))))
    axes, start, extent = _dynamic_region(draw, shape)
    params = dict({"axes": axes, "size": extent}, **_start_params(draw, len(axes)))
    seed = draw(D.irange(0, 2**16))
    cot, cmode = D.cotangent(draw, tuple(extent), dtype)
    a = _a_operand(draw, shape, seed, dtype)
    return D.finish(Scenario(name="", op="dynamic_slice", operands={"a": a, **_start_operand(start)},
                             wrt=("a",), params=params, cotangent=cot, family="slice",
                             description=f"generated: a{shape} size {extent}, cotangent {cmode}"))


def _start(params, names) -> str:
    """The start indices as params["start_dtype"] (uint32 by default); params["scalar_start"]: 0-d."""
    start = names[START] + (".reshape(())" if params.get("scalar_start") else "")
    return E.index(start, params.get("start_dtype", "uint32"))


def update_expression(params, names) -> str:
    """mx.slice_update at array starts, or a[key] = u on a copy of a (one expression:
    (out := copy).__setitem__(key, u) or out), or a.at[key].add(u)."""
    a, u, form = names["a"], names["u"], params["form"]
    if form == "dynamic":
        return E.call("mx.slice_update", a, u, _start(params, names), E.lit(list(params["axes"])))
    entries = [E.slice_text(s) for s in params["slices"]]
    key = E.subscript(entries) if len(entries) > 1 else f"[{entries[0]},]"
    if form == "static_add":
        return E.call(f"{a}.at{key}.add", u)
    return E.call(f"(out := mx.array({a})).__setitem__", f"np.s_{key}", u) + " or out"


def slice_expression(params, names) -> str:
    return E.call("mx.slice", names["a"], _start(params, names), E.lit(list(params["axes"])),
                  E.lit(list(params["size"])))


OPS = (
    complex_op(OpInfo(name="slice_update", known_defects=DEFECTS,
           summary="mx.slice_update with array starts, a[slices] = u, a.at[slices].add(u)",
           operands=("a", "u", START), differentiable=("a", "u"), integer_operands=(START,),
           optional_operands=(START,), reference=reference, reference_vjp=reference_vjp, exact=True,
           multilinear=True,
           rule="d a = g outside the region (and inside too for static_add); d u = g over the region, "
                "summed over u's broadcast copies",
           mlx_call=".ops.repro.slice_update:slice_update", call_expression=update_expression,
           primitives=("DynamicSliceUpdate", "SliceUpdate", "Add", "AsType", "Broadcast", "ExpandDims"),
           dtypes=("float32", "float16", "bfloat16"), complex=False,
           scenarios=update_scenarios, strategy=update_fuzz)),
    complex_op(OpInfo(name="dynamic_slice", summary="mx.slice with array starts (DynamicSlice)",
           operands=("a", START), differentiable=("a",), integer_operands=(START,), reference=slice_reference,
           reference_vjp=slice_reference_vjp, exact=True, multilinear=True,
           rule="out = a over the region; d a = g placed in the region, 0 elsewhere",
           mlx_call=".ops.repro.slice_update:dynamic_slice", call_expression=slice_expression,
           primitives=("DynamicSlice",), dtypes=("float32", "float16", "bfloat16"), complex=False,
           scenarios=slice_scenarios, strategy=slice_fuzz)),
)
