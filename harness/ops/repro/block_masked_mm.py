"""mx.block_masked_mm with 0/1 tile masks; params["masks"] names the masks passed."""
import mlx.core as mx


def mlx_call(operands, params):
    masks = {n: (mx.array(operands[n] != 0) if n in params["masks"] else None)
             for n in ("mask_out", "mask_lhs", "mask_rhs")}
    return mx.block_masked_mm(operands["a"], operands["b"], block_size=params["block_size"], **masks)
