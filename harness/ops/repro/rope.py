"""mx.fast.rope (MLX's RoPE); the offset passed as params["offset_form"] says: "int", 0-d "array", "vector"."""
import mlx.core as mx
import numpy as np


def mlx_call(operands, params):
    offset = operands["offset"]
    offset = int(offset) if params["offset_form"] == "int" else mx.array(offset.astype(np.int32))
    return mx.fast.rope(operands["x"], params["dims"], traditional=params["traditional"], base=params["base"],
                        scale=params["scale"], offset=offset, freqs=operands.get("freqs"))
