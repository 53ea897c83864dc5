"""mx.addmm(c, a, b, alpha, beta) (MLX's AddMM primitive): alpha * (a @ b) + beta * c, c broadcast."""
import mlx.core as mx


def mlx_call(operands, params):
    return mx.addmm(operands["c"], operands["a"], operands["b"], alpha=params.get("alpha", 1.0),
                    beta=params.get("beta", 1.0))
