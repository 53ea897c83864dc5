"""at_set: `out = copy(a); out[key] = v`, MLX's Scatter primitive with no reduction
(MLX has no `.at[].set`; indexed assignment is how it is spelled). Also home of
the scatter machinery at_max, at_min and at_multiply share.

Forms of `key` on a 2-D `a` of shape (R, C), index arrays from the scenario:
  rows    a[lhs] = v             v: lhs.shape + (C,)
  cols    a[:, lhs] = v          v: (R,) + lhs.shape
  points  a[lhs, rhs] = v        v: lhs.shape
  slice   a[s0, s1] = v          s_i an int or [start, stop, step] (at_max/min/multiply only:
                                 MLX routes slices to SliceUpdate, tested by slice_update)
  rows_slice  a[lhs, s] = v      s = params["cols"], [start, stop, step]: an index array,
                                 then a slice; v: lhs.shape + (len(s),)
How the updates operand `v` feeds the occurrences (params["updates"]):
  per        one value per occurrence (v has the full update shape)
  shared     one value per DISTINCT target, expanded inside the call with mx.take, so
             every write to a repeated position writes the same parameter
  broadcast  one row (or one value) that MLX itself broadcasts to every occurrence
params["negative"] passes the index arrays as negative int32 (i - dim) to MLX.

What is claimed (reference_vjp), and what is not:
* d a: the cotangent with every written position zeroed. Always a derivative.
* d v, per: g at the occurrence's target, only when no position is written twice.
  With a repeat, which write wins is MLX's ordering and the output does not depend
  on the losing writes, so no elementwise gradient exists: those entries are NaN
  ("undefined"), and scenarios with repeats under `per` write EQUAL values (so the
  forward is defined) and differentiate with respect to `a` only.
* d v, shared / broadcast: all writes to one position read the same element of v,
  so out is a well-defined linear function of v whatever the write order, and
  dv[s] = sum of g over the DISTINCT positions that element lands on (once each,
  however many times it was written there). A reference forward that meets unequal
  writes to one position raises ReferenceUndecided instead of guessing an order.

Two defects of MLX's Scatter::vjp on 0.32.4 (tagged catalog scenarios, expected
to fail; reproducers in probes/findings/):
* duplicate_writes: it gathers the cotangent once per occurrence, so a position
  written k times returns k * g through a shared or broadcast value.
* array_then_slice: for a[idx, start:stop] (step 1 slices after the index arrays)
  MLX's indexing scatters windows of width stop - start along the sliced axis, but
  the VJP gathers windows of width 1 on every indexed axis; reshaping that to v's
  shape raises (set, and .at[].add too). Strided slices (step != 1) are turned into
  index arrays and are fine.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.numeric import ReferenceUndecided
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, index_tensor, tensor

FORMS = ("rows", "cols", "points", "slice", "rows_slice")
ROWS = ("rows", "rows_slice")
MODES = ("per", "shared", "broadcast")

# --- which positions of `a` each update element writes, and which element of v it reads --


def _ids(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def slice_positions(spec, n: int) -> list:
    """Positions an int or [start, stop, step] (None allowed) selects along an axis of n."""
    if isinstance(spec, int):
        return [spec % n]
    return list(range(*slice(*spec).indices(n)))


def row_columns(form, params, C) -> list:
    """Columns each indexed row writes: all of them, or the slice params["cols"]."""
    return slice_positions(params["cols"], C) if form == "rows_slice" else list(range(C))


def keys_of(form, lhs, rhs) -> list:
    """One key per index occurrence, row-major: the target row, column or point."""
    if form == "points":
        return list(zip(_ids(lhs).ravel().tolist(), _ids(rhs).ravel().tolist()))
    return _ids(lhs).ravel().tolist()


def shared_inverse(keys) -> tuple:
    """(slot of each occurrence, number of slots): distinct keys in first-occurrence order."""
    slots = {}
    inv = [slots.setdefault(k, len(slots)) for k in keys]
    return inv, len(slots)


def full_shape(form, a_shape, lhs, params) -> tuple:
    """Shape of the per-occurrence updates MLX scatters."""
    R, C = a_shape
    if form in ROWS:
        return tuple(np.shape(lhs)) + (len(row_columns(form, params, C)),)
    if form == "cols":
        return (R,) + tuple(np.shape(lhs))
    if form == "points":
        return tuple(np.shape(lhs))
    return tuple(len(slice_positions(s, n)) for s, n in zip(params["slices"], a_shape)
                 if not isinstance(s, int))


def targets(form, a_shape, lhs, rhs, params) -> np.ndarray:
    """Flat index into a of every element of the full update shape."""
    R, C = a_shape
    idx = _ids(lhs) if lhs is not None else None
    if form in ROWS:
        return idx[..., None] * C + np.asarray(row_columns(form, params, C), dtype=np.int64)
    if form == "cols":
        return np.arange(R).reshape((R,) + (1,) * idx.ndim) * C + idx[None]
    if form == "points":
        return idx * C + _ids(rhs)
    rows, cols = (slice_positions(s, n) for s, n in zip(params["slices"], a_shape))
    flat = np.array([[r * C + c for c in cols] for r in rows], dtype=np.int64)
    keep = tuple(0 if isinstance(s, int) else slice(None) for s in params["slices"])
    return flat[keep]


def sources(form, mode, a_shape, v_shape, lhs, rhs, params) -> np.ndarray:
    """Flat index into v of every element of the full update shape."""
    full = full_shape(form, a_shape, lhs, params)
    if mode == "per":
        return np.arange(int(np.prod(full, dtype=np.int64))).reshape(full)
    if mode == "broadcast":
        return np.broadcast_to(np.arange(int(np.prod(v_shape, dtype=np.int64))).reshape(v_shape), full)
    inv, U = shared_inverse(keys_of(form, lhs, rhs))
    inv = np.asarray(inv, dtype=np.int64).reshape(np.shape(lhs))
    if form in ROWS:
        width = full[-1]
        return inv[..., None] * width + np.arange(width)
    if form == "cols":
        return np.arange(a_shape[0]).reshape((a_shape[0],) + (1,) * inv.ndim) * U + inv[None]
    return inv


def writes(a_shape, v_shape, lhs, rhs, params) -> dict:
    """target -> list of source elements of v that write it (with multiplicity, in order)."""
    form, mode = params["form"], params.get("updates", "per")
    T = targets(form, a_shape, lhs, rhs, params).ravel()
    S = sources(form, mode, a_shape, v_shape, lhs, rhs, params).ravel()
    out = {}
    for t, s in zip(T.tolist(), S.tolist()):
        out.setdefault(t, []).append(s)
    return out


# --- float64 reference, one reduction at a time -----------------------------------------------

def _flat(inp):
    a, v = (np.asarray(inp[k], dtype=np.float64) for k in ("a", "v"))
    return a, v, writes(a.shape, v.shape, inp.get("lhs"), inp.get("rhs"), inp["params"])


def _bind(inp, lhs, rhs, params):
    return dict(inp, lhs=lhs, rhs=rhs, params=params)


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


def scatter_forward(reduce, inp) -> np.ndarray:
    a, v, w = _flat(inp)
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


def scatter_vjp(reduce, inp, g) -> dict:
    a, v, w = _flat(inp)
    g = np.asarray(g, dtype=np.float64).ravel()
    da, dv, vf, af = g.copy(), np.zeros(v.size), v.ravel(), a.ravel()
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
    return lambda inp, lhs, rhs, params: scatter_forward(reduce, _bind(inp, lhs, rhs, params))


def reference_vjp_of(reduce):
    return lambda inp, g, lhs, rhs, params: scatter_vjp(reduce, _bind(inp, lhs, rhs, params), g)


# --- the MLX call ------------------------------------------------------------------------------

def _index(mx, x, dim, negative):
    """int32 indices; `negative` passes i - dim, which MLX must wrap back to i."""
    i = mx.array(np.asarray(x, dtype=np.int64).astype(np.int32))
    return i - dim if negative else i


def mlx_key(mx, form, a_shape, lhs, rhs, params):
    neg = bool(params.get("negative", False))
    if form == "rows":
        return _index(mx, lhs, a_shape[0], neg)
    if form == "rows_slice":   # an index array, then a slice: a[idx, start:stop:step]
        return (_index(mx, lhs, a_shape[0], neg), slice(*params["cols"]))
    if form == "cols":
        return (slice(None), _index(mx, lhs, a_shape[1], neg))
    if form == "points":
        return (_index(mx, lhs, a_shape[0], neg), _index(mx, rhs, a_shape[1], neg))
    return tuple(s if isinstance(s, int) else slice(*s) for s in params["slices"])


def mlx_updates(mx, form, v, a_shape, lhs, rhs, params):
    """The updates MLX scatters: v itself, or v expanded per occurrence (shared)."""
    if params.get("updates", "per") != "shared":
        return v
    inv, _ = shared_inverse(keys_of(form, np.asarray(lhs), None if rhs is None else np.asarray(rhs)))
    inv = mx.array(np.asarray(inv, dtype=np.int32))
    shape = full_shape(form, a_shape, np.asarray(lhs), params)
    return mx.take(v, inv, axis=1 if form == "cols" else 0).reshape(shape)


def mlx_scatter(reduce, ops, lhs, rhs, params):
    import mlx.core as mx
    a, form = ops["a"], params["form"]
    key = mlx_key(mx, form, a.shape, lhs, rhs, params)
    v = mlx_updates(mx, form, ops["v"], a.shape, lhs, rhs, params)
    if reduce == "set":
        out = mx.array(a)    # a copy: assignment replaces the copy's graph node, never a's
        out[key] = v
        return out
    at = a.at[key]
    return {"max": at.maximum, "min": at.minimum, "prod": at.multiply, "div": at.divide}[reduce](v)


def mlx_call(ops, lhs, rhs, sorted_indices, params):
    return mlx_scatter("set", ops, lhs, rhs, params)


# --- scenario building, shared with at_max / at_min / at_multiply -----------------------------

def v_shape_of(form, mode, a_shape, lhs, rhs, params) -> tuple:
    full = full_shape(form, a_shape, lhs, params)
    if mode == "per":
        return full
    if mode == "broadcast":   # one row for rows/slice, one column for cols, one value for points
        return {"rows": full[-1:], "rows_slice": full[-1:], "slice": full[-1:],
                "cols": (a_shape[0],) + (1,) * (len(full) - 1), "points": (1,)}[form]
    U = shared_inverse(keys_of(form, lhs, rhs))[1]
    return {"rows": (U, full[-1]), "rows_slice": (U, full[-1]), "cols": (a_shape[0], U),
            "points": (U,)}[form]


def per_target_values(form, mode, a_shape, lhs, rhs, params, table) -> np.ndarray:
    """Values of v under which every write to one position writes table[position]:
    `per` reads the table at each occurrence's target; shared and broadcast are equal
    by construction (any values do)."""
    vs = v_shape_of(form, mode, a_shape, lhs, rhs, params)
    if mode != "per":
        return table.ravel()[: int(np.prod(vs, dtype=np.int64))].reshape(vs)
    return table.ravel()[targets(form, a_shape, lhs, rhs, params)]


def case(op, name, a, v, lhs=None, rhs=None, wrt=("a", "v"), cot=None, params=None, fd=False,
         tags=(), desc="") -> Scenario:
    return Scenario(name=f"{op}/{name}", op=op, operands={"a": a, "v": v}, wrt=tuple(wrt),
                    lhs_indices=None if lhs is None else index_tensor(lhs),
                    rhs_indices=None if rhs is None else index_tensor(rhs), cotangent=cot,
                    params=dict(params), fd_step=1.0 / 16 if fd else None, family=family_of(params),
                    defect_tags=tuple(tags), description=desc)


def family_of(params) -> str:
    """The call path, which names a finding: Scatter with size-1 windows, SliceUpdate,
    or Scatter with an index array followed by a slice (windows wider than 1)."""
    return {"slice": "scatter_slice", "rows_slice": "scatter_rows_slice"}.get(params["form"], "scatter")


def repeated(form, lhs, rhs) -> bool:
    keys = keys_of(form, lhs, rhs)
    return len(set(keys)) < len(keys)


def _table(shape, seed):
    return np.random.RandomState(seed).randint(-4, 5, size=shape).astype(np.float64)


def _set_case(name, form, mode, lhs, rhs=None, wrt=("a", "v"), tags=(), desc="", **extra):
    a_shape = (4, 5)
    params = dict({"form": form, "updates": mode}, **extra)
    v = per_target_values(form, mode, a_shape, _ids(lhs), None if rhs is None else _ids(rhs), params,
                          _table((80,), 70 + len(name)) + 6)   # +6: writes stand out from a
    return case("at_set", name, tensor(_table(a_shape, 71)), tensor(v), lhs, rhs, wrt,
                tensor(_table(a_shape, 72)), params, fd=True, tags=tags, desc=desc)


def scenarios() -> list:
    rep = [2, 0, 2, 2]           # row 2 written three times, row 0 once, rows 1 and 3 untouched
    return [
        _set_case("rows/unique", "rows", "per", [3, 0, 1], desc="control: distinct rows"),
        _set_case("rows/repeat_equal/wrt_a", "rows", "per", rep, wrt=("a",),
                  desc="row 2 written three times with equal values: only d a is a derivative"),
        _set_case("cols/unique", "cols", "per", [4, 1]),
        _set_case("cols/repeat_equal/wrt_a", "cols", "per", [1, 3, 1], wrt=("a",)),
        _set_case("points/unique", "points", "per", [0, 3, 3], [1, 1, 4]),
        _set_case("points/rank2_repeat/wrt_a", "points", "per", [[0, 2], [0, 2]], [[1, 4], [1, 4]],
                  wrt=("a",), desc="2-D index arrays, each point written twice"),
        _set_case("rows/negative", "rows", "per", [3, 1], negative=True,
                  desc="indices passed as i - R: MLX must wrap them in forward and VJP alike"),
        _set_case("rows/shared/unique", "rows", "shared", [1, 3],
                  desc="control: shared values with no repeat (mx.take inside the call)"),
        _set_case("rows/broadcast/unique", "rows", "broadcast", [0, 2, 3],
                  desc="control: one row broadcast to three distinct rows: dv sums their cotangents"),
        _set_case("rows/shared/repeat", "rows", "shared", rep, tags=("duplicate_writes",),
                  desc="row 2 written three times from one shared row: dv must be g[2] once, not 3 g[2]"),
        _set_case("rows/broadcast/repeat", "rows", "broadcast", [1, 1], tags=("duplicate_writes",),
                  desc="x[[1, 1]] = w: the row w lands on row 1 once as far as the output can tell"),
        _set_case("points/shared/repeat", "points", "shared", [0, 3, 0], [2, 2, 2],
                  tags=("duplicate_writes",)),
        _set_case("rows_slice/strided", "rows_slice", "per", [3, 0], cols=[None, None, 2],
                  desc="control: a[idx, ::2] = v (MLX turns a strided slice into an index array)"),
        _set_case("rows_slice/range/wrt_a", "rows_slice", "per", [3, 0], cols=[1, 4, None], wrt=("a",),
                  desc="control: a[idx, 1:4] = v, gradient of a only"),
        _set_case("rows_slice/full", "rows_slice", "per", [3, 0], cols=[None, None, None],
                  tags=("array_then_slice",),
                  desc="a[idx, :] = v: MLX scatters a window of 5 columns but its VJP gathers a "
                       "window of 1, and reshaping that to v's shape raises"),
        _set_case("rows_slice/range", "rows_slice", "per", [1, 2], cols=[1, 4, None],
                  tags=("array_then_slice",), desc="a[idx, 1:4] = v"),
    ]


# --- fuzz strategy -----------------------------------------------------------------------------

def draw_indices(draw, form, a_shape):
    """(lhs, rhs) for a scatter form: 1-D or 2-D, patterns from draw.index_values."""
    two_d = draw(D.irange(0, 3)) == 3   # shrinks towards a 1-D index array
    shape = (draw(D.irange(1, 3)), draw(D.irange(1, 3))) if two_d else (draw(D.irange(1, 4)),)
    bound = a_shape[1] if form == "cols" else a_shape[0]
    lhs = D.index_values(draw, shape, bound, False)
    rhs = D.index_values(draw, shape, a_shape[1], False) if form == "points" else None
    return lhs, rhs


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
    """(lhs, rhs) for the form, adding its slices, columns or negative flag to params."""
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


def finish(op, a, v, lhs, rhs, wrt, cot, params, desc) -> Scenario:
    return D.finish(Scenario(name="", op=op, operands={"a": a, "v": v}, wrt=tuple(wrt),
                             lhs_indices=None if lhs is None else index_tensor(lhs),
                             rhs_indices=None if rhs is None else index_tensor(rhs), cotangent=cot,
                             params=params, family=family_of(params), description=f"generated: {desc}"))


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    a_shape = (draw(D.irange(1, 5)), draw(D.irange(1, 5)))
    form = draw(D.choice(("rows", "cols", "points", "rows_slice")))
    mode = draw(D.choice(MODES))
    params = {"form": form, "updates": mode}
    lhs, rhs = draw_form(draw, form, a_shape, params)
    seed = draw(D.irange(0, 2**16))
    table = hashed_ints((a_shape[0] * a_shape[1] * 32,), seed + 3) + 6
    v = per_target_values(form, mode, a_shape, lhs, rhs, params, table)
    undefined = mode == "per" and repeated(form, lhs, rhs)   # then d v does not exist
    wrt = ("a",) if undefined else draw(D.choice(tuple(D.nonempty_subsets(("a", "v")))))
    a = viewed(draw, hashed_ints(a_shape, seed), dtype)
    cot, cmode = D.cotangent(draw, a_shape, dtype)
    return finish("at_set", a, viewed(draw, v, dtype), lhs, rhs, wrt, cot, params,
                  f"{form} {mode} a{a_shape} idx{tuple(np.shape(lhs))}, cotangent {cmode}")


# --- reproducer snippet: the scatter written again as plain loops ---------------------------

REPRO_COMMON = r'''
INTEGER_OPERANDS = ()


def axis_positions(spec, n):
    if isinstance(spec, int):
        return [spec % n]
    return list(range(*slice(*spec).indices(n)))


def occurrence_slots(keys):
    first = {}
    return [first.setdefault(k, len(first)) for k in keys], first


def write_list(a_shape, v_shape, lhs, rhs, params):
    """[(target (r, c), flat index into v)] in MLX's occurrence order."""
    R, C = a_shape
    form, mode = params["form"], params.get("updates", "per")
    found = []   # (target, position in the full update array, position in a shared v)
    if form == "slice":
        specs = params["slices"]
        sel = [axis_positions(s, n) for s, n in zip(specs, a_shape)]
        for i, r in enumerate(sel[0]):
            for j, c in enumerate(sel[1]):
                pos = tuple(p for p, s in zip((i, j), specs) if not isinstance(s, int))
                found.append(((r, c), pos, None))
    else:
        li = [int(x) for x in lhs.ravel()]
        ri = None if rhs is None else [int(x) for x in rhs.ravel()]
        slots, _ = occurrence_slots(list(zip(li, ri)) if form == "points" else li)
        for q, ip in enumerate(np.ndindex(*lhs.shape)):
            if form in ("rows", "rows_slice"):
                cols = axis_positions(params["cols"], C) if form == "rows_slice" else range(C)
                found += [((li[q], c), ip + (j,), (slots[q], j)) for j, c in enumerate(cols)]
            elif form == "cols":
                found += [((r, li[q]), (r,) + ip, (r, slots[q])) for r in range(R)]
            else:
                found.append(((li[q], ri[q]), ip, (slots[q],)))
    out = []
    for t, pos, shared in found:
        if mode == "shared":
            src = shared
        elif mode == "broadcast":   # v lines up with the trailing axes; its size-1 axes repeat
            tail = pos[len(pos) - len(v_shape):]
            src = tuple(p if d > 1 else 0 for p, d in zip(tail, v_shape))
        else:
            src = pos
        out.append((t, int(np.ravel_multi_index(src, v_shape))))
    return out


