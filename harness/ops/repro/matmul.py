"""mx.matmul (MLX's Matmul primitive): batch axes broadcast, 1-D operands as a row or a column."""
import mlx.core as mx


def mlx_call(operands, params):
    return mx.matmul(operands["a"], operands["b"])
