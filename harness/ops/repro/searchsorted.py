"""mx.searchsorted(s, v, side) (MLX's SearchSorted primitive); params side and form:
"indices" (the uint32 output) or "weighted" (v * the indices)."""
import mlx.core as mx


def mlx_call(operands, params):
    idx = mx.searchsorted(operands["s"], operands["v"], side=params.get("side", "left"))
    return idx if params.get("form", "indices") == "indices" else operands["v"] * idx