def by_target(inp, lhs, rhs, params):
    groups = {}
    for t, s in write_list(inp["a"].shape, inp["v"].shape, lhs, rhs, params):
        groups.setdefault(t, []).append(s)
    return groups


def mlx_index(mx, x, dim, params):
    i = mx.array(np.asarray(x).astype(np.int32))
    return i - dim if params.get("negative") else i


def mlx_target(mx, ops, lhs, rhs, params):
    """(key, updates) as the scatter sees them."""
    R, C = ops["a"].shape
    form, v = params["form"], ops["v"]
    if form == "slice":
        return tuple(s if isinstance(s, int) else slice(*s) for s in params["slices"]), v
    if params.get("updates") == "shared":
        li = np.array(lhs).ravel().tolist()
        keys = list(zip(li, np.array(rhs).ravel().tolist())) if form == "points" else li
        slots, _ = occurrence_slots(keys)
        width = len(axis_positions(params["cols"], C)) if form == "rows_slice" else C
        shape = {"rows": tuple(lhs.shape) + (width,), "rows_slice": tuple(lhs.shape) + (width,),
                 "cols": (R,) + tuple(lhs.shape), "points": tuple(lhs.shape)}[form]
        v = mx.take(v, mx.array(np.array(slots, dtype=np.int32)), axis=1 if form == "cols" else 0)
        v = v.reshape(shape)
    if form == "rows":
        return mlx_index(mx, lhs, R, params), v
    if form == "rows_slice":
        return (mlx_index(mx, lhs, R, params), slice(*params["cols"])), v
    if form == "cols":
        return (slice(None), mlx_index(mx, lhs, C, params)), v
    return (mlx_index(mx, lhs, R, params), mlx_index(mx, rhs, C, params)), v
