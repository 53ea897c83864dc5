"""The reductions (one function each): mx.sum, mx.prod, mx.max, mx.min (MLX's Reduce
primitive), and mx.mean, mx.var, mx.std built on it; params axis (None, an int or a
list), keepdims, and ddof for var and std. sum_, max_ and min_ keep the builtins."""
import mlx.core as mx


def _reduce(fn, operands, params, **extra):
    return fn(operands["a"], axis=params.get("axis"), keepdims=params.get("keepdims", False), **extra)


def sum_(operands, params):
    return _reduce(mx.sum, operands, params)


def prod(operands, params):
    return _reduce(mx.prod, operands, params)


def max_(operands, params):
    return _reduce(mx.max, operands, params)


def min_(operands, params):
    return _reduce(mx.min, operands, params)


def mean(operands, params):
    return _reduce(mx.mean, operands, params)


def var(operands, params):
    return _reduce(mx.var, operands, params, ddof=params.get("ddof", 0))


def std(operands, params):
    return _reduce(mx.std, operands, params, ddof=params.get("ddof", 0))
