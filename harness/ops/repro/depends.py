"""mx.depends (MLX's Depends primitive): params form "single" returns depends([a], [b])[0];
"pair" returns o[0] + 2 * o[1] for o = depends([a, b], [c])."""
import mlx.core as mx


def mlx_call(operands, params):
    if params.get("form", "single") == "single":
        return mx.depends([operands["a"]], [operands["b"]])[0]
    out = mx.depends([operands["a"], operands["b"]], [operands["c"]])
    return out[0] + 2 * out[1]