'''

REPRO = REPRO_COMMON + r'''

def ref_forward(inp, lhs, rhs, params):
    out, vf = inp["a"].copy(), inp["v"].ravel()
    for t, srcs in by_target(inp, lhs, rhs, params).items():
        assert len({vf[s] for s in srcs}) == 1, "unequal writes to one position"
        out[t] = vf[srcs[-1]]
    return out


def ref_vjp(inp, g, lhs, rhs, params):
    """Written positions pass nothing to a; each element of v read at a position gets
    that position's cotangent once, however many writes put it there."""
    da, dv = g.copy(), np.zeros(inp["v"].size)
    for t, srcs in by_target(inp, lhs, rhs, params).items():
        da[t] = 0.0
        if len(set(srcs)) == 1:
            dv[srcs[0]] += g[t]
        else:
            dv[list(set(srcs))] = np.nan
    return {"a": da, "v": dv.reshape(inp["v"].shape)}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    key, v = mlx_target(mx, ops, lhs, rhs, params)
    out = mx.array(ops["a"])
    out[key] = v
    return out
'''


OPS = (OpInfo(
    name="at_set", summary="out[idx] = v (Scatter, no reduction): rows, columns, points; repeats",
    operands=("a", "v"), differentiable=("a", "v"), index_arrays=("lhs", "rhs"),
    reference=reference_of("set"), reference_vjp=reference_vjp_of("set"), exact=True, multilinear=True,
    mlx_call=".ops.at_set:mlx_call", scenarios=scenarios, strategy=fuzz_case, repro_source=REPRO),)
