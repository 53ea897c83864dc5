"""out = copy(a); out[mask] = v: MLX's MaskedScatter (the mask arrives as 0/1 integers)."""
import mlx.core as mx


def mlx_call(operands, params):
    out = mx.array(operands["a"])    # a copy: assignment replaces the copy's graph node, never a's
    out[mx.array(operands["mask"] != 0)] = operands["v"]
    return out
