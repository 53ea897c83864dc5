"""mx.cumsum (MLX's Scan primitive) along one axis, with its reverse and inclusive flags."""
import mlx.core as mx


def mlx_call(operands, params):
    return mx.cumsum(operands["a"], axis=params.get("axis", 0), reverse=params.get("reverse", False),
                     inclusive=params.get("inclusive", True))
