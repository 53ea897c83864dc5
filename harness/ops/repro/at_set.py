"""out = copy(a); out[key] = v: MLX's Scatter with no reduction (indexed assignment)."""
import mlx.core as mx
import numpy as np


def index(operands, name, dim, params):
    """int32 indices; params["negative"] passes i - dim, which MLX must wrap back to i."""
    i = mx.array(operands[name].astype(np.int32))
    return i - dim if params.get("negative") else i


def key(operands, params):
    """params["form"]: a[rows], a[:, cols], a[rows, cols], a[rows, start:stop:step], a[s0, s1]."""
    R, C = operands["a"].shape
    form = params["form"]
    if form == "slice":
        return tuple(s if isinstance(s, int) else slice(*s) for s in params["slices"])
    if form == "cols":
        return (slice(None), index(operands, "col_indices", C, params))
    rows = index(operands, "row_indices", R, params)
    if form == "rows":
        return rows
    if form == "rows_slice":
        return (rows, slice(*params["cols"]))
    return (rows, index(operands, "col_indices", C, params))


def updates(operands, params):
    """v itself, or (params["updates"] "shared") v's one value per distinct target
    taken once for every occurrence, so repeated writes write the same element."""
    v, form = operands["v"], params["form"]
    if params.get("updates") != "shared":
        return v
    ids = operands["col_indices" if form == "cols" else "row_indices"]
    keys = ids.ravel().tolist()
    if form == "points":
        keys = list(zip(keys, operands["col_indices"].ravel().tolist()))
    first = {}
    slots = mx.array(np.array([first.setdefault(k, len(first)) for k in keys], dtype=np.int32))
    if form == "cols":
        return mx.take(v, slots, axis=1).reshape((v.shape[0],) + ids.shape)
    if form == "points":
        return mx.take(v, slots, axis=0).reshape(ids.shape)
    return mx.take(v, slots, axis=0).reshape(ids.shape + (v.shape[-1],))


def mlx_call(operands, params):
    out = mx.array(operands["a"])    # a copy: assignment replaces the copy's graph node, never a's
    out[key(operands, params)] = updates(operands, params)
    return out
