"""custom_function: mx.custom_function with a user-written VJP, and mx.checkpoint,
MLX's CustomTransforms primitive. The user's rule is the true gradient here, so
what is checked is MLX's plumbing: CustomTransforms::vjp hands the rule the
primals, the cotangents (one per output) and the outputs, then picks the
gradients of the differentiated operands (argnums) from what the rule returns;
checkpoint recomputes the forward inside the VJP. params["form"]:

  product      f(a, b) = a * b, rule (g b, g a)
  two_outputs  f(a, b) = (a b, a + b), rule (g0 b + g1, g0 a + g1); the call
               returns o0 - 2 o1, so both cotangents reach the rule
  checkpoint   mx.checkpoint(lambda a, b: a * b + a)

Real dtypes only: a user rule for complex operands must conjugate, which is the
user's business, not MLX's. Known defect (MLX 0.32.4): vmap of checkpoint's VJP
raises ("[Primitive::vmap] Not implemented for Depends"), though vmap of its
forward works; the checkpoint scenarios are tagged. The MLX call is
ops/repro/custom.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints
from ._support import expression as E
from ._support.cases import case, in_half_precision, logical_inputs
from ._support.views import draw_layout, laid_out

OP = "custom_function"
FORMS = ("product", "two_outputs", "checkpoint")


def reference(inp, params):
    a, b, form = np.asarray(inp["a"]), np.asarray(inp["b"]), params.get("form", "product")
    return a * b if form == "product" else a * b - 2 * (a + b) if form == "two_outputs" else a * b + a


def reference_vjp(inp, g, params):
    a, b, g, form = np.asarray(inp["a"]), np.asarray(inp["b"]), np.asarray(g), params.get("form", "product")
    if form == "product":
        return {"a": g * b, "b": g * a}
    if form == "two_outputs":
        return {"a": g * (b - 2), "b": g * (a - 2)}
    return {"a": g * (b + 1), "b": g * a}


def V(shape, seed):
    return seeded_ints(tuple(shape), 1100 + seed)


# (name, shape, a layout, b layout, form, wrt, description)
ROWS = (
    ("product", (2, 3), "contiguous", "contiguous", "product", None, ""),
    ("product/wrt_b", (2, 3), "contiguous", "transposed", "product", ("b",), "argnums (1,): the rule's second"),
    ("product/rank0", (), "contiguous", "contiguous", "product", None, ""),
    ("two_outputs", (3,), "contiguous", "reversed", "two_outputs", None, "two cotangents for the rule"),
    ("two_outputs/wrt_a", (2, 2), "strided", "contiguous", "two_outputs", ("a",), ""),
    ("checkpoint", (2, 3), "contiguous", "contiguous", "checkpoint", None, "the forward recomputed in the VJP"),
    ("checkpoint/broadcast_view", (3, 2), "broadcast", "window", "checkpoint", ("a",), ""),
    ("zero_size", (0, 2), "contiguous", "contiguous", "product", None, ""),
)


# Known defect of MLX 0.32.4: checkpoint's VJP orders its recomputation with mx.depends, and
# Depends has no vmap rule, so vmap of the VJP raises where vmap of the forward works.
CHECKPOINT_VMAP = ("checkpoint_vmap",)


def scenarios() -> list:
    out = []
    for k, (name, shape, la, lb, form, wrt, desc) in enumerate(ROWS):
        ops = {"a": laid_out(V(shape, 2 * k), la)[0], "b": laid_out(V(shape, 2 * k + 1), lb)[0]}
        out.append(case(OP, name, ops, {"form": form}, reference=reference, wrt=wrt, seed=k, family="custom",
                        desc=desc, fd=k == 0, tags=CHECKPOINT_VMAP if form == "checkpoint" else ()))
    return out + in_half_precision(out, picks=1)


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(tuple(d for d in dtypes if d != "complex64") or ("float32",)))
    shape = tuple(draw(D.irange(0 if k else 1, 3)) for k in range(draw(D.irange(0, 2))))
    ops = {n: draw_layout(draw, V(shape, draw(D.irange(0, 2**16))), dtype)[0] for n in ("a", "b")}
    params = {"form": draw(D.choice(FORMS))}
    y = reference(logical_inputs(ops), params)
    cot, mode = D.cotangent(draw, np.shape(y), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "b")))))
    return D.finish(Scenario(name="", op=OP, operands=ops, wrt=wrt, params=params, cotangent=cot, family="custom",
                             description=f"generated: {params['form']} of shape {shape}, cotangent {mode}"))


def call_expression(params, names) -> str:
    a, b, form = names["a"], names["b"], params.get("form", "product")
    if form == "product":
        return (E.call("mx.custom_function(lambda x0, x1: x0 * x1).vjp",
                       "lambda pr, ct, out: (ct * pr[1], ct * pr[0])") + f"({a}, {b})")
    if form == "two_outputs":
        fn = E.call("mx.custom_function(lambda x0, x1: (x0 * x1, x0 + x1)).vjp",
                    "lambda pr, ct, out: (ct[0] * pr[1] + ct[1], ct[0] * pr[0] + ct[1])")
        return f"(lambda o: o[0] - 2 * o[1])({fn}({a}, {b}))"
    return E.call("mx.checkpoint", "lambda x0, x1: x0 * x1 + x0") + f"({a}, {b})"


OPS = (OpInfo(
    name=OP, known_defects=(KnownDefect(CHECKPOINT_VMAP[0], revealed_by="vmap"),),
    summary="mx.custom_function with a user VJP, and mx.checkpoint (CustomTransforms)",
    operands=("a", "b"), differentiable=("a", "b"), reference=reference, reference_vjp=reference_vjp, exact=True,
    mlx_call=".ops.repro.custom:mlx_call", call_expression=call_expression,
    primitives=("CustomTransforms", "Multiply", "Add", "Subtract"), dtypes=("float32", "float16", "bfloat16"),
    scenarios=scenarios, strategy=fuzz_case,
    rule="the user's rule is the true gradient: product d a = g b, d b = g a; two outputs d a = g (b - 2), "
         "d b = g (a - 2); checkpoint d a = g (b + 1), d b = g a"),)
