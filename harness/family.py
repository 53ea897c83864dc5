"""The gather family beyond gather_mm: take, a[idx], nn.Embedding, take_along_axis,
.at[idx].add and put_along_axis. Float64 references (numpy storage, scalar
accumulation loops, never mlx), OpInfo registrations, and catalog scenarios.

Every op takes its index array as the scenario's `lhs_indices`. The reverse rule
everywhere is scatter-add: each occurrence of an index adds its own cotangent
to that row, rows nothing selects stay exactly zero (never "assign", which
keeps only the last occurrence). `steps` > 1 splits the index array's leading
axis into separate calls whose gradients MLX must accumulate.
"""
from __future__ import annotations

import numpy as np

from .opinfo import OpInfo, register
from .scenario import Scenario, Tensor


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _ids(idx) -> list:
    return [int(v) for v in np.asarray(idx, dtype=np.int64).ravel()]


# --- take along one axis (also a[idx] and Embedding: axis 0) -------------------

def take(a, idx, axis=0) -> np.ndarray:
    """np.take semantics: shape a.shape[:axis] + idx.shape + a.shape[axis+1:]."""
    am = np.moveaxis(_f64(a), axis, 0)
    idx = np.asarray(idx, dtype=np.int64)
    rows = np.zeros((idx.size,) + am.shape[1:])
    for q, i in enumerate(_ids(idx)):
        rows[q] = am[i]
    out = rows.reshape(idx.shape + am.shape[1:])
    return np.moveaxis(out, list(range(idx.ndim)), list(range(axis, axis + idx.ndim)))


def take_vjp(a, g, idx, axis=0) -> np.ndarray:
    """da[i] = sum over occurrences q of i of G[q] (scatter-add, float64)."""
    am_shape = np.moveaxis(_f64(a), axis, 0).shape
    idx = np.asarray(idx, dtype=np.int64)
    gm = np.moveaxis(_f64(g), list(range(axis, axis + idx.ndim)), list(range(idx.ndim)))
    gm = gm.reshape((idx.size, -1))
    da = np.zeros((am_shape[0], gm.shape[1]))
    for q, i in enumerate(_ids(idx)):
        for c in range(gm.shape[1]):
            da[i, c] += gm[q, c]
    return np.moveaxis(da.reshape(am_shape), 0, axis)


# --- take_along_axis / put_along_axis on 2-D arrays ----------------------------

def _along(shape_idx, axis):
    """(output position, source position) pairs for a 2-D along-axis index."""
    R, P = shape_idx
    return [((r, p), (r, None)) if axis == 1 else ((r, p), (None, p)) for r in range(R) for p in range(P)]


def _src(pos, i, axis):
    (r, p) = pos
    return (r, i) if axis == 1 else (i, p)


def take_along_axis(a, idx, axis) -> np.ndarray:
    a, idx = _f64(a), np.asarray(idx, dtype=np.int64)
    out = np.zeros(idx.shape)
    for pos, _ in _along(idx.shape, axis):
        out[pos] = a[_src(pos, int(idx[pos]), axis)]
    return out


def take_along_axis_vjp(a, g, idx, axis) -> np.ndarray:
    da = np.zeros(np.shape(a))
    g, idx = _f64(g), np.asarray(idx, dtype=np.int64)
    for pos, _ in _along(idx.shape, axis):
        da[_src(pos, int(idx[pos]), axis)] += g[pos]
    return da


def put_along_axis(a, idx, v, axis) -> np.ndarray:
    """Later writes win; the generators only repeat a position with equal values."""
    out, idx, v = _f64(a).copy(), np.asarray(idx, dtype=np.int64), _f64(v)
    for pos, _ in _along(idx.shape, axis):
        out[_src(pos, int(idx[pos]), axis)] = v[pos]
    return out


