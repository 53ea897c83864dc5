"""Writing and reading a region: mx.slice_update, a[key] = u, a.at[key].add(u), mx.slice."""
import mlx.core as mx


def start_array(operands, params):
    """The start indices as params["start_dtype"] (uint32 by default); params["scalar_start"]: 0-d."""
    start = operands["start"].astype(params.get("start_dtype", "uint32"))
    return mx.array(start.reshape(()) if params.get("scalar_start") else start)


def slice_update(operands, params):
    """params["form"]: "dynamic" (mx.slice_update at array starts), "static" (a[key] = u),
    "static_add" (a.at[key].add(u)); key per axis an int or [start, stop, step]."""
    a, u, form = operands["a"], operands["u"], params["form"]
    if form == "dynamic":
        return mx.slice_update(a, u, start_array(operands, params), list(params["axes"]))
    key = tuple(s if isinstance(s, int) else slice(*s) for s in params["slices"])
    if form == "static_add":
        return a.at[key].add(u)
    out = mx.array(a)    # a copy: assignment replaces the copy's graph node, never a's
    out[key] = u
    return out


def dynamic_slice(operands, params):
    return mx.slice(operands["a"], start_array(operands, params), list(params["axes"]), list(params["size"]))
