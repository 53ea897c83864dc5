"""The .at[] scatter machinery shared by at_set, at_max (and at_min) and
at_multiply, and the slices slice_update draws too: the index forms of a key
on a 2-D `a`, which positions of `a` each update element writes and which
element of `v` it reads, the float64 scatter rules, and the scenario builders
and strategy pieces of those ops.

Forms of the key on a 2-D `a` of shape (R, C); the index arrays are the
integer operands `row_indices` (indexing axis 0) and `col_indices` (axis 1):
  rows        a[row_indices] = v             v: row_indices.shape + (C,)
  cols        a[:, col_indices] = v          v: (R,) + col_indices.shape
  points      a[row_indices, col_indices]    v: row_indices.shape
  slice       a[s0, s1] = v                  s_i an int or [start, stop, step]
  rows_slice  a[row_indices, s] = v          s = params["cols"]; v: row_indices.shape + (len(s),)
How the updates operand `v` feeds the occurrences (params["updates"]):
  per        one value per occurrence (v has the full update shape)
  shared     one value per DISTINCT target, expanded inside the call with mx.take
  broadcast  one row (or one value) that MLX itself broadcasts to every occurrence
The functions below take the two index arrays as row_idx and col_idx (None where
the form has none).
"""
from __future__ import annotations

import numpy as np

from ...core import draw as D
from ...core.numeric import ReferenceUndecided, as_float64
from ...core.scenario import Scenario
from ...core.tensors import index_tensor, tensor
from . import expression as E

FORMS = ("rows", "cols", "points", "slice", "rows_slice")
ROWS = ("rows", "rows_slice")
MODES = ("per", "shared", "broadcast")
ROW_INDICES, COL_INDICES = "row_indices", "col_indices"
INDEX_OPERANDS = (ROW_INDICES, COL_INDICES)

# --- which positions of `a` each update element writes, and which element of v it reads --


