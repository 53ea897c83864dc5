"""mx.partition (MLX's Partition primitive). The order within each side of kth is
unspecified, so each lane is put in ascending order by a gather with the
stop-gradient argsort."""
import mlx.core as mx


def mlx_call(operands, params):
    axis = params.get("axis", -1)
    y = mx.partition(operands["a"], params["kth"], axis=axis)
    ax = 0 if axis is None else axis
    return mx.take_along_axis(y, mx.argsort(mx.stop_gradient(y), axis=ax), axis=ax)
