"""quantized_matmul (affine): y = x @ W^T (transpose) or x @ W, W dequantized
from exact integer codes, MLX's QuantizedMatmul primitive.

W = code * scale + bias per group of `group_size` along W's stored last axis
(K when transposed, W stored (N, K); N otherwise, W stored (K, N)). The codes
are held fixed. QuantizedMatmul::vjp computes dx as a quantized matmul with
the transpose flag flipped, and dscale / dbias from dW = g^T x (or x^T g)
after flattening every batch axis of x and g "because w is always 2-D": the
batch flattening, the flag flip and the group reshape are what can go wrong.

The float64 reference is gather_qmm's (_support/quantized.py) with no index
arrays: batch axes of x and W then pair up by broadcasting, exactly as a
batched matmul. A vector x (shape (K,)) is a one-row matrix whose row axis is
dropped again. The MLX call is ops/repro/quantized_matmul.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, integer_tensor, seeded_ints, tensor
from ._support import quantized as Q
from ._support import expression as E

# --- float64 reference: the rule in _support/quantized.py -------------------------------

def reference(inp, params):
    x = np.asarray(inp["x"], dtype=np.float64)
    y = Q.gather_qmm(np.atleast_2d(x), inp["codes"], inp["scales"], inp["biases"], **Q.qargs(params))
    return y[0] if x.ndim == 1 else y


def reference_vjp(inp, g, params):
    x, g = np.asarray(inp["x"], dtype=np.float64), np.asarray(g, dtype=np.float64)
    grads = Q.gather_qmm_vjp(np.atleast_2d(x), inp["codes"], inp["scales"], inp["biases"],
                             np.atleast_2d(g), **Q.qargs(params))
    return dict(grads, x=grads["x"].reshape(x.shape))


# --- catalog ---------------------------------------------------------------------------------

VECTOR_X = "vector_x"   # defect class: a 1-D x makes the scales/biases VJP raise
WRT = ("x", "scales", "biases")
SCALE_SET = (0.5, 1.0, 2.0, -1.0)


def stored_shape(batch, transpose, K, N) -> tuple:
    return tuple(batch) + ((N, K) if transpose else (K, N))


def quant_operands(batch, transpose, K, N, bits, group, seed) -> dict:
    """Codes, scales (dyadic) and biases (small integers) for W of logical (K, N)."""
    shape = stored_shape(batch, transpose, K, N)
    groups = shape[:-1] + (shape[-1] // group,)
    rng = np.random.RandomState(seed)
    return {"codes": integer_tensor(rng.randint(0, 1 << bits, size=shape)),
            "scales": tensor(rng.choice(SCALE_SET, size=groups)),
            "biases": tensor(rng.randint(-3, 4, size=groups))}


def qmm(name, x, q, bits, group, transpose, wrt=WRT, cot=None, tags=(), fd=False, desc="") -> Scenario:
    return Scenario(name=f"quantized_matmul/{name}", op="quantized_matmul",
                    operands={"x": x, **q}, wrt=tuple(wrt), cotangent=cot,
                    params={"bits": bits, "group_size": group, "transpose": transpose, "mode": "affine"},
                    fd_step=1.0 / 16 if fd else None, family="quantized", defect_tags=tuple(tags),
                    description=desc)


def _dims(transpose, group):
    """(K, N): the grouped axis holds two groups."""
    return (2 * group, 3) if transpose else (3, 2 * group)


def _flag_grid() -> list:
    out = []
    for bits in (4, 8):
        for transpose in (True, False):
            for group in (32, 64):
                K, N = _dims(transpose, group)
                q = quant_operands((), transpose, K, N, bits, group, seed=bits + group + transpose)
                tag = f"b{bits}/{'t' if transpose else 'n'}/g{group}"
                x = tensor(seeded_ints((2, K), 100 + group, -2, 3))
                cot = tensor(seeded_ints((2, N), 101 + group))
                out.append(qmm(f"{tag}/joint", x, q, bits, group, transpose, cot=cot))
                out += [qmm(f"{tag}/wrt_{w}", x, q, bits, group, transpose, wrt=(w,), cot=cot)
                        for w in WRT]
    return out


def _shapes() -> list:
    out = []
    for transpose in (True, False):
        t = "t" if transpose else "n"
        K, N = _dims(transpose, 32)
        q = quant_operands((), transpose, K, N, 4, 32, seed=7 + transpose)
        qb = quant_operands((2,), transpose, K, N, 8, 32, seed=9 + transpose)
        out += [
            qmm(f"batched_x/{t}", tensor(seeded_ints((2, 3, K), 110, -2, 3)), q, 4, 32, transpose,
                cot=tensor(seeded_ints((2, 3, N), 111)), desc="x (2, 3, K): the scales VJP flattens its batch"),
            qmm(f"batched_w/{t}", tensor(seeded_ints((2, 2, K), 112, -2, 3)), qb, 8, 32, transpose,
                desc="a batch of quantized matrices, one per batch item of x"),
            qmm(f"broadcast_x/{t}", tensor(seeded_ints((1, 2, K), 113, -2, 3)), qb, 8, 32, transpose,
                desc="x broadcast over W's batch: dx sums over it"),
            qmm(f"broadcast_w/{t}", tensor(seeded_ints((3, 2, 2, K), 114, -2, 3)), qb, 8, 32, transpose,
                desc="W broadcast over x's leading batch axis: dscale, dbias sum over it"),
            qmm(f"transposed_x/{t}", tensor(seeded_ints((K, 3), 115, -2, 3), views=[{"op": "transpose",
                                                                                       "axes": [1, 0]}]),
                q, 4, 32, transpose, desc="x a transposed view"),
            qmm(f"vector/wrt_x/{t}", tensor(seeded_ints((K,), 116, -2, 3)), q, 4, 32, transpose,
                wrt=("x",), desc="a 1-D x: dx alone"),
        ]
        out += [qmm(f"{VECTOR_X}/{w}/{t}", tensor(seeded_ints((K,), 117, -2, 3)), q, 4, 32, transpose,
                    wrt=wrt, tags=(VECTOR_X,),
                    desc="a 1-D x: the forward works, the scales/biases VJP raises in flatten")
                for w, wrt in (("joint", WRT), ("wrt_scales", ("scales",)), ("wrt_biases", ("biases",)))]
    return out


def _controls() -> list:
    """Small ones with finite differences through MLX's own forward; a zero cotangent."""
    q = quant_operands((), True, 32, 2, 8, 32, seed=3)
    x = tensor(seeded_ints((1, 32), 120, -2, 3))
    qn = quant_operands((), False, 2, 32, 4, 32, seed=4)
    xn = tensor(seeded_ints((2, 2), 121, -2, 3))
    return [qmm("small/t/fd", x, q, 8, 32, True, fd=True),
            qmm("small/n/fd", xn, qn, 4, 32, False, fd=True),
            qmm("zero_cotangent/n", xn, qn, 4, 32, False, cot=tensor(np.zeros((2, 32))))]


