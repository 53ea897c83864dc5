"""matmul: mx.matmul(a, b), MLX's Matmul primitive (with Broadcast for batch axes,
and ExpandDims/Squeeze or Flatten/Unflatten where an operand is a vector).

y = a @ b with numpy's rules: batch axes broadcast, a 1-D left operand is a row
and a 1-D right one a column (their axis dropped from the result). The reverse
rule (Matmul::vjp): d a = g @ conj(b)^T, d b = conj(a)^T @ g, each summed over
the batch axes its operand was broadcast along (_support/products.py). The
catalog covers plain, batched, broadcast and shared batches, every vector form
(vector @ vector is 0-d), zero-size inner and outer dimensions (an empty inner
dimension gives a zero output whose gradients are empty), operands stored
transposed, strided, reversed or broadcast, complex operands and a complex
operand against a real one. The MLX call is ops/repro/matmul.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints
from ._support import expression as E
from ._support.cases import case, in_half_precision, logical_inputs
from ._support.products import matmul, matmul_vjp
from ._support.views import draw_layout, laid_out, with_imaginary

OP = "matmul"


def reference(inp, params):
    return matmul(inp["a"], inp["b"])


def reference_vjp(inp, g, params):
    da, db = matmul_vjp(inp["a"], inp["b"], g)
    return {"a": da, "b": db}


# --- catalog -------------------------------------------------------------------------------------

def V(shape, seed, complex_=False):
    v = seeded_ints(tuple(shape), 600 + seed)
    return v + 1j * seeded_ints(tuple(shape), 650 + seed) if complex_ else v


# (name, (a shape, layout), (b shape, layout), wrt, description)
ROWS = (
    ("matrix", ((2, 3), "contiguous"), ((3, 4), "contiguous"), None, ""),
    ("matrix/wrt_b", ((2, 3), "contiguous"), ((3, 2), "contiguous"), ("b",), ""),
    ("batched", ((2, 2, 3), "contiguous"), ((2, 3, 2), "contiguous"), None, ""),
    ("broadcast_batch", ((2, 1, 2, 3), "contiguous"), ((3, 3, 2), "contiguous"), None,
     "batch axes broadcast both ways: (2, 1) against (3,)"),
    ("shared_right", ((2, 2, 3), "contiguous"), ((3, 2), "contiguous"), None, "b shared by every batch item"),
    ("vector_matrix", ((3,), "contiguous"), ((3, 2), "contiguous"), None, ""),
    ("matrix_vector", ((2, 3), "contiguous"), ((3,), "contiguous"), None, ""),
    ("vector_vector", ((3,), "contiguous"), ((3,), "contiguous"), None, "a 0-d result"),
    ("vector_batched", ((3,), "contiguous"), ((2, 3, 2), "contiguous"), ("a",), ""),
    ("zero_size/inner", ((2, 0), "contiguous"), ((0, 3), "contiguous"), None,
     "K = 0: the output is zeros, the gradients are empty"),
    ("zero_size/rows", ((0, 3), "contiguous"), ((3, 2), "contiguous"), None, "M = 0"),
    ("transposed_left", ((2, 3), "transposed"), ((3, 3), "contiguous"), None, "a stored transposed"),
    ("strided_right", ((2, 3), "contiguous"), ((3, 2), "strided"), None, ""),
    ("reversed_both", ((2, 3), "reversed"), ((3, 2), "reversed"), None, "negative strides"),
    ("broadcast_batch_view", ((3, 2, 2), "broadcast"), ((3, 2, 2), "window"), None,
     "a stride-0 batch axis: one matrix for every item"),
    ("singleton_view", ((2, 3), "contiguous"), ((3, 1), "singleton"), None, ""),
)


def scenarios() -> list:
    out = []
    for k, (name, (sa, la), (sb, lb), wrt, desc) in enumerate(ROWS):
        ops = {"a": laid_out(V(sa, k), la)[0], "b": laid_out(V(sb, 30 + k), lb)[0]}
        out.append(case(OP, name, ops, {}, reference=reference, wrt=wrt, seed=k, family="matmul", desc=desc,
                        fd=k == 0))
    z = {"a": laid_out(V((2, 3), 90, True), dtype="complex64")[0],
         "b": laid_out(V((3, 2), 91, True), "transposed", "complex64")[0]}
    out.append(case(OP, "complex", z, {}, reference=reference, seed=90, family="matmul"))
    mixed = {"a": laid_out(V((2, 3), 92, True), dtype="complex64")[0], "b": laid_out(V((3, 2), 93))[0]}
    out.append(case(OP, "complex_left_real_right", mixed, {}, reference=reference, seed=92, family="matmul",
                    desc="b is promoted to complex (AsType); its gradient is the real part"))
    return out + in_half_precision(out, picks=2)


# --- fuzz strategy -------------------------------------------------------------------------------

def _shapes(draw):
    """(a shape, b shape): a matrix product with maybe vectors, batches and broadcasting."""
    m, k, n = (draw(D.irange(0 if i == 1 else 1, 4)) for i in range(3))
    batch = tuple(draw(D.irange(1, 3)) for _ in range(draw(D.irange(0, 2))))
    form = draw(D.choice(("matrix", "vector_left", "vector_right", "vector_both")))
    a = (k,) if form in ("vector_left", "vector_both") else D.broadcast_variant(draw, batch) + (m, k)
    b = (k,) if form in ("vector_right", "vector_both") else D.broadcast_variant(draw, batch) + (k, n)
    return a, b


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    sa, sb = _shapes(draw)
    ops = {n: draw_layout(draw, with_imaginary(draw, V(s, draw(D.irange(0, 2**16))), dtype), dtype)[0]
           for n, s in (("a", sa), ("b", sb))}
    y = reference(logical_inputs(ops), {})
    cot, mode = D.cotangent(draw, np.shape(y), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "b")))))
    return D.finish(Scenario(name="", op=OP, operands=ops, wrt=wrt, cotangent=cot, family="matmul",
                             description=f"generated: a{sa} @ b{sb}, cotangent {mode}"))


OPS = (OpInfo(
    name=OP, summary="mx.matmul (Matmul): batches, broadcasting, vectors, zero sizes, views, complex",
    operands=("a", "b"), differentiable=("a", "b"), reference=reference, reference_vjp=reference_vjp,
    exact=True, multilinear=True, mlx_call=".ops.repro.matmul:mlx_call",
    call_expression=lambda params, names: E.call("mx.matmul", names["a"], names["b"]),
    primitives=("Matmul", "Broadcast", "ExpandDims", "Squeeze", "Flatten", "Unflatten", "AsType"),
    dtypes=("float32", "float16", "bfloat16"), complex=True, scenarios=scenarios, strategy=fuzz_case,
    rule="d a = g @ conj(b)^T, d b = conj(a)^T @ g, summed over the batch axes each was broadcast along"),)
