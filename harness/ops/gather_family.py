"""The gather family beyond gather_mm: take, a[idx], nn.Embedding, take_along_axis,
.at[idx].add and put_along_axis, in one module because they share one reverse
rule. Float64 references (numpy storage, scalar accumulation loops, never mlx),
catalog scenarios (controls: expected to pass) and fuzz strategies; the MLX
calls, one function per op, are ops/repro/gather_family.py.

Every op takes its index array as the integer operand `indices`. The reverse rule
everywhere is scatter-add: each occurrence of an index adds its own cotangent
to that row, rows nothing selects stay exactly zero (never "assign", which
keeps only the last occurrence). `steps` > 1 splits the index array's leading
axis into separate calls whose gradients MLX must accumulate.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as H
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, index_tensor, tensor
from ._support import expression as E
from ._support.complex_parts import complex_op

INDEX = "indices"   # every op's index array: an integer operand


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


# --- catalog scenarios (controls: expected to pass) -------------------------------

def _t(values, shape):
    return tensor(values, shape)


def _idx(values):
    return index_tensor(values)


def _table(V, D_, seed):
    return tensor(np.random.RandomState(seed).randint(-4, 5, size=(V, D_)))


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
    return Scenario(name=f"family/{op}/{name}", op=op, operands={**operands, INDEX: _idx(idx)},
                    wrt=tuple(wrt or operands), cotangent=cot,
                    params=dict(params or {}), fd_step=1.0 / 16 if fd else None,
                    family="gather_family", description=desc)


def scenarios() -> list:
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


# --- fuzz strategies: repeated, omitted and identity indices, cancelling cotangents,
# unused rows, widths from 1 to above 64, several accumulation steps -----------------------

WIDTHS = (1, 2, 3, 5, 8, 17, 64, 65, 80)
COTANGENTS = ("ones", "random", "cancel", "zero", "negative")


def occurrence_cotangent(draw, rows_shape, keys, dtype):
    """Cotangent with one row per index occurrence (rows_shape = (n, width))."""
    mode = draw(H.choice(COTANGENTS))
    if mode == "ones":
        return None, mode
    if mode == "zero":
        return np.zeros(rows_shape), mode
    g = hashed_ints(rows_shape, draw(H.irange(1, 2**16)))
    if mode == "negative":
        g = -np.abs(g) - 1
    if mode == "cancel":
        g = cancel_rows(np.abs(g) + 1, keys)
    return g, mode


def _scenario(op, operands, idx, wrt, cot, params, desc):
    return H.finish(Scenario(name="", op=op, operands={**operands, INDEX: index_tensor(idx)}, wrt=tuple(wrt),
                             cotangent=cot, params=params,
                             family="gather_family", description=f"generated: {desc}"))


def _cot_tensor(g, shape, dtype):
    return None if g is None else tensor(np.asarray(g).reshape(shape), dtype=dtype)


def table_case(draw, op, dtypes):
    """take / a[idx] / Embedding: rows (axis 0) or columns (take, axis 1) of a table."""
    dtype = draw(H.choice(dtypes))
    V, D = draw(H.irange(1, 6)), draw(H.choice(WIDTHS))
    axis = draw(H.choice((0, 1))) if op == "take" else 0
    steps = draw(H.choice((1, 2, 3))) if axis == 0 else 1
    shape = tuple(draw(H.irange(1, 5)) for _ in range(draw(H.irange(1, 2))))
    full = ((steps,) if steps > 1 else ()) + shape
    idx = H.index_values(draw, full, V if axis == 0 else D, False)
    name = "weight" if op == "embedding" else "a"
    a = H.layout(draw, (), (V, D), draw(H.irange(0, 2**16)), dtype)
    n = int(idx.size)
    if axis == 0:
        g, mode = occurrence_cotangent(draw, (n, D), idx.ravel().tolist(), dtype)
        cot = _cot_tensor(g, idx.shape + (D,), dtype)
    else:   # output (V,) + idx.shape: occurrence q owns the column out[:, q]
        g, mode = occurrence_cotangent(draw, (n, V), idx.ravel().tolist(), dtype)
        cot = None if g is None else tensor(np.moveaxis(g.reshape(idx.shape + (V,)), -1, 0), dtype=dtype)
    params = {"axis": axis} if op == "take" else {}
    if steps > 1:
        params["steps"] = steps
    return _scenario(op, {name: a}, idx, (name,), cot, params,
                     f"V={V} D={D} axis {axis} steps {steps}, cotangent {mode}")


def take_along_axis_case(draw, dtypes):
    dtype = draw(H.choice(dtypes))
    R, C, P = draw(H.irange(1, 5)), draw(H.choice(WIDTHS[:6])), draw(H.irange(1, 5))
    axis = draw(H.choice((1, 0)))
    shape, bound = ((R, P), C) if axis == 1 else ((P, C), R)
    idx = H.index_values(draw, shape, bound, False)
    a = H.layout(draw, (), (R, C), draw(H.irange(0, 2**16)), dtype)
    keys = [(r, int(idx[r, p])) if axis == 1 else (int(idx[r, p]), p)
            for r in range(shape[0]) for p in range(shape[1])]
    g, mode = occurrence_cotangent(draw, (len(keys), 1), keys, dtype)
    return _scenario("take_along_axis", {"a": a}, idx, ("a",), _cot_tensor(g, shape, dtype),
                     {"axis": axis}, f"R={R} C={C} axis {axis}, cotangent {mode}")


def at_add_case(draw, dtypes):
    """a.at[idx].add(v); values of repeated indices may cancel in the forward."""
    dtype = draw(H.choice(dtypes))
    V, D, P = draw(H.irange(1, 6)), draw(H.choice(WIDTHS)), draw(H.irange(1, 5))
    steps = draw(H.choice((1, 2, 3)))
    shape = ((steps,) if steps > 1 else ()) + (P,)
    idx = H.index_values(draw, shape, V, False)
    keys = idx.ravel().tolist()
    seed = draw(H.irange(0, 2**16))
    v = hashed_ints((len(keys), D), seed + 5)
    if draw(H.choice((False, True))):
        v = cancel_rows(v, keys)
    a = H.layout(draw, (), (V, D), seed, dtype)
    g, mode = occurrence_cotangent(draw, (V, D), list(range(V)), dtype)
    params = {"steps": steps} if steps > 1 else {}
    wrt = draw(H.choice(tuple(H.nonempty_subsets(("a", "v")))))
    return _scenario("at_add", {"a": a, "v": tensor(v.reshape(shape + (D,)), dtype=dtype)}, idx, wrt,
                     _cot_tensor(g, (V, D), dtype), params, f"V={V} D={D} steps {steps}, cotangent {mode}")


def put_along_axis_case(draw, dtypes):
    """Unique targets per row/column (then dv is a derivative), or one target
    written repeatedly with equal values (then only da is)."""
    dtype = draw(H.choice(dtypes))
    R, C = draw(H.irange(1, 5)), draw(H.irange(1, 5))
    axis = draw(H.choice((1, 0)))
    lines, bound = (R, C) if axis == 1 else (C, R)
    P = draw(H.irange(1, bound))
    repeat = draw(H.choice((False, True)))
    offs = [draw(H.irange(0, bound - 1)) for _ in range(lines)]
    rows = [[o] * P if repeat else [(o + p) % bound for p in range(P)] for o in offs]
    idx = np.array(rows, dtype=np.int64) if axis == 1 else np.array(rows, dtype=np.int64).T
    seed = draw(H.irange(0, 2**16))
    vals = hashed_ints((lines, 1 if repeat else P), seed + 7) * np.ones((lines, P))
    v = vals if axis == 1 else vals.T
    a = H.layout(draw, (), (R, C), seed, dtype)
    g, mode = occurrence_cotangent(draw, (R, C), list(range(R)), dtype)
    wrt = ("a",) if repeat else draw(H.choice(tuple(H.nonempty_subsets(("a", "v")))))
    return _scenario("put_along_axis", {"a": a, "v": tensor(v, dtype=dtype)}, idx, wrt,
                     _cot_tensor(g, (R, C), dtype), {"axis": axis},
                     f"R={R} C={C} axis {axis} {'repeated' if repeat else 'unique'}, cotangent {mode}")



# --- the records ---------------------------------------------------------------------------

def _axis(params):
    return int(params.get("axis", 0))


def _table_case(op):
    return lambda draw, dtypes=("float32",): table_case(draw, op, dtypes)


def call_expression_of(op):
    """The family member's one MLX call, the index array as uint32; with `steps` S > 1, the S calls
    along its leading axis (stacked; chained for at_add)."""
    def call_expression(params, names) -> str:
        idx, steps = E.index(names[INDEX], "uint32"), int(params.get("steps", 1))
        a, axis = names.get("a"), E.lit(_axis(params))
        one = {"take": lambda i: E.call("mx.take", a, i, axis=axis), "getitem": lambda i: f"{a}[{i}]",
               "embedding": lambda i: f"{names.get('weight')}[{i}]"}   # nn.Embedding's __call__: weight[x]
        if op in one:
            return one[op](idx) if steps == 1 else f"mx.stack([{one[op](idx + '[s]')} for s in range({steps})])"
        if op == "take_along_axis":
            return E.call("mx.take_along_axis", a, idx, axis=axis)
        if op == "put_along_axis":
            return E.call("mx.put_along_axis", a, idx, names["v"], axis=axis)
        if steps == 1:
            return f"{a}.at[{idx}].add({names['v']})"
        return a + "".join(f".at[{idx}[{s}]].add({names['v']}[{s}])" for s in range(steps))
    return call_expression


# The MLX primitives each call creates on the way from its differentiated operands (steps > 1 adds
# mx.stack's ExpandDims and Concatenate, or at_add's slices of v).
PRIMITIVES = {
    "take": ("Gather", "Squeeze", "Transpose", "Concatenate", "ExpandDims"),
    "getitem": ("Gather", "Squeeze", "Concatenate", "ExpandDims"),
    "embedding": ("Gather", "Squeeze", "Concatenate", "ExpandDims"),
    "take_along_axis": ("GatherAxis",),
    "at_add": ("Scatter", "Gather", "Squeeze", "Reshape", "Broadcast"),
    "put_along_axis": ("ScatterAxis",),
}


def _record(name, summary, diff, reference, reference_vjp, strategy, rule):
    return complex_op(OpInfo(name=name, summary=summary, operands=diff + (INDEX,), differentiable=diff,
                  integer_operands=(INDEX,), reference=reference, reference_vjp=reference_vjp,
                  exact=True, multilinear=True, rule=rule, mlx_call=f".ops.repro.gather_family:{name}",
                  call_expression=call_expression_of(name),
                  primitives=PRIMITIVES[name], dtypes=("float32", "float16", "bfloat16"), complex=False,
                  scenarios=lambda: _scenarios_of(name), strategy=strategy))


def _scenarios_of(op) -> list:
    return [s for s in scenarios() if s.op == op]


TAKE_RULE = ("Y = {a} gathered at idx along the axis; d{a}: each occurrence q of index i adds its "
             "cotangent slice G[q] to slice i (scatter-add); slices never selected stay 0")

OPS = (
    _record("take", "mx.take along an axis", ("a",),
            lambda inp, p: take(inp["a"], inp[INDEX], _axis(p)),
            lambda inp, g, p: {"a": take_vjp(inp["a"], g, inp[INDEX], _axis(p))}, _table_case("take"),
            TAKE_RULE.format(a="a")),
    _record("getitem", "a[idx] on the first axis", ("a",),
            lambda inp, p: take(inp["a"], inp[INDEX], 0),
            lambda inp, g, p: {"a": take_vjp(inp["a"], g, inp[INDEX], 0)}, _table_case("getitem"),
            TAKE_RULE.format(a="a")),
    _record("embedding", "mlx.nn.Embedding lookup", ("weight",),
            lambda inp, p: take(inp["weight"], inp[INDEX], 0),
            lambda inp, g, p: {"weight": take_vjp(inp["weight"], g, inp[INDEX], 0)},
            _table_case("embedding"), TAKE_RULE.format(a="weight")),
    _record("take_along_axis", "mx.take_along_axis on 2-D arrays", ("a",),
            lambda inp, p: take_along_axis(inp["a"], inp[INDEX], _axis(p)),
            lambda inp, g, p: {"a": take_along_axis_vjp(inp["a"], g, inp[INDEX], _axis(p))},
            take_along_axis_case,
            "Y[r, p] = a[r, idx[r, p]] (axis 1) or a[idx[r, p], p] (axis 0); "
            "da: each G[r, p] is added at its source position (scatter-add)"),
    _record("at_add", "a.at[idx].add(v) on rows", ("a", "v"),
            lambda inp, p: at_add(inp["a"], inp[INDEX], inp["v"]),
            lambda inp, g, p: at_add_vjp(inp["a"], g, inp[INDEX], inp["v"]), at_add_case,
            "Y = a with each row v[q] added to row idx[q]; da = G; dv[q] = G[idx[q]]"),
    _record("put_along_axis", "mx.put_along_axis on 2-D arrays", ("a", "v"),
            lambda inp, p: put_along_axis(inp["a"], inp[INDEX], inp["v"], _axis(p)),
            lambda inp, g, p: put_along_axis_vjp(inp["a"], g, inp[INDEX], _axis(p)),
            put_along_axis_case,
            "Y = a with v[r, p] written at its target along the axis; da = G with every written "
            "position zeroed; dv[r, p] = G at its target"),
)
