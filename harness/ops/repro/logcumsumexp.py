"""mx.logcumsumexp (MLX's Scan primitive, reduce type LogAddExp) with its axis (None:
the flattened array), reverse and inclusive flags."""
import mlx.core as mx


def mlx_call(operands, params):
    return mx.logcumsumexp(operands["a"], axis=params.get("axis"), reverse=params.get("reverse", False),
                           inclusive=params.get("inclusive", True))
