"""mx.pad: constant (MLX's Pad primitive), edge, reflect and symmetric modes.

params["width_form"] picks the Python form of pad_width: "int" (w), "single"
((w,)), "pair" ((lo, hi) for every axis), "pairs" ([(lo, hi)] per axis);
params["value"] is a number, or "operand": constant_values is the 0-d operand c.
"""
import mlx.core as mx


def pad_width(params):
    w, form = params["width"], params.get("width_form", "pairs")
    if form == "single":
        return (w[0],)
    if form == "pair":
        return tuple(w)
    if form == "pairs":
        return [tuple(p) for p in w]
    return w


def mlx_call(operands, params):
    value = operands["c"] if params.get("value") == "operand" else params.get("value", 0)
    return mx.pad(operands["a"], pad_width(params), mode=params["mode"], constant_values=value)
