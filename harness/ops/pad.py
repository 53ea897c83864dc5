"""pad: mx.pad(a, pad_width, mode, constant_values).

mode "constant" is MLX's Pad primitive (VJP: slice the cotangent); "edge",
"reflect" and "symmetric" are built in mlx/ops.cpp from slice, flip and
slice_update, whose VJPs compose (reflect/symmetric widths beyond the axis length
take MLX's repeated-reflection loop). params["width_form"] picks the Python form of
pad_width: "int" (w), "single" ((w,)), "pair" ((lo, hi) for every axis), "pairs"
([(lo, hi)] per axis, asymmetric). Negative widths are not allowed by MLX (it
raises in the forward), so there is nothing to differentiate there.

The constant comes from params["value"]: a number (passed as a Python scalar; the
operand `c` then plays no part, and its derivative is exactly 0), or "operand":
constant_values = c, a 0-d array, which mx.pad accepts and so differentiates.

What is claimed (out is affine in a and in c, each output element one input
element or the constant): d a[i] = sum of g over every output position that copies
a[i] (edge, reflect and symmetric copy some elements many times); d c = sum of g
over the constant-padded positions (constant mode, "operand"); 0 otherwise.

MLX's Pad::vjp asserts (in debug builds only) that it is asked for the gradient of
`a` alone. Asked for c's, it returns the sliced cotangent, shaped like a, as c's
gradient; asked for both, it returns one gradient for two inputs and the process
dies (SIGSEGV on 0.32.4). The catalog's tagged `constant_value_grad` scenario
differentiates with respect to c alone (a crash there would take the test process
down with it); the crash is in the reproducer and the report.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, tensor
from ._support import expression as E
from ._support.complex_parts import complex_op

MODES = ("constant", "edge", "reflect", "symmetric")
WIDTH_FORMS = ("int", "single", "pair", "pairs")

# --- float64 reference ---------------------------------------------------------------------------


def widths(params, ndim) -> list:
    """(low, high) per axis from any of the Python forms of pad_width."""
    w, form = params["width"], params.get("width_form", "pairs")
    if form in ("int", "single"):
        w = w if form == "int" else w[0]
        return [(w, w)] * ndim
    if form == "pair":
        return [tuple(w)] * ndim
    return [tuple(p) for p in w]


def source(j: int, n: int, mode: str):
    """Index into an axis of length n that padded position j (j = o - low) copies;
    None for a constant."""
    if 0 <= j < n:
        return j
    if mode == "constant":
        return None
    if mode == "edge":
        return min(max(j, 0), n - 1)
    if mode == "reflect":   # mirror about the end elements, not repeating them: period 2(n - 1)
        if n == 1:
            return 0
        k = j % (2 * n - 2)
        return k if k < n else 2 * n - 2 - k
    k = j % (2 * n)         # symmetric: mirror repeating the end elements, period 2n
    return k if k < n else 2 * n - 1 - k


def copies(a_shape, params) -> tuple:
    """(output shape, [(output position, input position or None)])."""
    pads = widths(params, len(a_shape))
    axes = [[source(o - lo, n, params["mode"]) for o in range(n + lo + hi)]
            for n, (lo, hi) in zip(a_shape, pads)]
    out_shape = tuple(len(m) for m in axes)
    pairs = []
    for pos in np.ndindex(*out_shape):
        src = tuple(m[p] for m, p in zip(axes, pos))
        pairs.append((pos, None if any(s is None for s in src) else src))
    return out_shape, pairs


def _value(inp, params) -> float:
    return float(np.asarray(inp["c"])) if params.get("value") == "operand" else float(params.get("value", 0))


def reference(inp, params):
    a = np.asarray(inp["a"], dtype=np.float64)
    out_shape, pairs = copies(a.shape, params)
    out = np.zeros(out_shape)
    for pos, src in pairs:
        out[pos] = _value(inp, params) if src is None else a[src]
    return out


def reference_vjp(inp, g, params):
    a, g = np.asarray(inp["a"], dtype=np.float64), np.asarray(g, dtype=np.float64)
    _, pairs = copies(a.shape, params)
    da, dc = np.zeros(a.shape), 0.0
    for pos, src in pairs:
        if src is None:
            dc += g[pos]
        else:
            da[src] += g[pos]
    used = params.get("value") == "operand" and params["mode"] == "constant"
    return {"a": da, "c": np.array(dc if used else 0.0)}


# --- catalog ------------------------------------------------------------------------------------------

def _case(name, a_shape, mode, width, form="pairs", value=0, wrt=("a", "c"), seed=0, a=None, tags=(),
          desc=""):
    params = {"mode": mode, "width": width, "width_form": form, "value": value}
    a = a or tensor(np.random.RandomState(200 + seed).randint(-4, 5, size=a_shape))
    out_shape, _ = copies(a_shape, params)
    cot = tensor(np.random.RandomState(210 + seed).randint(-4, 5, size=out_shape))
    return Scenario(name=f"pad/{name}", op="pad", operands={"a": a, "c": tensor(np.array(3.0))},
                    wrt=tuple(wrt), params=params, cotangent=cot, fd_step=1.0 / 16, family="pad",
                    defect_tags=tuple(tags), description=desc)


def scenarios() -> list:
    transposed = tensor(np.random.RandomState(220).randint(-4, 5, size=(4, 3)),
                        views=[{"op": "transpose", "axes": [1, 0]}])
    return [
        _case("constant/asymmetric", (2, 3), "constant", [[1, 0], [0, 2]], value=-2,
              desc="constant -2 as a Python scalar: d c is 0, c plays no part"),
        _case("constant/int_width", (2, 3), "constant", 1, "int", seed=1),
        _case("constant/zero_width", (2, 3), "constant", [[0, 0], [0, 0]], seed=2),
        _case("edge/asymmetric", (2, 3), "edge", [[2, 1], [1, 3]], seed=3,
              desc="corner elements copied into many positions"),
        _case("edge/pair", (3, 2), "edge", [0, 2], "pair", seed=4),
        _case("reflect/asymmetric", (3, 4), "reflect", [[2, 1], [3, 0]], seed=5),
        _case("reflect/wider_than_axis", (2, 3), "reflect", [[3, 2], [5, 4]], seed=6,
              desc="widths beyond the axis length: MLX reflects repeatedly"),
        _case("reflect/length1_axis", (1, 3), "reflect", [[2, 1], [1, 1]], seed=7),
        _case("symmetric/asymmetric", (2, 3), "symmetric", [[1, 2], [2, 0]], seed=8),
        _case("symmetric/wider_than_axis", (2, 2), "symmetric", [5], "single", seed=9),
        _case("edge/rank3", (2, 2, 3), "edge", [[1, 0], [0, 1], [2, 1]], seed=10),
        _case("reflect/transposed", (3, 4), "reflect", [[1, 1], [2, 0]], a=transposed, seed=11,
              desc="a stored transposed"),
        _case("edge/value_operand_unused", (2, 3), "edge", [[1, 1], [1, 1]], value="operand", seed=12,
              wrt=("c",), desc="c passed to an edge pad, which ignores it: d c = 0"),
        _case("constant/value_operand", (2, 3), "constant", [[1, 0], [0, 2]], value="operand",
              wrt=("c",), seed=13, tags=("constant_value_grad",),
              desc="constant_values=c: d c = sum of g over the 9 padded positions; MLX returns "
                   "g's unpadded (2, 3) block as c's gradient"),
    ]


# --- fuzz strategy --------------------------------------------------------------------------------------

def _draw_width(draw, ndim, mode):
    form = draw(D.choice(WIDTH_FORMS))
    top = 6 if mode in ("reflect", "symmetric") else 3
    w = lambda: draw(D.irange(0, top))   # noqa: E731
    if form == "int":
        return w(), form
    if form == "single":
        return [w()], form
    if form == "pair":
        return [w(), w()], form
    return [[w(), w()] for _ in range(ndim)], form


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape = tuple(draw(D.irange(1, 4)) for _ in range(draw(D.irange(1, 3))))
    mode = draw(D.choice(MODES))
    width, form = _draw_width(draw, len(shape), mode)
    value = draw(D.choice((0, "operand", -3, 2)))
    params = {"mode": mode, "width": width, "width_form": form, "value": value}
    seed = draw(D.irange(0, 2**16))
    a = D.layout(draw, shape[:-2], shape[-2:], seed, dtype) if len(shape) >= 2 else \
        tensor(hashed_ints(shape, seed), dtype=dtype)
    out_shape, _ = copies(shape, params)
    cot, cmode = D.cotangent(draw, out_shape, dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "c")))))
    c = tensor(np.array(float(hashed_ints((1,), seed + 1)[0])), dtype=dtype)
    return D.finish(Scenario(name="", op="pad", operands={"a": a, "c": c}, wrt=wrt, params=params,
                             cotangent=cot, family="pad",
                             description=f"generated: {mode} a{shape} width {width} ({form}), "
                                         f"value {value}, cotangent {cmode}"))


def call_expression(params, names) -> str:
    """The one mx.pad call: pad_width in the params' Python form, constant_values a number or c."""
    w, form = params["width"], params.get("width_form", "pairs")
    width = {"single": lambda: E.lit((w[0],)), "pair": lambda: E.lit(tuple(w)),
             "pairs": lambda: E.lit([tuple(p) for p in w])}.get(form, lambda: E.lit(w))()
    value = names["c"] if params.get("value") == "operand" else E.lit(params.get("value", 0))
    return E.call("mx.pad", names["a"], width, mode=E.lit(params["mode"]), constant_values=value)


OPS = (complex_op(OpInfo(
    name="pad",
    # one class, two register entries: the catalog's wrong value, and a form that crashes
    known_defects=(KnownDefect("constant_value_grad",
                               register=("pad__constant_value_grad", "pad__constant_value_grad_crash")),),
    summary="mx.pad: constant (Pad), edge, reflect, symmetric; width forms; constant operand",
    operands=("a", "c"), differentiable=("a", "c"), reference=reference, reference_vjp=reference_vjp,
    exact=True, multilinear=True, mlx_call=".ops.repro.pad:mlx_call", call_expression=call_expression,
    # edge, reflect and symmetric are built from Slice and SliceUpdate (mlx/ops.cpp); vmap holds except
    # over the constant operand c (Pad::vmap refuses it)
    primitives=("Pad", "Slice", "SliceUpdate", "Broadcast"), dtypes=("float32", "float16", "bfloat16"), complex=False,
    scenarios=scenarios,
    strategy=fuzz_case,
    rule="d a[i] = sum of g over every output position that copies a[i]; d c = sum of g over the "
         "constant-padded positions when c is the constant, else 0")),)
