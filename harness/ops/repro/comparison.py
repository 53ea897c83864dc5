"""The comparison, logical, bitwise and select ops' MLX calls (harness/ops/comparison.py).

A comparison runs in one of two forms (params["form"]): "select" differentiates
where(cond, a, -b), "own" the bool condition itself."""
import mlx.core as mx


def _form(cond, operands, params):
    if params.get("form") == "own":
        return cond
    return mx.where(cond, operands["a"], -operands["b"])


def equal_call(operands, params):
    return _form(mx.equal(operands["a"], operands["b"]), operands, params)


def not_equal_call(operands, params):
    return _form(mx.not_equal(operands["a"], operands["b"]), operands, params)


def greater_call(operands, params):
    return _form(mx.greater(operands["a"], operands["b"]), operands, params)


def greater_equal_call(operands, params):
    return _form(mx.greater_equal(operands["a"], operands["b"]), operands, params)


def less_call(operands, params):
    return _form(mx.less(operands["a"], operands["b"]), operands, params)


def less_equal_call(operands, params):
    return _form(mx.less_equal(operands["a"], operands["b"]), operands, params)


def _missing(x):
    return mx.where(x < 0, mx.nan, x)


def array_equal_call(operands, params):
    """The one call that sets the Equal primitive's equal_nan (then reduces with all), on the
    operands with negative entries marked missing (NaN)."""
    a, b = operands["a"], operands["b"]
    return _form(mx.array_equal(_missing(a), _missing(b), equal_nan=True), operands, params)


def logical_and_call(operands, params):
    return _form(mx.logical_and(operands["a"] > 0, operands["b"] > 0), operands, params)


def logical_or_call(operands, params):
    return _form(mx.logical_or(operands["a"] > 0, operands["b"] > 0), operands, params)


def logical_not_call(operands, params):
    return _form(mx.logical_not(operands["a"] > 0), operands, params)


BITWISE = {"and": mx.bitwise_and, "or": mx.bitwise_or, "xor": mx.bitwise_xor,
           "left_shift": mx.left_shift, "right_shift": mx.right_shift}


def bitwise_call(operands, params):
    """fn of the int32 casts, cast back to the operands' dtype."""
    a, b = operands["a"], operands["b"]
    return BITWISE[params["fn"]](a.astype(mx.int32), b.astype(mx.int32)).astype(a.dtype)


def where_call(operands, params):
    """The mask comes as an int64 numpy array; MLX takes it as bool."""
    return mx.where(mx.array(operands["mask"]).astype(mx.bool_), operands["a"], operands["b"])
