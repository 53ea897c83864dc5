"""rms_norm: mx.fast.rms_norm(x, weight or None, eps), normalised along the last axis.

y = x * r * w with r = (mean(x^2) + eps)^(-1/2) per row (w = 1 without a
weight). The reverse rule, per row of length n:

    dx = g w r - x r^3 mean(g w x)        dw = sum over rows of g x r

The second term of dx (r depends on x) and the sum of dw over every leading
axis are where a hand-written rule can go wrong. RMSNorm::vjp in mlx/fast.cpp
writes exactly this for the fused GPU kernel; on CPU (RMSNorm::use_fallback)
MLX differentiates its composed fallback instead, so a CPU run checks that
composition and a GPU run the hand-written rule, against the same reference.
The weight is an optional operand: a scenario without it passes None. The MLX
call is ops/repro/rms_norm.py.

Float32 rounding: inputs are small integers (|x| <= 4, rows of length <= 8),
so mean(x^2) is exact and r carries one rsqrt rounding (~1e-7 relative);
gradients are O(1..300) (300: a zero row with eps 1e-5), so rounding stays
below 1e-5 of the 3e-5 atol/rtol band.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core import layout
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints, tensor
from ._support import fast
from ._support import expression as E


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _r(x, eps) -> np.ndarray:
    """(mean of squares along the last axis + eps)^(-1/2), kept as a column."""
    return 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)


# --- float64 reference ---------------------------------------------------------------------

def reference(inp, params):
    x = _f64(inp["x"])
    y = x * _r(x, params["eps"])
    return y * _f64(inp["weight"]) if "weight" in inp else y


def reference_vjp(inp, g, params):
    x, g = _f64(inp["x"]), _f64(g)
    r = _r(x, params["eps"])
    gw = g * _f64(inp["weight"]) if "weight" in inp else g
    dx = gw * r - x * r ** 3 * np.mean(gw * x, axis=-1, keepdims=True)
    if "weight" not in inp:
        return {"x": dx}
    rows = tuple(range(x.ndim - 1))   # every leading axis: the weight is shared by all rows
    return {"x": dx, "weight": np.sum(g * x * r, axis=rows)}


# --- catalog ---------------------------------------------------------------------------------

def _case(name, x, w, eps, wrt, cot=None, desc=""):
    operands = {"x": x} if w is None else {"x": x, "weight": w}
    return Scenario(name=f"rms_norm/{name}", op="rms_norm", operands=operands, wrt=tuple(wrt),
                    params={"eps": eps}, cotangent=cot, family="norm", description=desc)


def scenarios() -> list:
    x, w = tensor(seeded_ints((3, 4), 70)), tensor(seeded_ints((4,), 71, 1, 4))
    cot = tensor(seeded_ints((3, 4), 72))
    both = ("x", "weight")
    out = [_case(f"weight/{'+'.join(wrt)}", x, w, 1e-5, wrt, cot) for wrt in (both, ("x",), ("weight",))]
    out += [
        _case("no_weight", x, None, 1e-5, ("x",), cot, "weight=None: y = x r"),
        _case("zero_row", tensor([[0, 0, 0, 0], [1, -2, 3, 0], [0, 0, 0, 0]]), w, 1e-5, both, cot,
              "rows of zeros: r = eps^-1/2 and only the g w r term is left"),
        _case("eps_half", x, w, 0.5, both, cot, "a large eps changes every row's r"),
        _case("eps_zero", tensor(seeded_ints((3, 4), 73, 1, 5)), w, 0.0, both, cot,
              "eps 0 on rows without zeros"),
        _case("length1", tensor([[2.0], [-3.0], [1.0]]), tensor([2.0]), 0.5, both,
              tensor([[1.0], [2.0], [-1.0]]), "rows of length 1: the two terms of dx nearly cancel"),
        _case("rank3", tensor(seeded_ints((2, 3, 4), 74)), w, 1e-5, both,
              tensor(seeded_ints((2, 3, 4), 75)), "dw sums over two leading axes"),
        _case("transposed", tensor(seeded_ints((4, 3), 76), views=[{"op": "transpose", "axes": [1, 0]}]),
              w, 1e-5, both, cot, "the normalised axis has stride 3"),
        _case("strided", tensor(np.arange(24) % 9 - 4, (3, 8), views=[{"op": "slice",
              "index": [[0, 3], [0, 8, 2]]}]), w, 1e-5, both, cot,
              "every other element of a wider buffer"),
        _case("broadcast_rows", tensor([[1.0, -2.0, 3.0, 2.0]],
              views=[{"op": "broadcast_to", "shape": [3, 4]}]), w, 1e-5, both, cot,
              "three rows that are one stride-0 row"),
    ]
    return out


# --- fuzz strategy -------------------------------------------------------------------------

EPS = (1e-5, 0.5, 1.0, 0.0)


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = fast.FUZZ_DTYPE   # whatever the campaign offers: see fast.FUZZ_DTYPE
    shape, x = fast.rows(draw, dtype)
    eps = draw(D.choice(EPS))
    if eps == 0.0 and np.any(np.all(layout.logical(x) == 0, axis=-1)):
        eps = EPS[0]   # a zero row with eps 0 divides by zero: no gradient to judge
    w = fast.affine(draw, shape[-1], draw(D.choice((True, False))), -3, 4, dtype)
    operands = {"x": x} if w is None else {"x": x, "weight": w}
    wrt = draw(D.choice(tuple(D.nonempty_subsets(tuple(operands)))))
    cot, mode = D.cotangent(draw, shape, dtype)
    return D.finish(Scenario(name="", op="rms_norm", operands=operands, wrt=wrt, params={"eps": eps},
                             cotangent=cot, family="norm",
                             description=f"generated: shape {list(shape)}, cotangent {mode}"))


def call_expression(params, names) -> str:
    return E.call("mx.fast.rms_norm", names["x"], names.get("weight", "None"), E.lit(params["eps"]))


OPS = (OpInfo(
    name="rms_norm", summary="mx.fast.rms_norm (RMSNorm): with and without weight, eps",
    operands=("x", "weight"), differentiable=("x", "weight"), optional_operands=("weight",),
    reference=reference, reference_vjp=reference_vjp,
    rule="per row, r = (mean(x^2) + eps)^(-1/2): dx = g w r - x r^3 mean(g w x); "
         "dw = the sum over rows of g x r (w = 1 without a weight)",
    mlx_call=".ops.repro.rms_norm:mlx_call", call_expression=call_expression,
    # RMSNorm on the GPU; on the CPU MLX composes it from the elementwise primitives listed after it
    primitives=("RMSNorm", "Add", "Broadcast", "Multiply", "Reduce", "Sqrt", "Square"),
    dtypes=("float32", "float16", "bfloat16"),
    complex=False,
    scenarios=scenarios, strategy=fuzz_case),)
