"""addmm: mx.addmm(c, a, b, alpha, beta) = alpha * (a @ b) + beta * c, MLX's AddMM
primitive (c broadcast to the output first).

Reverse rule (AddMM::vjp): d a = alpha g @ conj(b)^T, d b = alpha conj(a)^T @ g,
d c = beta g summed over the axes c was broadcast along (beta = 0: exactly 0).
alpha and beta are params (dyadic, so the products stay exact). The catalog
covers the scalings, c as a full matrix, a row, a column and a 0-d value,
batches, an empty inner dimension, operands stored transposed, strided or
broadcast, and complex operands. The MLX call is ops/repro/addmm.py.

Known defect (MLX 0.32.4, forward mode only): AddMM::jvp ignores alpha and beta,
so every float32 call with either other than 1 fails the forward-mode check
(tagged "jvp_ignores_scale"); complex addmm does not use the AddMM primitive. In
half precision forward mode is not judged, so there the strategy keeps alpha and
beta at 1 (the defect could only show as an unconfirmed disagreement of mx.jvp
with the VJP) and the catalog's scaled float16 call checks the VJP alone.

Known defect (MLX 0.32.4, the forward): with K = 0 and beta != 1, AddMM::eval_cpu
multiplies a non-contiguous c by beta held as a 0-d array, and the general binary
kernel reads stride entries that array does not have: uninitialised heap memory,
so the value depends on what the allocator's chunk last held (tagged
"zero_inner_stale_strides"). A verdict that depends on the heap would be a flaky
one, so the tagged calls fix that memory first: param "stale_stride" s (the
harness's, not MLX's) has the call evaluate a general-path multiply whose second
operand has strides (s, s) just before, which leaves s in the chunk; s = -1 moves
the read of beta off its buffer (s = 0 leaves it on beta: right), and the same
call with beta 1 or a contiguous c (the controls) stays right.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints
from ._support import expression as E
from ._support.cases import case, in_half_precision, logical_inputs, retyped
from ._support.products import matmul, matmul_vjp, sum_to
from ._support.views import draw_layout, laid_out, with_imaginary

OP = "addmm"
SCALES = (1.0, 2.0, 0.5, -1.0, 0.0)


def reference(inp, params):
    y = params.get("alpha", 1.0) * matmul(inp["a"], inp["b"])
    return y + params.get("beta", 1.0) * np.broadcast_to(np.asarray(inp["c"]), y.shape)


def reference_vjp(inp, g, params):
    alpha, beta, g = params.get("alpha", 1.0), params.get("beta", 1.0), np.asarray(g)
    da, db = matmul_vjp(inp["a"], inp["b"], alpha * g)
    dc = beta * sum_to(g, np.shape(inp["c"]))
    return {"c": dc if np.iscomplexobj(inp["c"]) else np.real(dc), "a": da, "b": db}


# --- catalog -------------------------------------------------------------------------------------

def V(shape, seed, complex_=False):
    v = seeded_ints(tuple(shape), 700 + seed)
    return v + 1j * seeded_ints(tuple(shape), 750 + seed) if complex_ else v


# (name, c (shape, layout), a (shape, layout), b (shape, layout), alpha, beta, description)
ROWS = (
    ("plain", ((2, 4), "contiguous"), ((2, 3), "contiguous"), ((3, 4), "contiguous"), 1.0, 1.0, ""),
    ("scaled", ((2, 4), "contiguous"), ((2, 3), "contiguous"), ((3, 4), "contiguous"), 2.0, 0.5, ""),
    ("negative_alpha_zero_beta", ((2, 2), "contiguous"), ((2, 3), "contiguous"), ((3, 2), "contiguous"),
     -1.0, 0.0, "beta 0: c's gradient is exactly 0"),
    ("scaled_c_row", ((4,), "contiguous"), ((2, 3), "contiguous"), ((3, 4), "contiguous"), 0.5, -1.0,
     "c broadcast over rows, both scalings"),
    ("c_row", ((4,), "contiguous"), ((2, 3), "contiguous"), ((3, 4), "contiguous"), 1.0, 1.0,
     "c broadcast over rows"),
    ("c_column", ((2, 1), "contiguous"), ((2, 3), "contiguous"), ((3, 4), "contiguous"), 1.0, 1.0, ""),
    ("c_rank0", ((), "contiguous"), ((2, 3), "contiguous"), ((3, 2), "contiguous"), 1.0, 1.0, "a 0-d c"),
    ("batched", ((2, 2, 4), "contiguous"), ((2, 2, 3), "contiguous"), ((2, 3, 4), "contiguous"), 1.0, 1.0, ""),
    ("zero_size_inner", ((2, 4), "contiguous"), ((2, 0), "contiguous"), ((0, 4), "contiguous"), 1.0, 1.0,
     "K = 0: the output is c"),
    ("transposed_a_strided_b", ((2, 4), "strided"), ((2, 3), "transposed"), ((3, 4), "strided"), 1.0, 1.0, ""),
    ("broadcast_c_view", ((3, 4), "broadcast"), ((3, 2), "reversed"), ((2, 4), "contiguous"), 1.0, 1.0,
     "c stored as one row with a stride-0 axis"),
)


# Known defect of MLX 0.32.4: AddMM::jvp ignores alpha and beta (the tangent of
# alpha a @ b + beta c comes out as that of a @ b + c); forward mode only, the VJP is right.
JVP_SCALE = ("jvp_ignores_scale",)
# Known defect of MLX 0.32.4's forward (the module docstring): K = 0, beta != 1, c not
# contiguous: beta is read through strides its 0-d array does not have.
ZERO_K = "zero_inner_stale_strides"
STALE = -1   # the stride left in that memory: beta's read lands 4 bytes before its buffer

# (name, c layout, beta, tags, description): K = 0 calls made just after a multiply left
# STALE in the heap chunk the K = 0 path reads; c is (2, 1), a (2, 0), b (0, 1).
PRIMED = (
    ("zero_inner_strided_c/stale_stride", "strided", 2.0, (ZERO_K,) + JVP_SCALE,
     "K = 0, beta 2, c a strided view: beta is read through stale strides"),
    ("zero_inner_strided_c_beta1/stale_stride", "strided", 1.0, (),
     "control: the same memory, beta 1 (c is copied, nothing is read through strides)"),
    ("zero_inner_contiguous_c/stale_stride", "contiguous", 2.0, JVP_SCALE,
     "control: the same memory, c contiguous (beta is read as a scalar, not through strides)"),
)


def scenarios() -> list:
    out = []
    for k, (name, (sc, lc), (sa, la), (sb, lb), alpha, beta, desc) in enumerate(ROWS):
        ops = {"c": laid_out(V(sc, k), lc)[0], "a": laid_out(V(sa, 20 + k), la)[0],
               "b": laid_out(V(sb, 40 + k), lb)[0]}
        out.append(case(OP, name, ops, {"alpha": alpha, "beta": beta}, reference=reference, seed=k,
                        family="addmm", desc=desc, fd=k == 0, tags=JVP_SCALE if (alpha, beta) != (1, 1) else ()))
    z = {"c": laid_out(V((2, 2), 90, True), dtype="complex64")[0],
         "a": laid_out(V((2, 3), 91, True), dtype="complex64")[0],
         "b": laid_out(V((3, 2), 92, True), dtype="complex64")[0]}
    out.append(case(OP, "complex", z, {"alpha": 2.0, "beta": -1.0}, reference=reference, seed=90, family="addmm",
                    desc="complex addmm is not the AddMM primitive (no forward-mode defect)"))
    return out + in_half_precision(out, picks=2) + [_untagged(retyped(out[1], "float16"))] + _primed()


def _primed() -> list:
    """The K = 0 calls with the stale stride fixed (ZERO_K), and their two controls."""
    out = []
    for k, (name, layout, beta, tags, desc) in enumerate(PRIMED):
        ops = {"c": laid_out(V((2, 1), 60 + k), layout)[0], "a": laid_out(np.zeros((2, 0)))[0],
               "b": laid_out(np.zeros((0, 1)))[0]}
        out.append(case(OP, name, ops, {"alpha": 1.0, "beta": beta, "stale_stride": STALE}, reference=reference,
                        seed=60 + k, family="addmm", desc=desc, tags=tags))
    return out


def _untagged(s):
    """alpha and beta in half precision: forward mode is not judged there (no stated bound),
    so the JVP defect cannot show and the call checks the scaled VJP alone."""
    return dataclasses.replace(s, defect_tags=(),
                               description="the scaled VJP in float16 (forward mode not judged)")


# --- fuzz strategy -------------------------------------------------------------------------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    m, k, n = draw(D.irange(1, 4)), draw(D.irange(0, 4)), draw(D.irange(1, 4))
    batch = tuple(draw(D.irange(1, 3)) for _ in range(draw(D.irange(0, 1))))
    shapes = {"c": D.broadcast_variant(draw, batch + (m, n)), "a": batch + (m, k), "b": batch + (k, n)}
    ops = {name: draw_layout(draw, with_imaginary(draw, V(s, draw(D.irange(0, 2**16))), dtype), dtype)[0]
           for name, s in shapes.items()}
    params = {"alpha": draw(D.choice(SCALES)), "beta": draw(D.choice(SCALES))}
    if dtype in ("float16", "bfloat16"):   # forward mode is not judged in half precision, so AddMM::jvp's
        params = {"alpha": 1.0, "beta": 1.0}   # known scaling defect could only show unconfirmed there
    y = reference(logical_inputs(ops), params)
    cot, mode = D.cotangent(draw, np.shape(y), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("c", "a", "b")))))
    return D.finish(Scenario(name="", op=OP, operands=ops, wrt=wrt, params=params, cotangent=cot, family="addmm",
                             description=f"generated: c{shapes['c']} a{shapes['a']} b{shapes['b']} {params}, "
                                         f"cotangent {mode}"))


def call_expression(params, names) -> str:
    call = E.call("mx.addmm", names["c"], names["a"], names["b"], alpha=E.lit(float(params.get("alpha", 1.0))),
                  beta=E.lit(float(params.get("beta", 1.0))))
    if "stale_stride" not in params:
        return call
    # one expression: the multiply that leaves the stride is evaluated first (ops/repro/addmm.py)
    s = int(params["stale_stride"])
    return (f"(mx.eval(mx.as_strided(mx.ones((64,)), (2, 2), (1, 3), 32) * mx.as_strided(mx.ones((64,)), (2, 2), "
            f"({s}, {s}), 32)), {call})[1]")


OPS = (OpInfo(
    name=OP, known_defects=(KnownDefect(JVP_SCALE[0], revealed_by="forward_mode"), KnownDefect(ZERO_K)),
    summary="mx.addmm (AddMM): alpha and beta, c broadcast, batches, zero K, views, complex",
    operands=("c", "a", "b"), differentiable=("c", "a", "b"), reference=reference, reference_vjp=reference_vjp,
    exact=True, multilinear=True, mlx_call=".ops.repro.addmm:mlx_call", call_expression=call_expression,
    primitives=("AddMM", "Broadcast", "Matmul", "Multiply", "Add"),   # complex: matmul, scale, add
    dtypes=("float32", "float16", "bfloat16"), complex=True,
    scenarios=scenarios, strategy=fuzz_case,
    rule="d a = alpha g @ conj(b)^T, d b = alpha conj(a)^T @ g, d c = beta g summed over c's broadcast axes"),)
