"""full: mx.full(shape, v) with v an array, MLX's Full primitive: v broadcast to
shape (a Broadcast), then Full copies it (full_impl in mlx/ops.cpp).

Every output element is a copy of one element of v, so d v = the sum of g over
the copies of each element. Full::vjp returns cotangent * primal instead (the
primal being the broadcast v), so on MLX 0.32.4 d v comes out multiplied by v:
right only where v is 1 (mx.ones, the common case), 0 where v is 0 (mx.zeros
with a traced value). The catalog's ".../defect/value_scaled/..." scenarios show
it. Where v is all ones the first-order gradient is right, but the VJP's own
derivative in v (second order) is g instead of 0: those are tagged
value_scaled_second_order (only the second-order oracle shows them). In half
precision second order is not judged, so the all-ones calls there pass (the
control), as does a zero-size output. The MLX call is ops/repro/full.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ._support import expression as E
from ._support.cases import HALF, case, logical_inputs, retyped
from ._support.copies import copy_vjp
from ._support.views import draw_layout, draw_shape, laid_out

OP = "full"
TAG = ("value_scaled",)
# Where v is all ones the first order is right and only the VJP's own derivative is wrong:
# a class of its own, which only the second-order oracle shows (its KnownDefect's revealed_by).
TAG2 = ("value_scaled_second_order",)


def reference(inp, params):
    return np.broadcast_to(np.asarray(inp["v"]), tuple(params["shape"])).copy()


def reference_vjp(inp, g, params):
    return copy_vjp(lambda i: reference(i, params), inp, g, ["v"])


# (name, v values, v layout, shape, tags, description)
ROWS = (
    ("zero_size", np.zeros((0, 3)), "contiguous", [0, 3], (), "nothing to copy"),
    ("defect/value_scaled/ones_second_order", np.ones(3), "contiguous", [2, 3], TAG2,
     "v all ones: g * v is g at first order, but the VJP's own derivative in v is g, not 0"),
    ("defect/value_scaled/unit_rank0", np.array(1.0), "contiguous", [], TAG2, "no broadcast, v = 1"),
    ("defect/value_scaled/ones_strided", np.ones((2, 1)), "strided", [2, 4], TAG2, ""),
    ("defect/value_scaled/rank0", np.array(2.0), "contiguous", [3], TAG,
     "v = 2 copied 3 times, g all ones: d v = 3 (the sum of g); MLX gives 6 (g * v summed)"),
    ("defect/value_scaled/row", np.array([2.0, -1.0, 3.0]), "contiguous", [2, 3], TAG, ""),
    ("defect/value_scaled/zero", np.array([0.0]), "contiguous", [2], TAG, "v = 0: MLX gives d v = 0"),
    ("defect/value_scaled/reversed", np.array([[1.0, 2.0], [-2.0, 1.0]]), "reversed", [2, 2, 2], TAG, ""),
)


def scenarios() -> list:
    out = [case(OP, name, {"v": laid_out(v, lay)[0]}, {"shape": shape}, reference=reference, seed=k,
                cot="ones" if name.endswith("/rank0") else "random", family="full", desc=desc, tags=tags,
                fd=k == 0) for k, (name, v, lay, shape, tags, desc) in enumerate(ROWS)]
    z = laid_out(np.array([1.0 + 2.0j, -1.0j]), dtype="complex64")[0]
    out.append(case(OP, "defect/value_scaled/complex", {"v": z}, {"shape": [3, 2]}, reference=reference, seed=20,
                    family="full", tags=TAG))
    ones = case(OP, "ones_value", {"v": laid_out(np.ones(3))[0]}, {"shape": [2, 3]}, reference=reference, seed=1,
                family="full", desc="v all ones in half precision: first order only, which is right there")
    return out + [retyped(ones, d) for d in HALF]


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    shape = draw_shape(draw, 0, 3, 3)
    vshape = shape if 0 in shape else D.broadcast_variant(draw, shape)   # no sum over an empty axis
    values = np.ones(vshape) if draw(D.irange(0, 1)) else D.hashed_ints(vshape, draw(D.irange(0, 2**16)))
    v = draw_layout(draw, values + (1j * np.ones(vshape) if dtype == "complex64" else 0), dtype)[0]
    y = reference(logical_inputs({"v": v}), {"shape": list(shape)})
    cot, mode = D.cotangent(draw, np.shape(y), dtype)
    return D.finish(Scenario(name="", op=OP, operands={"v": v}, wrt=("v",), params={"shape": list(shape)},
                             cotangent=cot, family="full", description=f"generated: v{vshape} to {shape}, "
                                                                          f"cotangent {mode}"))


OPS = (OpInfo(
    name=OP, known_defects=(KnownDefect(TAG[0]), KnownDefect(TAG2[0], revealed_by="second_order")),
    summary="mx.full(shape, v) with an array v (Broadcast, Full)", operands=("v",),
    differentiable=("v",), reference=reference, reference_vjp=reference_vjp, exact=True, multilinear=True,
    mlx_call=".ops.repro.full:mlx_call",
    call_expression=lambda params, names: E.call("mx.full", E.lit(tuple(params["shape"])), names["v"]),
    primitives=("Full", "Broadcast"), dtypes=("float32", "float16", "bfloat16"), complex=True,
    scenarios=scenarios, strategy=fuzz_case,
    rule="each output element copies an element of v: d v = the sum of g over its copies"),)
