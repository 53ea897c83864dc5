"""depends: mx.depends(inputs, dependencies), MLX's Depends primitive: the inputs
come back unchanged, evaluated after the dependencies. So each input gets the
cotangent of its own output and a dependency gets exactly 0 (Depends::vjp maps
argnums below the output count to cotangents, the rest to zeros). Two forms,
params["form"]: "single", depends([a], [b])[0]; "pair", o[0] + 2 o[1] for
o = depends([a, b], [c]), so a subset of operands exercises the argnum mapping.
MLX has no vmap rule for Depends (the op record says so). The MLX call is
ops/repro/depends.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints
from ._support import expression as E
from ._support.cases import case, in_half_precision, logical_inputs
from ._support.views import draw_layout, laid_out

OP = "depends"


def reference(inp, params):
    if params.get("form", "single") == "single":
        return np.array(inp["a"], dtype=np.asarray(inp["a"]).dtype)
    return np.asarray(inp["a"]) + 2 * np.asarray(inp["b"])


def reference_vjp(inp, g, params):
    g = np.asarray(g)
    out = {n: np.zeros(np.shape(v), dtype=g.dtype) for n, v in inp.items()}
    out["a"] = g.copy()
    if params.get("form", "single") == "pair":
        out["b"] = 2 * g
    return out


def V(shape, seed):
    return seeded_ints(tuple(shape), 1000 + seed)


# (name, {operand: (shape, layout)}, form, wrt, description)
ROWS = (
    ("single", {"a": ((2, 3), "contiguous"), "b": ((4,), "contiguous")}, "single", None, ""),
    ("single/dependency_only", {"a": ((2, 3), "contiguous"), "b": ((2,), "strided")}, "single", ("b",),
     "the dependency alone: its gradient is 0"),
    ("single/rank0", {"a": ((), "contiguous"), "b": ((), "contiguous")}, "single", None, ""),
    ("pair", {"a": ((2, 2), "contiguous"), "b": ((2, 2), "transposed"), "c": ((3,), "contiguous")}, "pair", None,
     ""),
    ("pair/second_and_dependency", {"a": ((3,), "contiguous"), "b": ((3,), "reversed"), "c": ((1,), "contiguous")},
     "pair", ("b", "c"), "argnums 1 and 2: b's cotangent is its output's, c's zero"),
    ("pair/zero_size", {"a": ((0, 2), "contiguous"), "b": ((0, 2), "contiguous"), "c": ((2,), "contiguous")},
     "pair", None, ""),
)


def scenarios() -> list:
    out = []
    for k, (name, specs, form, wrt, desc) in enumerate(ROWS):
        ops = {n: laid_out(V(shape, 10 * k + i), lay)[0] for i, (n, (shape, lay)) in enumerate(specs.items())}
        out.append(case(OP, name, ops, {"form": form}, reference=reference, wrt=wrt, seed=k, family="depends",
                        desc=desc, fd=k == 0))
    z = {"a": laid_out(V((2,), 90) + 1j * V((2,), 91), dtype="complex64")[0],
         "b": laid_out(V((2,), 92) + 0j, dtype="complex64")[0]}
    out.append(case(OP, "single/complex", z, {"form": "single"}, reference=reference, seed=90, family="depends"))
    return out + in_half_precision(out, picks=1)


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    form = draw(D.choice(("single", "pair")))
    shape = tuple(draw(D.irange(0 if k else 1, 3)) for k in range(draw(D.irange(0, 2))))
    names = ("a", "b") if form == "single" else ("a", "b", "c")
    shapes = {"a": shape, "b": shape if form == "pair" else (draw(D.irange(1, 3)),),
              "c": (draw(D.irange(1, 3)),)}
    imag = 1j if dtype == "complex64" else 0
    ops = {n: draw_layout(draw, V(shapes[n], draw(D.irange(0, 2**16))) + imag, dtype)[0] for n in names}
    y = reference(logical_inputs(ops), {"form": form})
    cot, mode = D.cotangent(draw, np.shape(y), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(names))))
    return D.finish(Scenario(name="", op=OP, operands=ops, wrt=wrt, params={"form": form}, cotangent=cot,
                             family="depends", description=f"generated: {form} a{shape}, cotangent {mode}"))


def call_expression(params, names) -> str:
    if params.get("form", "single") == "single":
        return E.call("mx.depends", f"[{names['a']}]", f"[{names['b']}]") + "[0]"
    inputs, dependencies = f"[{names['a']}, {names['b']}]", f"[{names['c']}]"
    return f"(lambda o: o[0] + 2 * o[1])({E.call('mx.depends', inputs, dependencies)})"


OPS = (OpInfo(
    name=OP, summary="mx.depends (Depends): inputs get their cotangents, dependencies 0",
    operands=("a", "b", "c"), differentiable=("a", "b", "c"), optional_operands=("c",), reference=reference,
    reference_vjp=reference_vjp, exact=True, multilinear=True, mlx_call=".ops.repro.depends:mlx_call",
    call_expression=call_expression, primitives=("Depends", "Multiply", "Add"),
    dtypes=("float32", "float16", "bfloat16"), complex=True, vmap=False, scenarios=scenarios, strategy=fuzz_case,
    rule="inputs pass through: d input = the cotangent of its output; d dependency = 0"),)
