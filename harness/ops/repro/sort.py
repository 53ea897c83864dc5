"""mx.sort (MLX's Sort primitive) along one axis (None: the flattened array)."""
import mlx.core as mx


def mlx_call(operands, params):
    return mx.sort(operands["a"], axis=params.get("axis", -1))
