"""mx.cummax and mx.cummin (MLX's Scan primitive) with their flags; params["trim"] drops
an exclusive scan's first output in scan order (the identity, -inf or +inf) by a slice."""
import mlx.core as mx


def scan(fn, a, params):
    axis, reverse = params.get("axis", 0), params.get("reverse", False)
    inclusive = params.get("inclusive", True)
    y = fn(a, axis=axis, reverse=reverse, inclusive=inclusive)
    if not params.get("trim", False) or inclusive:
        return y
    ax = 0 if axis is None else axis % y.ndim
    index = [slice(None)] * y.ndim
    index[ax] = slice(0, y.shape[ax] - 1) if reverse else slice(1, y.shape[ax])
    return y[tuple(index)]


def cummax(operands, params):
    return scan(mx.cummax, operands["a"], params)


def cummin(operands, params):
    return scan(mx.cummin, operands["a"], params)