def scenarios() -> list:
    return _flag_grid() + _shapes() + _controls()


# --- fuzz strategy -----------------------------------------------------------------------

def _x_shape(draw, w_batch, M, K) -> tuple:
    """Matrix, vector (2-D W only) or batched x whose batch broadcasts with W's. MLX pairs
    batch axes only when both x and W have them, so a batched W gets a batched x."""
    kinds = ("matrix", "batched", "vector") if not w_batch else ("batched",)
    kind = draw(D.choice(kinds))
    if kind == "matrix":
        return (M, K)
    if kind == "vector":
        return (K,)
    if not w_batch:
        return (draw(D.irange(1, 3)),) + ((draw(D.irange(1, 2)),) if draw(D.irange(0, 2)) == 2 else ()) + (M, K)
    lead = (draw(D.irange(1, 3)),) if draw(D.irange(0, 3)) == 3 else ()
    return lead + D.broadcast_variant(draw, w_batch, allow_drop=False) + (M, K)


def _scales_layout(draw, scales, dtype):
    """Scales contiguous, or a transposed view of column-major storage."""
    if scales.ndim < 2 or not draw(D.choice((False, True))):
        return tensor(scales, dtype=dtype)
    axes = list(range(scales.ndim - 2)) + [scales.ndim - 1, scales.ndim - 2]
    return tensor(np.transpose(scales, axes), dtype=dtype, views=[{"op": "transpose", "axes": axes}])


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    half = dtype != "float32"   # partial sums below 256: |W| <= 2, |x| <= 1, one group of 32
    bits, group, mult = draw(D.choice((4, 8))), draw(D.choice((32, 64))), draw(D.irange(1, 2))
    group, mult = (32, 1) if half else (group, mult)
    transpose = draw(D.choice((True, False)))
    inner, other = group * mult, draw(D.irange(1, 3))
    K, N = (inner, other) if transpose else (other, inner)
    M = draw(D.irange(1, 2 if half else 3))
    w_batch = draw(D.choice(((), (2,), (1,), (2, 1))))
    x_shape = _x_shape(draw, w_batch, M, K)
    seed = draw(D.irange(0, 2**16))
    small = dict(lo=-1, hi=2) if half else {}
    x = (D.tensor(hashed_ints(x_shape, seed, **small), dtype=dtype) if len(x_shape) == 1 else
         D.layout(draw, x_shape[:-2], x_shape[-2:], seed, dtype, **small))
    w_shape = stored_shape(w_batch, transpose, K, N)
    g_shape = w_shape[:-1] + (w_shape[-1] // group,)
    codes = hashed_ints(w_shape, seed + 2, 0, 2 if half else 1 << bits) if seed else np.ones(w_shape)
    pick = np.array(SCALE_SET[1:2] if half else SCALE_SET)
    scales = pick[hashed_ints(g_shape, seed + 3, 0, len(pick)).astype(np.int64)] if seed else np.ones(g_shape)
    scales_t = _scales_layout(draw, scales, dtype)
    biases = hashed_ints(g_shape, seed + 1, **small)
    out_shape = np.broadcast_shapes(x_shape[:-2], w_batch) + ((M,) if len(x_shape) > 1 else ()) + (N,)
    cot, mode = D.cotangent(draw, out_shape, dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(WRT))))
    return D.finish(Scenario(
        name="", op="quantized_matmul",
        operands={"x": x, "codes": integer_tensor(codes), "scales": scales_t,
                  "biases": tensor(biases, dtype=dtype)},
        wrt=wrt, cotangent=cot,
        params={"bits": bits, "group_size": group, "transpose": transpose, "mode": "affine"},
        family="quantized",
        description=f"generated: x {x_shape}, W batch {w_batch}, transpose {transpose}, cotangent {mode}"))