def put_along_axis_vjp(a, g, idx, axis) -> dict:
    """da = G with every written position zeroed; dv[pos] = G at its target.
    dv is only a derivative when no position is written twice."""
    g, idx = _f64(g), np.asarray(idx, dtype=np.int64)
    da, dv = g.copy(), np.zeros(idx.shape)
    for pos, _ in _along(idx.shape, axis):
        tgt = _src(pos, int(idx[pos]), axis)
        da[tgt] = 0.0
        dv[pos] = g[tgt]
    return {"a": da, "v": dv}


# --- .at[idx].add: rows of a (V, D) plus values v (idx.shape + (D,)) ------------

def at_add(a, idx, v) -> np.ndarray:
    out, D = _f64(a).copy(), np.shape(a)[-1]
    vr = _f64(v).reshape((-1, D))
    for q, i in enumerate(_ids(idx)):
        for c in range(D):
            out[i, c] += vr[q, c]
    return out


def at_add_vjp(a, g, idx, v) -> dict:
    """da = G; dv[q] = G[idx[q]] (each added value sees its row's cotangent)."""
    g = _f64(g)
    dv = np.zeros((len(_ids(idx)), g.shape[-1]))
    for q, i in enumerate(_ids(idx)):
        dv[q] = g[i]
    return {"a": g.copy(), "v": dv.reshape(np.shape(v))}


# --- OpInfo records -------------------------------------------------------------

def _axis(params):
    return int(params.get("axis", 0))


def _info(name, operands, differentiable, fwd, vjp):
    return register(OpInfo(name, operands, differentiable, fwd, vjp, f"harness.mlx_family:{name}",
                           has_sorted_flag=False))


_info("take", ("a",), ("a",), lambda inp, lhs, rhs, p: take(inp["a"], lhs, _axis(p)),
      lambda inp, g, lhs, rhs, p: {"a": take_vjp(inp["a"], g, lhs, _axis(p))})
_info("getitem", ("a",), ("a",), lambda inp, lhs, rhs, p: take(inp["a"], lhs, 0),
      lambda inp, g, lhs, rhs, p: {"a": take_vjp(inp["a"], g, lhs, 0)})
_info("embedding", ("weight",), ("weight",), lambda inp, lhs, rhs, p: take(inp["weight"], lhs, 0),
      lambda inp, g, lhs, rhs, p: {"weight": take_vjp(inp["weight"], g, lhs, 0)})
_info("take_along_axis", ("a",), ("a",),
      lambda inp, lhs, rhs, p: take_along_axis(inp["a"], lhs, _axis(p)),
      lambda inp, g, lhs, rhs, p: {"a": take_along_axis_vjp(inp["a"], g, lhs, _axis(p))})
_info("at_add", ("a", "v"), ("a", "v"), lambda inp, lhs, rhs, p: at_add(inp["a"], lhs, inp["v"]),
      lambda inp, g, lhs, rhs, p: at_add_vjp(inp["a"], g, lhs, inp["v"]))
_info("put_along_axis", ("a", "v"), ("a", "v"),
      lambda inp, lhs, rhs, p: put_along_axis(inp["a"], lhs, inp["v"], _axis(p)),
      lambda inp, g, lhs, rhs, p: put_along_axis_vjp(inp["a"], g, lhs, _axis(p)))

FAMILY_OPS = ("take", "getitem", "embedding", "take_along_axis", "at_add", "put_along_axis")


# --- catalog scenarios (controls: expected to pass) -------------------------------

def _t(values, shape) -> Tensor:
    return Tensor(tuple(float(v) for v in np.ravel(values)), tuple(shape), "float32")


def _idx(values) -> Tensor:
    arr = np.asarray(values, dtype=np.int64)
    return Tensor(tuple(int(v) for v in arr.ravel()), tuple(arr.shape), "uint32")


def _table(V, D, seed) -> Tensor:
    rng = np.random.RandomState(seed)
    return _t(rng.randint(-4, 5, size=(V, D)), (V, D))


def cancel_rows(g, keys) -> np.ndarray:
    """Every second occurrence of a key gets minus the previous one's row, so
    those contributions sum to exactly zero."""
    g, open_ = np.array(g, copy=True), {}
    for q, k in enumerate(keys):
        if k in open_:
            g[q] = -g[open_.pop(k)]
        else:
            open_[k] = q
    return g


