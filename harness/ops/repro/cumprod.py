"""mx.cumprod (MLX's Scan primitive) along one axis (None: the flattened array), with its flags."""
import mlx.core as mx


def mlx_call(operands, params):
    return mx.cumprod(operands["a"], axis=params.get("axis", 0), reverse=params.get("reverse", False),
                      inclusive=params.get("inclusive", True))