def call_expression(params, names) -> str:
    """The one quantized_matmul call for these params, the codes packed into uint32 words inline."""
    return E.call("mx.quantized_matmul", names["x"], Q.packed_expression(names["codes"], params["bits"]),
                  names["scales"], names["biases"], transpose=E.lit(params.get("transpose", True)),
                  group_size=E.lit(params["group_size"]), bits=E.lit(params["bits"]),
                  mode=E.lit(params.get("mode", "affine")))


OPS = (OpInfo(
    name="quantized_matmul", known_defects=(KnownDefect(VECTOR_X),),
    summary="mx.quantized_matmul (affine): transpose both ways, 4/8 bits, dx, dscales, dbiases",
    operands=("x", "codes", "scales", "biases"), differentiable=WRT, integer_operands=("codes",),
    reference=reference, reference_vjp=reference_vjp, exact=True, multilinear=True,
    rule="W = code * scale + bias per group of W's stored last axis; y = x W^T (transpose) or x W; "
         "dx = g W (or g W^T); dW = g^T x (or x^T g) summed over the batch; "
         "dscale = sum over the group of code * dW, dbias = sum over the group of dW",
    mlx_call=".ops.repro.quantized_matmul:mlx_call", call_expression=call_expression,
    primitives=("QuantizedMatmul", "Broadcast"),
    dtypes=("float32", "float16", "bfloat16"), complex=False, vmap=False,   # no vmap in MLX
    scenarios=scenarios, strategy=fuzz_case),)
