"""mx.conv_general (MLX's Convolution); a scalar param applies to every spatial axis."""
import mlx.core as mx


def per_axis(params, key, dims, default):
    v = params.get(key, default)
    return [v] * dims if isinstance(v, int) else list(v)


def mlx_call(operands, params):
    x, w = operands["x"], operands["w"]
    dims = x.ndim - 2
    stride, lo, hi, kdil, idil = (per_axis(params, key, dims, default) for key, default in (
        ("stride", 1), ("pad_lo", 0), ("pad_hi", 0), ("kernel_dilation", 1), ("input_dilation", 1)))
    return mx.conv_general(x, w, stride=stride, padding=(lo, hi), kernel_dilation=kdil,
                           input_dilation=idil, groups=params.get("groups", 1), flip=params.get("flip", False))
