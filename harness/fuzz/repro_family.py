"""Reproducer source for the gather family: float64 scatter-add loops written
again from the maths, and the MLX calls (see repro_ops for the contract)."""
from __future__ import annotations

TABLE = r'''
INTEGER_OPERANDS = ()


def take64(a, idx, axis):
    am = np.moveaxis(a, axis, 0)
    out = np.array([am[i] for i in idx.ravel().tolist()]).reshape(idx.shape + am.shape[1:])
    return np.moveaxis(out, list(range(idx.ndim)), list(range(axis, axis + idx.ndim)))


def take64_vjp(a, g, idx, axis):
    """Each occurrence adds its own cotangent row; unselected rows stay 0."""
    am = np.moveaxis(a, axis, 0)
    gm = np.moveaxis(g, list(range(axis, axis + idx.ndim)), list(range(idx.ndim)))
    gm = gm.reshape((idx.size, -1))
    da = np.zeros((am.shape[0], gm.shape[1]))
    for q, i in enumerate(idx.ravel().tolist()):
        for c in range(gm.shape[1]):
            da[i, c] = da[i, c] + gm[q, c]
    return np.moveaxis(da.reshape(am.shape), 0, axis)


def stacked(mx, fn, idx, params):
    steps = int(params.get("steps", 1))
    return mx.stack([fn(idx[s]) for s in range(steps)]) if steps > 1 else fn(idx)
'''


def _table(op, operand, axis_expr, call):
    return TABLE + f'''

def ref_forward(inp, lhs, rhs, params):
    return take64(inp["{operand}"], lhs, {axis_expr})


def ref_vjp(inp, g, lhs, rhs, params):
    return {{"{operand}": take64_vjp(inp["{operand}"], g, lhs, {axis_expr})}}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
{call}
'''


ALONG = r'''
INTEGER_OPERANDS = ()


def target(r, p, i, axis):
    return (r, i) if axis == 1 else (i, p)
'''

SNIPPETS = {
    "take": _table("take", "a", 'int(params.get("axis", 0))',
                   '    return stacked(mx, lambda i: mx.take(ops["a"], i, axis=int(params.get("axis", 0))), lhs, params)'),
    "getitem": _table("getitem", "a", "0", '    return stacked(mx, lambda i: ops["a"][i], lhs, params)'),
    "embedding": _table("embedding", "weight", "0", '''    import mlx.nn as nn
    emb = nn.Embedding(*ops["weight"].shape)
    emb.weight = ops["weight"]
    return stacked(mx, emb, lhs, params)'''),
    "take_along_axis": ALONG + r'''

def ref_forward(inp, lhs, rhs, params):
    a, axis = inp["a"], int(params["axis"])
    out = np.zeros(lhs.shape)
    for r in range(lhs.shape[0]):
        for p in range(lhs.shape[1]):
            out[r, p] = a[target(r, p, int(lhs[r, p]), axis)]
    return out


def ref_vjp(inp, g, lhs, rhs, params):
    axis, da = int(params["axis"]), np.zeros(inp["a"].shape)
    for r in range(lhs.shape[0]):
        for p in range(lhs.shape[1]):
            t = target(r, p, int(lhs[r, p]), axis)
            da[t] = da[t] + g[r, p]
    return {"a": da}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    return mx.take_along_axis(ops["a"], lhs, axis=int(params["axis"]))
''',
    "put_along_axis": ALONG + r'''

def ref_forward(inp, lhs, rhs, params):
    out, axis = inp["a"].copy(), int(params["axis"])
    for r in range(lhs.shape[0]):
        for p in range(lhs.shape[1]):
            out[target(r, p, int(lhs[r, p]), axis)] = inp["v"][r, p]
    return out


def ref_vjp(inp, g, lhs, rhs, params):
    """Overwritten positions pass no gradient to a; each value gets its target's."""
    axis, da, dv = int(params["axis"]), g.copy(), np.zeros(lhs.shape)
    for r in range(lhs.shape[0]):
        for p in range(lhs.shape[1]):
            t = target(r, p, int(lhs[r, p]), axis)
            da[t] = 0.0
            dv[r, p] = g[t]
    return {"a": da, "v": dv}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    return mx.put_along_axis(ops["a"], lhs, ops["v"], axis=int(params["axis"]))
''',
    "at_add": r'''
INTEGER_OPERANDS = ()


def ref_forward(inp, lhs, rhs, params):
    out, D = inp["a"].copy(), inp["a"].shape[1]
    v = inp["v"].reshape((-1, D))
    for q, i in enumerate(lhs.ravel().tolist()):
        for c in range(D):
            out[i, c] = out[i, c] + v[q, c]
    return out


def ref_vjp(inp, g, lhs, rhs, params):
    dv = np.array([g[i] for i in lhs.ravel().tolist()]).reshape(inp["v"].shape)
    return {"a": g.copy(), "v": dv}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    steps = int(params.get("steps", 1))
    if steps == 1:
        return ops["a"].at[lhs].add(ops["v"])
    out = ops["a"]
    for s in range(steps):
        out = out.at[lhs[s]].add(ops["v"][s])
    return out
''',
}
