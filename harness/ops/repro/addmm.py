"""mx.addmm(c, a, b, alpha, beta) (MLX's AddMM primitive): alpha * (a @ b) + beta * c, c broadcast."""
import mlx.core as mx


def mlx_call(operands, params):
    if "stale_stride" in params:
        leave_stride(int(params["stale_stride"]))
    return mx.addmm(operands["c"], operands["a"], operands["b"], alpha=params.get("alpha", 1.0),
                    beta=params.get("beta", 1.0))


def leave_stride(s):
    """Not part of the call: a general-path multiply whose second operand has strides
    (s, s), evaluated now, leaves s in the heap chunk the next general-path binary op
    takes for its stride scratch, which AddMM with K = 0 reads uninitialised (ops/addmm.py).
    The first operand's strides (1, 3) keep the general path and the two axes apart for
    every s (0 too); both views start 32 elements in, so every read is in their buffer."""
    mx.eval(mx.as_strided(mx.ones((64,)), (2, 2), (1, 3), 32) * mx.as_strided(mx.ones((64,)), (2, 2), (s, s), 32))
