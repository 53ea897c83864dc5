"""mx.fast.scaled_dot_product_attention; params["mask"]: "none", "causal", "additive", "bool" (0/1 floats)."""
import mlx.core as mx


def mask_arg(kind, mask):
    if kind == "none":
        return None
    if kind == "causal":
        return "causal"
    return mask != 0 if kind == "bool" else mask


def mlx_call(operands, params):
    mask = mask_arg(params["mask"], operands.get("mask"))
    return mx.fast.scaled_dot_product_attention(operands["q"], operands["k"], operands["v"],
                                                scale=params["scale"], mask=mask)
