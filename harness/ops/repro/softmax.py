"""mx.softmax over one axis, several or all; precise accumulates half precision in float32."""
import mlx.core as mx


def mlx_call(operands, params):
    return mx.softmax(operands["a"], axis=params.get("axis"), precise=params.get("precise", False))