def _ids(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def key_index(form, row_idx, col_idx):
    """The index array whose shape the occurrences take: the columns' in the cols
    form, else the rows' (None in the slice form)."""
    return col_idx if form == "cols" else row_idx


def slice_positions(spec, n: int) -> list:
    """Positions an int or [start, stop, step] (None allowed) selects along an axis of n."""
    if isinstance(spec, int):
        return [spec % n]
    return list(range(*slice(*spec).indices(n)))


def row_columns(form, params, C) -> list:
    """Columns each indexed row writes: all of them, or the slice params["cols"]."""
    return slice_positions(params["cols"], C) if form == "rows_slice" else list(range(C))


def keys_of(form, row_idx, col_idx) -> list:
    """One key per index occurrence, row-major: the target row, column or point."""
    if form == "points":
        return list(zip(_ids(row_idx).ravel().tolist(), _ids(col_idx).ravel().tolist()))
    return _ids(key_index(form, row_idx, col_idx)).ravel().tolist()


def shared_inverse(keys) -> tuple:
    """(slot of each occurrence, number of slots): distinct keys in first-occurrence order."""
    slots = {}
    inv = [slots.setdefault(k, len(slots)) for k in keys]
    return inv, len(slots)


def full_shape(form, a_shape, row_idx, col_idx, params) -> tuple:
    """Shape of the per-occurrence updates MLX scatters."""
    R, C = a_shape
    if form in ROWS:
        return tuple(np.shape(row_idx)) + (len(row_columns(form, params, C)),)
    if form == "cols":
        return (R,) + tuple(np.shape(col_idx))
    if form == "points":
        return tuple(np.shape(row_idx))
    return tuple(len(slice_positions(s, n)) for s, n in zip(params["slices"], a_shape)
                 if not isinstance(s, int))


def targets(form, a_shape, row_idx, col_idx, params) -> np.ndarray:
    """Flat index into a of every element of the full update shape."""
    R, C = a_shape
    if form in ROWS:
        return _ids(row_idx)[..., None] * C + np.asarray(row_columns(form, params, C), dtype=np.int64)
    if form == "cols":
        idx = _ids(col_idx)
        return np.arange(R).reshape((R,) + (1,) * idx.ndim) * C + idx[None]
    if form == "points":
        return _ids(row_idx) * C + _ids(col_idx)
    sel_rows, sel_cols = (slice_positions(s, n) for s, n in zip(params["slices"], a_shape))
    flat = np.array([[r * C + c for c in sel_cols] for r in sel_rows], dtype=np.int64)
    keep = tuple(0 if isinstance(s, int) else slice(None) for s in params["slices"])
    return flat[keep]


def sources(form, mode, a_shape, v_shape, row_idx, col_idx, params) -> np.ndarray:
    """Flat index into v of every element of the full update shape."""
    full = full_shape(form, a_shape, row_idx, col_idx, params)
    if mode == "per":
        return np.arange(int(np.prod(full, dtype=np.int64))).reshape(full)
    if mode == "broadcast":
        return np.broadcast_to(np.arange(int(np.prod(v_shape, dtype=np.int64))).reshape(v_shape), full)
    inv, U = shared_inverse(keys_of(form, row_idx, col_idx))
    inv = np.asarray(inv, dtype=np.int64).reshape(np.shape(key_index(form, row_idx, col_idx)))
    if form in ROWS:
        width = full[-1]
        return inv[..., None] * width + np.arange(width)
    if form == "cols":
        return np.arange(a_shape[0]).reshape((a_shape[0],) + (1,) * inv.ndim) * U + inv[None]
    return inv


def writes(a_shape, v_shape, row_idx, col_idx, params) -> dict:
    """target -> list of source elements of v that write it (with multiplicity, in order)."""
    form, mode = params["form"], params.get("updates", "per")
    T = targets(form, a_shape, row_idx, col_idx, params).ravel()
    S = sources(form, mode, a_shape, v_shape, row_idx, col_idx, params).ravel()
    out = {}
    for t, s in zip(T.tolist(), S.tolist()):
        out.setdefault(t, []).append(s)
    return out


# --- float64 reference, one reduction at a time -----------------------------------------------

def indices_of(inp) -> tuple:
    """(row_idx, col_idx) of a call's inputs, None where absent."""
    return inp.get(ROW_INDICES), inp.get(COL_INDICES)



def _flat(inp, params):
    a, v = (as_float64(inp[k]) for k in ("a", "v"))
    return a, v, writes(a.shape, v.shape, *indices_of(inp), params)


def combine(reduce, base, vals):
    """The value one position ends with: its own value combined with every write."""
    if reduce == "set":
        if len(set(vals)) > 1:
            raise ReferenceUndecided(f"unequal writes {vals} to one position: the result "
                                     "depends on MLX's write order, which is not specified")
        return vals[-1]
    if reduce == "max":
        return max([base] + vals)
    if reduce == "min":
        return min([base] + vals)
    out = base
    for x in vals:
        out = out * x if reduce == "prod" else out / x
    return out


def scatter_forward(reduce, inp, params) -> np.ndarray:
    a, v, w = _flat(inp, params)
    out, vf = a.ravel().copy(), v.ravel()
    for t, srcs in w.items():
        out[t] = combine(reduce, out[t], [vf[s] for s in srcs])
    return out.reshape(a.shape)


def _extremal_winner(reduce, base, vf, srcs):
    """'a', a source index, or None on a tie between distinct candidates."""
    cands = [("a", base)] + [(s, vf[s]) for s in dict.fromkeys(srcs)]
    best = (max if reduce == "max" else min)(x for _, x in cands)
    won = [k for k, x in cands if x == best]
    return won[0] if len(won) == 1 else None


def scatter_vjp(reduce, inp, g, params) -> dict:
    a, v, w = _flat(inp, params)
    g = as_float64(g).ravel()
    dtype = np.result_type(a, v, g)
    da, dv, vf, af = g.astype(dtype), np.zeros(v.size, dtype=dtype), v.ravel(), a.ravel()
    for t, srcs in w.items():
        if reduce == "set":
            da[t] = 0.0
            if len(set(srcs)) > 1:      # distinct writers: which one counts is undefined
                dv[list(set(srcs))] = np.nan
            else:
                dv[srcs[0]] += g[t]
        elif reduce in ("max", "min"):
            win = _extremal_winner(reduce, af[t], vf, srcs)
            if win is None:             # a tie between distinct inputs: no derivative
                da[t] = np.nan
                dv[list(set(srcs))] = np.nan
            elif win != "a":
                da[t] = 0.0
                dv[win] += g[t]
        else:
            da[t], dv = _product_rule(reduce, af[t], vf, srcs, g[t], dv)
    return {"a": da.reshape(a.shape), "v": dv.reshape(v.shape)}


def _product_rule(reduce, base, vf, srcs, gt, dv):
    """out = base * prod(f(v_s)), f = identity (prod) or reciprocal (div), one term per write."""
    f = (lambda x: x) if reduce == "prod" else (lambda x: 1.0 / x)
    df = (lambda x: 1.0) if reduce == "prod" else (lambda x: -1.0 / (x * x))
    terms = [f(vf[s]) for s in srcs]
    for k, s in enumerate(srcs):
        rest = np.prod(terms[:k] + terms[k + 1:]) if len(terms) > 1 else 1.0
        dv[s] += gt * base * rest * df(vf[s])
    return gt * np.prod(terms), dv


def reference_of(reduce):
    return lambda inp, params: scatter_forward(reduce, inp, params)


def reference_vjp_of(reduce):
    return lambda inp, g, params: scatter_vjp(reduce, inp, g, params)


# --- scenario building ----------------------------------------------------------------------

def index_arrays(row_idx=None, col_idx=None) -> tuple:
    """(row_idx, col_idx) from plain lists as int64 arrays (None stays None)."""
    return tuple(None if x is None else _ids(x) for x in (row_idx, col_idx))


def index_operands(row_idx=None, col_idx=None) -> dict:
    """The index operands of a call from plain lists (omitted when None)."""
    return {n: index_tensor(x) for n, x in zip(INDEX_OPERANDS, (row_idx, col_idx)) if x is not None}


def v_shape_of(form, mode, a_shape, row_idx, col_idx, params) -> tuple:
    full = full_shape(form, a_shape, row_idx, col_idx, params)
    if mode == "per":
        return full
    if mode == "broadcast":   # one row for rows/slice, one column for cols, one value for points
        return {"rows": full[-1:], "rows_slice": full[-1:], "slice": full[-1:],
                "cols": (a_shape[0],) + (1,) * (len(full) - 1), "points": (1,)}[form]
    U = shared_inverse(keys_of(form, row_idx, col_idx))[1]
    return {"rows": (U, full[-1]), "rows_slice": (U, full[-1]), "cols": (a_shape[0], U),
            "points": (U,)}[form]


def per_target_values(form, mode, a_shape, row_idx, col_idx, params, table) -> np.ndarray:
    """Values of v under which every write to one position writes table[position]:
    `per` reads the table at each occurrence's target; shared and broadcast are equal
    by construction (any values do)."""
    vs = v_shape_of(form, mode, a_shape, row_idx, col_idx, params)
    if mode != "per":
        return table.ravel()[: int(np.prod(vs, dtype=np.int64))].reshape(vs)
    return table.ravel()[targets(form, a_shape, row_idx, col_idx, params)]


def family_of(params) -> str:
    """The call path, which names a finding: Scatter with size-1 windows, SliceUpdate,
    or Scatter with an index array followed by a slice (windows wider than 1)."""
    return {"slice": "scatter_slice", "rows_slice": "scatter_rows_slice"}.get(params["form"], "scatter")


def case(op, name, a, v, row_idx=None, col_idx=None, wrt=("a", "v"), cot=None, params=None, fd=False,
         tags=(), desc="") -> Scenario:
    return Scenario(name=f"{op}/{name}", op=op, operands={"a": a, "v": v, **index_operands(row_idx, col_idx)},
                    wrt=tuple(wrt), cotangent=cot, params=dict(params), fd_step=1.0 / 16 if fd else None,
                    family=family_of(params), defect_tags=tuple(tags), description=desc)


def repeated(form, row_idx, col_idx) -> bool:
    keys = keys_of(form, row_idx, col_idx)
    return len(set(keys)) < len(keys)


# --- fuzz strategy pieces ---------------------------------------------------------------------

def draw_indices(draw, form, a_shape):
    """(row_idx, col_idx) for a scatter form: 1-D or 2-D, patterns from draw.index_values."""
    two_d = draw(D.irange(0, 3)) == 3   # shrinks towards a 1-D index array
    shape = (draw(D.irange(1, 3)), draw(D.irange(1, 3))) if two_d else (draw(D.irange(1, 4)),)
    first = D.index_values(draw, shape, a_shape[1] if form == "cols" else a_shape[0], False)
    if form == "cols":
        return None, first
    second = D.index_values(draw, shape, a_shape[1], False) if form == "points" else None
    return first, second


def draw_slices(draw, a_shape) -> list:
    """Per axis an int, or [start, stop, step] with steps of either sign."""
    out = []
    for n in a_shape:
        kind = draw(D.choice(("full", "range", "int", "reversed")))
        if kind == "int":
            out.append(draw(D.irange(0, n - 1)))
        elif kind == "range":
            lo = draw(D.irange(0, n - 1))
            out.append([lo, draw(D.irange(lo + 1, n)), draw(D.irange(1, 2))])
        elif kind == "reversed":
            out.append([None, None, -draw(D.irange(1, 2))])
        else:
            out.append([None, None, None])
    if all(isinstance(s, int) for s in out):   # keep one axis: a 0-d update is another call form
        out[-1] = [None, None, None]
    return out


def draw_columns(draw, n) -> list:
    """[start, stop, step] after an index array: ':' first (a window MLX keeps whole),
    then a range, then steps MLX turns into index arrays."""
    kind = draw(D.choice(("full", "range", "strided", "reversed")))
    if kind == "full":
        return [None, None, None]
    if kind == "reversed":
        return [None, None, -1]
    lo = draw(D.irange(0, n - 1))
    return [lo, draw(D.irange(lo + 1, n)), 2 if kind == "strided" else None]


def draw_form(draw, form, a_shape, params):
    """(row_idx, col_idx) for the form, adding its slices, columns or negative flag to params."""
    if form == "slice":
        params["slices"] = draw_slices(draw, a_shape)
        return None, None
    if form == "rows_slice":
        params["cols"] = draw_columns(draw, a_shape[1])
    if draw(D.choice((False, True))):
        params["negative"] = True
    return draw_indices(draw, form, a_shape)


def viewed(draw, values, dtype):
    """A 2-D operand with a drawn storage layout (shrinks towards contiguous)."""
    values = np.asarray(values, dtype=np.float64)
    kind = draw(D.choice(("contiguous", "transpose", "stride")))
    if kind == "transpose" and values.ndim == 2:
        return tensor(values.T, dtype=dtype, views=[{"op": "transpose", "axes": [1, 0]}])
    if kind == "stride" and values.ndim >= 1:
        store = D.BACKING_BASE + np.zeros(values.shape[:-1] + (2 * values.shape[-1],))
        store[..., ::2] = values
        spec = [[0, d] for d in values.shape[:-1]] + [[0, 2 * values.shape[-1], 2]]
        return tensor(store, dtype=dtype, views=[{"op": "slice", "index": spec}])
    return tensor(values, dtype=dtype)


def finish(op, a, v, row_idx, col_idx, wrt, cot, params, desc) -> Scenario:
    return D.finish(Scenario(name="", op=op, operands={"a": a, "v": v, **index_operands(row_idx, col_idx)},
                             wrt=tuple(wrt), cotangent=cot, params=params, family=family_of(params),
                             description=f"generated: {desc}"))


# --- the call as a reproducer writes it (ops/repro/at_*.py's key() and updates()) ---------------

def key_expression(params, names) -> str:
    """The subscript of params' key on a 2-D `a`: [rows], [:, cols], [rows, cols], [rows, 1:4], [s0, s1];
    index arrays as int32, shifted down by the axis length under params["negative"]."""
    form = params["form"]

    def idx(name, axis):
        text = E.index(names[name], "int32")
        return f"{text} - {names['a']}.shape[{axis}]" if params.get("negative") else text

    if form == "slice":
        entries = [E.slice_text(s) for s in params["slices"]]
        return E.subscript(entries) if len(entries) > 1 else f"[{entries[0]},]"
    if form == "cols":
        return E.subscript([":", idx(COL_INDICES, 1)])
    rows = idx(ROW_INDICES, 0)
    if form == "rows":
        return E.subscript([rows])
    if form == "rows_slice":
        return E.subscript([rows, E.slice_text(params["cols"])])
    return E.subscript([rows, idx(COL_INDICES, 1)])


def updates_expression(params, names) -> str:
    """v itself, or (params["updates"] "shared") v's value for each distinct target, in first-occurrence
    order, taken once for every occurrence: mx.take at the rank of each key among the distinct keys."""
    v, form = names["v"], params["form"]
    if params.get("updates") != "shared":
        return v
    ids = names[COL_INDICES if form == "cols" else ROW_INDICES]
    keys = f"({ids} * {names['a']}.shape[1] + {names[COL_INDICES]}).flat" if form == "points" else f"{ids}.flat"
    slots = f"mx.array([[*dict.fromkeys({keys})].index(k) for k in {keys}])"
    if form == "cols":
        return f"mx.take({v}, {slots}, axis=1).reshape(({v}.shape[0],) + {ids}.shape)"
    if form == "points":
        return f"mx.take({v}, {slots}, axis=0).reshape({ids}.shape)"
    return f"mx.take({v}, {slots}, axis=0).reshape({ids}.shape + ({v}.shape[-1],))"
