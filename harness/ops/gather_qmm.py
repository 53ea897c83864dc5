"""gather_qmm (affine): gather_mm over weights dequantized from exact integer codes.

W = code * scale + bias per group of `group_size` along the stored last axis;
the codes are held fixed (no derivative is claimed for them), dx follows the
gather_mm rule and dscale / dbias follow by the chain rule.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, integer_tensor, tensor
from . import gather_mm as mm

# --- float64 reference -------------------------------------------------------------------


def dequantize(codes, scales, biases, group_size) -> np.ndarray:
    """Float64 weights from integer codes. Groups run along the stored last axis, as
    MLX quantizes: K when transposed (E, N, K), N otherwise (E, K, N)."""
    codes = np.asarray(codes, dtype=np.float64)
    C, S, B = mm.mats(codes), mm.mats(scales), mm.mats(biases)
    W = [[[C[e][r][c] * S[e][r][c // group_size] + B[e][r][c // group_size]
           for c in range(codes.shape[-1])] for r in range(codes.shape[-2])] for e in range(len(C))]
    return np.array(W, dtype=np.float64).reshape(codes.shape)


def as_kn(w, transpose) -> np.ndarray:
    """Weights as (E, K, N): the transposed layout stores (E, N, K)."""
    return np.swapaxes(w, -1, -2) if transpose else w


def gather_qmm(x, codes, scales, biases, lhs=None, rhs=None, group_size=64, transpose=True):
    w = dequantize(codes, scales, biases, group_size)
    return mm.gather_mm(x, as_kn(w, transpose), lhs, rhs)


def gather_qmm_vjp(x, codes, scales, biases, g, lhs=None, rhs=None, group_size=64,
                   transpose=True) -> dict:
    """dx by the gather_mm rule; dscale = sum_group code * dW, dbias = sum_group dW."""
    w = dequantize(codes, scales, biases, group_size)
    grads = mm.gather_mm_vjp(x, as_kn(w, transpose), g, lhs, rhs)
    dW = mm.mats(as_kn(grads["b"], transpose))   # back to the stored layout
    C = mm.mats(np.asarray(codes, dtype=np.float64))
    ds, db = np.zeros(np.shape(scales)), np.zeros(np.shape(biases))
    ds_m, db_m = ds.reshape((-1,) + ds.shape[-2:]), db.reshape((-1,) + db.shape[-2:])
    for e in range(len(C)):
        for r in range(len(C[e])):
            for c in range(len(C[e][r])):
                ds_m[e, r, c // group_size] += C[e][r][c] * dW[e][r][c]
                db_m[e, r, c // group_size] += dW[e][r][c]
    return {"x": grads["a"], "scales": ds, "biases": db}


def _qargs(params):
    return {"group_size": params["group_size"], "transpose": params.get("transpose", True)}


def reference(inp, lhs, rhs, params):
    return gather_qmm(inp["x"], inp["codes"], inp["scales"], inp["biases"], lhs, rhs, **_qargs(params))


def reference_vjp(inp, g, lhs, rhs, params):
    return gather_qmm_vjp(inp["x"], inp["codes"], inp["scales"], inp["biases"], g, lhs, rhs,
                          **_qargs(params))


# --- the MLX call ------------------------------------------------------------------------

def mlx_call(ops, lhs, rhs, sorted_indices, params):
    import mlx.core as mx

    from ..core import quant
    w = mx.array(quant.pack(ops["codes"], params["bits"]))
    return mx.gather_qmm(ops["x"], w, ops["scales"], ops["biases"], lhs_indices=lhs,
                         rhs_indices=rhs, transpose=params.get("transpose", True),
                         group_size=params["group_size"], bits=params["bits"],
                         mode=params.get("mode", "affine"), sorted_indices=sorted_indices)


# --- catalog: exact codes, so W is exact and every sum is an integer ---------------------

def qmm(name, x, codes_t, scales, biases, bits, group_size, lhs=None, rhs=None,
        wrt=("x", "scales", "biases"), tags=(), **kw) -> Scenario:
    return Scenario(name=name, op="gather_qmm",
                    operands={"x": x, "codes": codes_t, "scales": scales, "biases": biases},
                    wrt=tuple(wrt), lhs_indices=None if lhs is None else D.index_tensor(lhs),
                    rhs_indices=None if rhs is None else D.index_tensor(rhs),
                    params={"bits": bits, "group_size": group_size, "transpose": True,
                            "mode": "affine"},
                    defect_tags=tuple(tags), **kw)


def codes(shape, bits, seed=None):
    if seed is None:
        return integer_tensor(np.ones(shape, dtype=np.int64))
    return integer_tensor(np.random.RandomState(seed).randint(0, 1 << bits, size=shape))


def _quantized(bits):
    K = N = 32
    x = tensor([2.0] * K + [7.0] * K, (2, 1, K))
    ones, sc = codes((2, N, K), bits), tensor(np.ones(2 * N), (2, N, 1))
    bi = tensor([2.0] * N + [4.0] * N, (2, N, 1))
    tag = dict(family="quantized", tags=("quantized_left",))
    out = [qmm(f"qmm{bits}/report_example/joint", x, ones, sc, bi, bits, 32, lhs=[0, 0],
               description="codes 1, scales 1, biases 2|4: W exactly 3 and 5", **tag)]
    out += [qmm(f"qmm{bits}/report_example/wrt_{w}", x, ones, sc, bi, bits, 32, lhs=[0, 0],
                wrt=(w,), **tag) for w in ("x", "scales", "biases")]
    # Varied exact codes, two groups along K, small dyadic scales.
    K2, E = 64, 3
    vc = codes((E, 4, K2), bits, seed=bits)
    vs = tensor(np.random.RandomState(30).choice([0.5, 1.0, 2.0, -1.0], size=E * 4 * 2), (E, 4, 2))
    vb = mm.ints((E, 4, 2), 31)
    xv = mm.ints((3, 2, K2), 32, lo=-2, hi=3)
    out += [
        qmm(f"qmm{bits}/varied/left_repeat", mm.ints((2, 2, K2), 33, lo=-2, hi=3), vc, vs, vb, bits,
            32, lhs=[0, 0, 1], fd_step=mm.FD_STEP, **tag),
        qmm(f"qmm{bits}/varied/right_sorted", xv, vc, vs, vb, bits, 32, rhs=[0, 0, 2],
            family="quantized", fd_step=mm.FD_STEP),
        qmm(f"qmm{bits}/varied/left_identity", xv, vc, vs, vb, bits, 32, lhs=[0, 1, 2],
            family="quantized"),
        qmm(f"qmm{bits}/broadcast_left/right_sorted",
            tensor(np.r_[np.arange(K2) % 3 - 1, np.arange(K2) % 5 + 40], (2, 1, K2),
                   views=[{"op": "slice", "index": [[0, 1]]}]),
            vc, vs, vb, bits, 32, rhs=[0, 1, 2], family="broadcast", tags=("broadcast_tail",)),
    ]
    return out


def _user_layouts():
    """K not a multiple of the kernels' tile (96 = 3 groups of 32), row slices of
    scales and biases (a window onto wider storage), and x[:, None, :] tokens.
    (The packed codes themselves are always contiguous here: integer operands are
    packed from their logical values.)"""
    K, E, N, bits = 96, 3, 4, 4
    vc = codes((E, N, K), bits, seed=50)
    vs = tensor(np.random.RandomState(51).choice([0.5, 1.0, -1.0], size=E * N * 3), (E, N, 3))
    vb = mm.ints((E, N, 3), 52)
    x = mm.ints((3, 2, K), 53, lo=-2, hi=3)
    wide_s = tensor(_widen(np.asarray(vs.values).reshape(E, N, 3)),
                    views=[{"op": "slice", "index": [[0, E], [0, N]]}])
    wide_b = tensor(_widen(np.asarray(vb.values).reshape(E, N, 3)),
                    views=[{"op": "slice", "index": [[0, E], [0, N]]}])
    tokens = tensor(mm.seeded_ints((4, K), 54, lo=-2, hi=3), views=[{"op": "expand_dims", "axis": 1}])
    q = dict(family="layout")
    return [
        qmm("qmm4/k96/right_sorted", x, vc, vs, vb, bits, 32, rhs=[0, 0, 2], **q),
        qmm("qmm4/k96/left_repeat", x, vc, vs, vb, bits, 32, lhs=[0, 0, 2], tags=("quantized_left",), **q),
        qmm("qmm4/row_slice/right_sorted", x, vc, wide_s, wide_b, bits, 32, rhs=[0, 1, 2],
            description="scales and biases are the first N rows of wider storage", **q),
        qmm("qmm4/expand_dims/right_sorted", tokens, vc, vs, vb, bits, 32, rhs=[0, 1, 1, 2], **q),
    ]


def _widen(a, extra=2, fill=9.0):
    """Storage with `extra` more rows (axis -2) of a distinctive value after a."""
    pad = np.full(a.shape[:-2] + (extra, a.shape[-1]), fill)
    return np.concatenate([a, pad], axis=-2)


def scenarios() -> list:
    return _quantized(4) + _quantized(8) + _user_layouts()


# --- fuzz strategy -----------------------------------------------------------------------

SCALES = (1.0, 0.5, 2.0, -1.0)


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    """Affine quantized weights with exact codes: W = code * scale + bias."""
    dtype = draw(D.choice(dtypes))
    # Half precision accumulates in its own width: keep |W| <= 2, |x| <= 1 and
    # K = 32 so every partial sum stays an integer below 256 (exact in bfloat16).
    half = dtype != "float32"
    # Draw the same choices whatever the dtype, so that the shrinker can move a
    # counterexample to float32 without reinterpreting the rest of the draws.
    bits, group, mult = draw(D.choice((4, 8))), draw(D.choice((32, 64, 128))), draw(D.irange(1, 2))
    group, mult = (32, 1) if half else (group, mult)
    K = group * mult
    M, N = draw(D.irange(1, 2)), draw(D.irange(1, 3))
    side, srt, out, lhs_shape, rhs_shape = mm.index_plan(draw, max_dim=2)
    x_batch, w_batch = mm.draw_batches(draw, side, out, lhs_shape, rhs_shape, max_items=3)
    lhs = mm.draw_indices(draw, lhs_shape, int(np.prod(x_batch, dtype=np.int64)), srt)
    rhs = mm.draw_indices(draw, rhs_shape, int(np.prod(w_batch, dtype=np.int64)), srt)
    seed = draw(D.irange(0, 2**16))
    small = dict(lo=-1, hi=2) if half else {}
    x = D.layout(draw, x_batch, (M, K), seed, dtype, **small)
    w_shape, g_shape = tuple(w_batch) + (N, K), tuple(w_batch) + (N, K // group)
    top = 2 if half else 1 << bits
    code_vals = hashed_ints(w_shape, seed + 2, 0, top) if seed else np.ones(w_shape)
    pick = np.array(SCALES[:1] if half else SCALES)
    scales = pick[hashed_ints(g_shape, seed + 3, 0, len(pick)).astype(np.int64)] if seed else np.ones(g_shape)
    biases = hashed_ints(g_shape, seed + 1, **small)
    out_batch = mm.out_batch_of(x_batch, w_batch, lhs, rhs)
    cot, mode = D.cotangent(draw, out_batch + (M, N), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("x", "scales", "biases")))))
    return D.finish(Scenario(
        name="", op="gather_qmm",
        operands={"x": x, "codes": integer_tensor(code_vals), "scales": tensor(scales, dtype=dtype),
                  "biases": tensor(biases, dtype=dtype)},
        wrt=wrt, lhs_indices=lhs, rhs_indices=rhs, sorted_indices=srt, cotangent=cot,
        params={"bits": bits, "group_size": group, "transpose": True, "mode": "affine"},
        family=mm.form(side, srt, x_batch, out_batch),
        description=f"generated: side {side}, cotangent {mode}"))


# --- reproducer snippet ------------------------------------------------------------------

REPRO = mm.REPRO_MATMUL + r'''
INTEGER_OPERANDS = ("codes",)


def weights(inp, params):
    """W = code * scale + bias per group of group_size along K; stored (E, N, K)."""
    gs = params["group_size"]
    codes, s, b = inp["codes"], inp["scales"], inp["biases"]
    col = np.arange(codes.shape[-1]) // gs
    return codes * s[..., col] + b[..., col]


def ref_forward(inp, lhs, rhs, params):
    return mm_forward(inp["x"], np.swapaxes(weights(inp, params), -1, -2), lhs, rhs)


def ref_vjp(inp, g, lhs, rhs, params):
    w_kn = np.swapaxes(weights(inp, params), -1, -2)
    dx, dw = mm_vjp(inp["x"], w_kn, g, lhs, rhs)
    dw = np.swapaxes(dw, -1, -2)   # back to the stored (E, N, K) layout
    gs, codes = params["group_size"], inp["codes"]
    ds, db = np.zeros(inp["scales"].shape), np.zeros(inp["biases"].shape)
    for k in range(codes.shape[-1]):
        ds[..., k // gs] += codes[..., k] * dw[..., k]
        db[..., k // gs] += dw[..., k]
    return {"x": dx, "scales": ds, "biases": db}


def pack(codes, bits):
    """Code t of a uint32 word sits at bits [t*bits, (t+1)*bits)."""
    per = 32 // bits
    c = codes.astype(np.uint64).reshape(codes.shape[:-1] + (-1, per))
    shifts = np.arange(per, dtype=np.uint64) * np.uint64(bits)
    return np.bitwise_or.reduce(c << shifts, axis=-1).astype(np.uint32)


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    w = mx.array(pack(ops["codes"], params["bits"]))
    return mx.gather_qmm(ops["x"], w, ops["scales"], ops["biases"], lhs_indices=lhs,
                         rhs_indices=rhs, transpose=params.get("transpose", True),
                         group_size=params["group_size"], bits=params["bits"],
                         mode=params.get("mode", "affine"), sorted_indices=sorted_flag)
'''


OPS = (OpInfo(
    name="gather_qmm", summary="mx.gather_qmm (affine): gather_mm over quantized weights",
    operands=("x", "codes", "scales", "biases"), differentiable=("x", "scales", "biases"),
    integer_operands=("codes",), index_arrays=("lhs", "rhs"), has_sorted_flag=True,
    reference=reference, reference_vjp=reference_vjp, exact=True, multilinear=True,
    mlx_call=".ops.gather_qmm:mlx_call",
    scenarios=scenarios, strategy=fuzz_case, fuzz_weight=5, repro_source=REPRO, native=True),)
