"""mx.hadamard_transform (MLX's Hadamard) along the last axis; scale None: 1 / sqrt(n)."""
import mlx.core as mx


def mlx_call(operands, params):
    return mx.hadamard_transform(operands["a"], scale=params.get("scale"))
