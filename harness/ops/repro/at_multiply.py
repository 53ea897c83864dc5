"""a.at[key].multiply(v) / .divide(v): SliceUpdate Prod for slices, Scatter Prod for index arrays."""
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


def mlx_call(operands, params):
    at = operands["a"].at[key(operands, params)]
    return at.divide(operands["v"]) if params.get("divide") else at.multiply(operands["v"])
