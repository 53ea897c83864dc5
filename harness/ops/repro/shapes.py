"""The shape ops (one function each): reshape, transpose, swapaxes, moveaxis,
broadcast_to, broadcast_arrays (stacked), expand_dims, squeeze, flatten,
unflatten, concatenate, stack, split (one piece, or the pieces re-joined in
reverse order), basic slicing (ints, [start, stop, step], None, "..."), and
contiguous."""
import mlx.core as mx


def reshape(operands, params):
    return mx.reshape(operands["a"], tuple(params["shape"]))


def transpose(operands, params):
    axes = params.get("axes")
    return mx.transpose(operands["a"]) if axes is None else mx.transpose(operands["a"], tuple(axes))


def swapaxes(operands, params):
    return mx.swapaxes(operands["a"], params["axis1"], params["axis2"])


def moveaxis(operands, params):
    return mx.moveaxis(operands["a"], params["source"], params["destination"])


def broadcast_to(operands, params):
    return mx.broadcast_to(operands["a"], tuple(params["shape"]))


def broadcast_arrays(operands, params):
    return mx.stack(mx.broadcast_arrays(operands["a"], operands["b"]))


def expand_dims(operands, params):
    return mx.expand_dims(operands["a"], params["axis"])


def squeeze(operands, params):
    axis = params.get("axis")
    return mx.squeeze(operands["a"]) if axis is None else mx.squeeze(operands["a"], axis=axis)


def flatten(operands, params):
    return mx.flatten(operands["a"], start_axis=params.get("start_axis", 0), end_axis=params.get("end_axis", -1))


def unflatten(operands, params):
    return mx.unflatten(operands["a"], params["axis"], tuple(params["shape"]))


def concatenate(operands, params):
    arrays = [operands[n] for n in ("a", "b", "c") if n in operands]
    return mx.concatenate(arrays, axis=params.get("axis", 0))


def stack(operands, params):
    return mx.stack([operands["a"], operands["b"]], axis=params.get("axis", 0))


def split(operands, params):
    pieces = mx.split(operands["a"], params["sections"], axis=params.get("axis", 0))
    pick = params.get("pick", "reversed")
    if pick == "reversed":
        return mx.concatenate(pieces[::-1], axis=params.get("axis", 0))
    return pieces[pick]


def _entry(spec):
    if spec is None:
        return None
    if spec == "...":
        return Ellipsis
    return spec if isinstance(spec, int) else slice(*spec)


def slicing(operands, params):
    return operands["a"][tuple(_entry(s) for s in params["index"])]


def contiguous(operands, params):
    return mx.contiguous(operands["a"], allow_col_major=params.get("allow_col_major", False))
