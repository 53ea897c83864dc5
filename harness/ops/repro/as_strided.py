"""mx.as_strided(a, shape, strides, offset): MLX's AsStrided (strides None: row-major for shape)."""
import mlx.core as mx


def mlx_call(operands, params):
    strides = params.get("strides")
    return mx.as_strided(operands["a"], list(params["shape"]), None if strides is None else list(strides),
                         int(params.get("offset", 0)))
