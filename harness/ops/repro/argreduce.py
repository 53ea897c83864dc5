"""mx.argmax and mx.argmin (MLX's ArgReduce primitive), one function each; params axis,
keepdims, and form: "indices" (the uint32 output itself) or "weighted" (a * the indices,
kept dims, so the gradient reaches a through the product)."""
import mlx.core as mx


def _call(fn, operands, params):
    a, axis = operands["a"], params.get("axis")
    if params.get("form", "indices") == "weighted":
        return a * fn(a, axis=axis, keepdims=True)
    return fn(a, axis=axis, keepdims=params.get("keepdims", False))


def argmax(operands, params):
    return _call(mx.argmax, operands, params)


def argmin(operands, params):
    return _call(mx.argmin, operands, params)