def cancelling_cotangent(ids, width, seed) -> np.ndarray:
    """Rows for each occurrence, cancelling pairwise per id (see cancel_rows)."""
    rng = np.random.RandomState(seed)
    return cancel_rows(rng.randint(1, 5, size=(len(ids), width)).astype(np.float64), ids)


def fam(name, op, operands, idx, wrt=None, cot=None, params=None, fd=False, desc="") -> Scenario:
    return Scenario(name=f"family/{op}/{name}", op=op, operands=operands,
                    wrt=tuple(wrt or operands), lhs_indices=_idx(idx), cotangent=cot,
                    params=dict(params or {}), fd_step=1.0 / 16 if fd else None,
                    family="gather_family", description=desc)


def catalog_scenarios() -> list:
    ids = [1, 4, 1, 1, 4]   # 1 three times, 4 twice (cancels), rows 0, 2, 3, 5 unused
    cancel = _t(cancelling_cotangent(ids, 3, 40), (5, 3))
    batch = [[1, 5, 1], [5, 5, 0]]
    steps = [[0, 2, 2, 0], [2, 2, 4, 2], [4, 0, 0, 0]]
    return [
        fam("repeat_cancel_unused", "take", {"a": _table(6, 3, 41)}, ids, cot=cancel, fd=True,
            desc="repeats accumulate, a cancelled pair gives exactly 0, unused rows stay 0"),
        fam("axis1_repeat", "take", {"a": _table(3, 5, 42)}, [0, 0, 4], params={"axis": 1}, fd=True),
        fam("wide_steps", "take", {"a": _table(5, 80, 43)}, steps, params={"steps": 3},
            desc="width 80, three separate gathers whose gradients accumulate"),
        fam("repeat_width65", "getitem", {"a": _table(5, 65, 44)}, [2, 2, 0, 2]),
        fam("width1_cancel", "getitem", {"a": _table(6, 1, 45)}, ids[:4],
            cot=_t(cancelling_cotangent(ids[:4], 1, 46), (4, 1)), fd=True),
        fam("batch_repeat", "embedding", {"weight": _table(7, 4, 47)}, batch, fd=True,
            desc="nn.Embedding backward: a batch of id sequences, ids repeated across rows"),
        fam("wide_steps", "embedding", {"weight": _table(6, 72, 48)}, steps, params={"steps": 3}),
        fam("axis1_repeat", "take_along_axis", {"a": _table(3, 4, 49)}, [[0, 0, 3], [2, 2, 2], [1, 3, 1]],
            params={"axis": 1}, fd=True),
        fam("axis0_repeat", "take_along_axis", {"a": _table(4, 2, 50)}, [[3, 0], [3, 3]],
            params={"axis": 0}),
        fam("repeat_cancel", "at_add", {"a": _table(5, 3, 51),
                                        "v": _t([[1, 2, 3], [-1, -2, -3], [4, 0, 1], [2, 2, 2]], (4, 3))},
            [0, 0, 3, 0], fd=True, desc="two added rows cancel in the forward; dv = G[idx]"),
        fam("steps", "at_add", {"a": _table(4, 66, 52), "v": _t(np.random.RandomState(53).randint(
            -3, 4, size=(3, 4, 66)), (3, 4, 66))}, [[0, 2, 2, 0], [2, 2, 3, 2], [3, 0, 0, 0]],
            params={"steps": 3}, desc="three chained .at[].add updates"),
        fam("unique", "put_along_axis", {"a": _table(3, 4, 54), "v": _table(3, 2, 55)},
            [[0, 3], [2, 1], [1, 0]], params={"axis": 1}, fd=True),
        fam("repeat_wrt_a", "put_along_axis", {"a": _table(3, 4, 56), "v": _t([[5, 5], [7, 7], [1, 1]], (3, 2))},
            [[1, 1], [0, 0], [3, 3]], wrt=("a",), params={"axis": 1},
            desc="a position written twice with equal values: only dA is a derivative"),
    ]
