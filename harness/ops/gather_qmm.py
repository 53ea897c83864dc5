"""gather_qmm (affine): gather_mm over weights dequantized from exact integer codes.

W = code * scale + bias per group of `group_size` along the stored last axis;
the codes are held fixed (no derivative is claimed for them), dx follows the
gather_mm rule and dscale / dbias follow by the chain rule (_support/quantized.py,
which quantized_matmul shares). The index arrays and the sorted_indices flag
are gather_mm's (_support/gather.py); the MLX call is ops/repro/gather_qmm.py.

zero_rows: an x without rows (M = 0) kills the forward (the quantized kernels divide
by K * M); N = 0 and K = 0 kill the VJP instead (zero_size, as gather_mm's).

Two classes found by the transform oracles, tagged by rule (`segmented`, `transpose_false`,
`transpose_second`):
  segmented_second_order  as gather_mm's: on the sorted path dscales and dbiases come
          from a segmented_mm, which has no VJP, so second order raises wherever scales
          or biases are differentiated (sorted variant only);
  transpose_false_scales  GatherQMM::vjp builds dscales and dbiases as if transpose were
          True: with transpose=False (and an index array; without one the call is a
          QuantizedMatmul) they raise "[Unflatten] Cannot unflatten axis -1 ..." where K
          is not a multiple of the group size, else come out transposed. The transpose=True
          op meets it at second order: dx is a gather_qmm with the flag flipped, so the
          VJP of the VJP, wherever x and scales or biases are differentiated, asks that
          call for dscales (float32: where the second-order oracle runs); that form is
          tagged transpose_false_second_order, since only the second-order oracle shows it.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo, tag_by_rules
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, integer_tensor, seeded_ints, tensor
from ._support import expression as E
from ._support import gather as G
from ._support import quantized as Q
from ._support.gather import FD_STEP, ints

# --- float64 reference: the rule in _support/quantized.py -------------------------------

def reference(inp, params):
    return Q.gather_qmm(inp["x"], inp["codes"], inp["scales"], inp["biases"], *G.indices_of(inp),
                        **Q.qargs(params))


def reference_vjp(inp, g, params):
    return Q.gather_qmm_vjp(inp["x"], inp["codes"], inp["scales"], inp["biases"], g, *G.indices_of(inp),
                            **Q.qargs(params))


# --- catalog: exact codes, so W is exact and every sum is an integer ---------------------

def qmm(name, x, codes_t, scales, biases, bits, group_size, lhs=None, rhs=None,
        wrt=("x", "scales", "biases"), tags=(), transpose=True, **kw) -> Scenario:
    return Scenario(name=name, op="gather_qmm",
                    operands={"x": x, "codes": codes_t, "scales": scales, "biases": biases,
                              **G.index_operands(lhs, rhs)},
                    wrt=tuple(wrt),
                    params={"bits": bits, "group_size": group_size, "transpose": transpose, "mode": "affine"},
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
    vb = ints((E, 4, 2), 31)
    xv = ints((3, 2, K2), 32, lo=-2, hi=3)
    out += [
        qmm(f"qmm{bits}/varied/left_repeat", ints((2, 2, K2), 33, lo=-2, hi=3), vc, vs, vb, bits,
            32, lhs=[0, 0, 1], fd_step=FD_STEP, **tag),
        qmm(f"qmm{bits}/varied/right_sorted", xv, vc, vs, vb, bits, 32, rhs=[0, 0, 2],
            family="quantized", fd_step=FD_STEP),
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
    vb = ints((E, N, 3), 52)
    x = ints((3, 2, K), 53, lo=-2, hi=3)
    wide_s = tensor(_widen(np.asarray(vs.values).reshape(E, N, 3)),
                    views=[{"op": "slice", "index": [[0, E], [0, N]]}])
    wide_b = tensor(_widen(np.asarray(vb.values).reshape(E, N, 3)),
                    views=[{"op": "slice", "index": [[0, E], [0, N]]}])
    tokens = tensor(seeded_ints((4, K), 54, lo=-2, hi=3), views=[{"op": "expand_dims", "axis": 1}])
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


def _weights(batch, N, K, seed):
    """Exact affine weights: 4-bit codes, scales +-1 and 1/2, small integer biases; groups of 32."""
    shape, groups = tuple(batch) + (N, K), tuple(batch) + (N, max(K // 32, 0))
    sc = np.random.RandomState(seed).choice([0.5, 1.0, -1.0], size=groups)
    return codes(shape, 4, seed=seed), tensor(sc), ints(groups, seed + 1)


def _grid(name, x, w_batch, N, K, lhs=None, rhs=None, dtype="float32", tags=(), desc=""):
    c, sc, bi = _weights(w_batch, N, K, 80 + len(name))
    as_dt = lambda t: dataclasses.replace(t, dtype=dtype)  # noqa: E731
    return qmm(f"qmm4/grid/{name}", as_dt(x), c, as_dt(sc), as_dt(bi), 4, 32, lhs=lhs, rhs=rhs,
               family="grid", tags=tags, description=desc)


def _right_sorted_rank0() -> list:
    """The right-sorted path's corner a broken fix survived: a 0-d right index and a 2-D x
    (no batch axes), so the VJP takes the segmented path with an unflattened index."""
    return [_grid("rank0/rhs/x2d", ints((1, 32), 96, lo=-1, hi=2), (3,), 2, 32, rhs=2,
                  tags=("no_batch_left", "rank0_segments"),
                  desc="a 0-d right index and a 2-D x (no batch axes), the right-sorted path's corner")]


def _grid_scenarios() -> list:
    """The coverage grid of tests/ops/test_gather_coverage.py: index ranks 0 and 3, operands
    with 0 and 2 batch axes, zero-size M, N and K, and half precision, left or right indexed."""
    x3 = ints((3, 1, 32), 90, lo=-1, hi=2)
    half = "GatherMM runs in float32 only on the CPU, and the VJP of scales and biases calls it"
    return [
        _grid("rank0/lhs", x3, (3,), 2, 32, lhs=1, tags=("quantized_left",), desc="a 0-d left index"),
        _grid("rank0/rhs", x3, (3,), 2, 32, rhs=2, desc="a 0-d right index"),
        _grid("rank3/lhs", x3, (3,), 2, 32, lhs=[[[0, 0, 2]]], tags=("rank2_segments",),
              desc="a (1, 1, 3) left index"),
        _grid("rank3/rhs", x3, (3,), 2, 32, rhs=[[[0, 0, 2]]], tags=("rank2_segments",),
              desc="a (1, 1, 3) right index"),
        _grid("batch0/lhs", ints((1, 32), 91, lo=-1, hi=2), (), 2, 32, lhs=[0, 0], tags=("no_batch_left",),
              desc="x (M, K) and w (N, K) without batch axes, x indexed"),
        _grid("batch0/rhs", ints((1, 32), 92, lo=-1, hi=2), (), 2, 32, rhs=[0, 0], tags=("no_batch_left",),
              desc="x (M, K) and w (N, K) without batch axes, w indexed"),
        _grid("batch2/lhs", ints((2, 2, 1, 32), 93, lo=-1, hi=2), (2, 2), 2, 32, lhs=[[0, 3], [3, 1]],
              tags=("rank2_segments",), desc="both with two batch axes, x indexed"),
        _grid("batch2/rhs", ints((2, 2, 1, 32), 94, lo=-1, hi=2), (2, 2), 2, 32, rhs=[[0, 1], [3, 3]],
              tags=("rank2_segments",), desc="both with two batch axes, w indexed"),
        *(_grid(f"zero_{d}/{side}", ints((2, M, K), 95, lo=-1, hi=2), (2,), N, K, **{side: [0, 1]},
                tags=(ZERO_ROWS if d == "M" else "zero_size",),
                desc=f"{d} = 0: " + ("the quantized kernels divide by K * M (SIGFPE)" if d == "M" else
                                     "the VJP's kernel divides by zero (SIGFPE)"))
          for d, (M, N, K) in (("M", (0, 2, 32)), ("N", (1, 0, 32)), ("K", (1, 2, 0))) for side in ("lhs", "rhs")),
        *(_grid(f"{dt}/{side}", x3, (3,), 2, 32, dtype=dt, **{side: [0, 1, 2]}, tags=("half_gather_mm_cpu",),
                desc=f"{dt}: the forward runs; unsorted, {half}") for dt in ("float16", "bfloat16") for side in ("lhs", "rhs")),
    ]


def _untransposed() -> list:
    """transpose=False: W stored (E, K, N), groups along N. dscales and dbiases are the
    finding (transpose_false_scales); x alone is the control."""
    E, K, N = 2, 4, 32
    c = codes((E, K, N), 4, seed=60)
    sc = tensor(np.random.RandomState(61).choice([0.5, 1.0, -1.0], size=(E, K, 1)))
    bi = ints((E, K, 1), 62)
    x = ints((3, 1, K), 63, lo=-2, hi=3)
    q = dict(family="untransposed", transpose=False)
    return [
        qmm("qmm4/untransposed/left_identity/wrt_scales", ints((2, 1, K), 64, lo=-2, hi=3), c, sc, bi, 4, 32,
            lhs=[0, 1], wrt=("scales",), description="K = 4 is no multiple of the group: the VJP raises", **q),
        qmm("qmm4/untransposed/right_repeat", x, c, sc, bi, 4, 32, rhs=[0, 0, 1], **q),
        qmm("qmm4/untransposed/square_groups", ints((2, 1, 32), 65, lo=-2, hi=3), codes((2, 32, 32), 4, seed=66),
            tensor(np.ones((2, 32, 1))), ints((2, 32, 1), 67), 4, 32, lhs=[1, 0], wrt=("scales", "biases"),
            description="K = N = 32: the shapes agree, the values are the transposed weights' (silent)", **q),
        qmm("qmm4/untransposed/wrt_x", x, c, sc, bi, 4, 32, rhs=[0, 0, 1], wrt=("x",),
            description="dx alone takes the gather_mm rule: the control", **q),
    ]


def scenarios() -> list:
    return [tag_by_rules(s, DEFECTS) for s in _right_sorted_rank0() + _quantized(4) + _quantized(8) + _user_layouts()
            + _grid_scenarios() + _untransposed()]


SEGMENTED, TRANSPOSE_FALSE = "segmented_second_order", "transpose_false_scales"
# M = 0 (no rows of x): the forward's quantized kernels divide x.size() by K * M, a
# crash of its own (the VJP's N = 0 and K = 0 crashes are zero_size, elsewhere).
ZERO_ROWS = "zero_rows"
# The same mistake met at second order by a transpose=True call (a class of its own:
# only the second-order oracle shows it).
TRANSPOSE_SECOND = "transpose_false_second_order"


def _scale_grads(s: Scenario) -> bool:
    """An index array, and scales or biases differentiated: where both transform classes live."""
    return any(k in s.operands for k in (G.LHS, G.RHS)) and bool({"scales", "biases"} & set(s.wrt))


def _second(s: Scenario) -> bool:
    """A plain float32 VJP: where the second-order oracle runs."""
    return s.objective == "vjp" and s.operands["x"].dtype == "float32"


def segmented(s: Scenario) -> bool:
    """SEGMENTED's rule: exactly one index array (the flag acts), scales or biases differentiated."""
    return ((G.LHS in s.operands) != (G.RHS in s.operands)) and _scale_grads(s) and _second(s)


def transpose_false(s: Scenario) -> bool:
    return _scale_grads(s) and not s.params.get("transpose", True)


def transpose_second(s: Scenario) -> bool:
    """The transpose=True call whose VJP of the VJP asks the flipped call for dscales."""
    return _scale_grads(s) and not transpose_false(s) and "x" in s.wrt and _second(s)


# The known defects of MLX 0.32.4 (module text): gather_mm's sorted-path classes in their
# quantized forms, the zero-size crashes, and the transform classes, tagged by rule.
DEFECTS = (
    KnownDefect("quantized_left", when=G.SORTED),
    KnownDefect("broadcast_tail", when=G.SORTED),
    KnownDefect("no_batch_left"),
    KnownDefect("rank2_segments", when=G.SORTED),
    KnownDefect(SEGMENTED, when=G.SORTED, revealed_by="second_order", rule=segmented),
    KnownDefect("half_gather_mm_cpu", when="!" + G.SORTED),
    KnownDefect(TRANSPOSE_FALSE, rule=transpose_false),
    KnownDefect(TRANSPOSE_SECOND, revealed_by="second_order", rule=transpose_second),
    KnownDefect(ZERO_ROWS, fatal=True),
    KnownDefect("zero_size", fatal=True),
    # classes of the first patch's manifest that only the regression corpus holds
    KnownDefect("rank0_segments", unregistered=G.CORPUS_ONLY),
    KnownDefect("sorted_batch_shape", unregistered=G.CORPUS_ONLY),
    KnownDefect("qmm_no_indices_shape", unregistered=G.CORPUS_ONLY),
)


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
    side, srt, out, lhs_shape, rhs_shape = G.index_plan(draw, max_dim=2)
    x_batch, w_batch = G.draw_batches(draw, side, out, lhs_shape, rhs_shape, max_items=3)
    lhs = G.draw_index(draw, lhs_shape, int(np.prod(x_batch, dtype=np.int64)), srt)
    rhs = G.draw_index(draw, rhs_shape, int(np.prod(w_batch, dtype=np.int64)), srt)
    seed = draw(D.irange(0, 2**16))
    small = dict(lo=-1, hi=2) if half else {}
    x = D.layout(draw, x_batch, (M, K), seed, dtype, **small)
    w_shape, g_shape = tuple(w_batch) + (N, K), tuple(w_batch) + (N, K // group)
    top = 2 if half else 1 << bits
    code_vals = hashed_ints(w_shape, seed + 2, 0, top) if seed else np.ones(w_shape)
    pick = np.array(SCALES[:1] if half else SCALES)
    scales = pick[hashed_ints(g_shape, seed + 3, 0, len(pick)).astype(np.int64)] if seed else np.ones(g_shape)
    biases = hashed_ints(g_shape, seed + 1, **small)
    out_batch = G.out_batch_of(x_batch, w_batch, lhs, rhs)
    cot, mode = D.cotangent(draw, out_batch + (M, N), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("x", "scales", "biases")))))
    return D.finish(Scenario(
        name="", op="gather_qmm",
        operands={"x": x, "codes": integer_tensor(code_vals), "scales": tensor(scales, dtype=dtype),
                  "biases": tensor(biases, dtype=dtype), **G.index_operands(lhs, rhs)},
        wrt=wrt, cotangent=cot,
        params={"bits": bits, "group_size": group, "transpose": True, "mode": "affine", G.SORTED: srt},
        family=G.form(side, srt, x_batch, out_batch),
        description=f"generated: side {side}, cotangent {mode}"))


def call_expression(params, names) -> str:
    """The one gather_qmm call for these params: the codes packed into uint32 words inline (the
    call file's pack), index arrays given as uint32. mode only where it is not the default
    "affine": gather_qmm takes mode= from MLX 0.29.0 on, so a reproducer without it also
    tests older releases."""
    index = {k: E.index(names[k], "uint32") for k in (G.LHS, G.RHS) if k in names}
    mode = params.get("mode", "affine")
    return E.call("mx.gather_qmm", names["x"], Q.packed_expression(names["codes"], params["bits"]),
                  names["scales"], names["biases"], **index, transpose=E.lit(params.get("transpose", True)),
                  group_size=E.lit(params["group_size"]), bits=E.lit(params["bits"]),
                  **({} if mode == "affine" else {"mode": E.lit(mode)}),
                  sorted_indices=E.lit(params.get(G.SORTED, False)))


OPS = (OpInfo(
    name="gather_qmm", summary="mx.gather_qmm (affine): gather_mm over quantized weights",
    operands=("x", "codes", "scales", "biases", G.LHS, G.RHS), differentiable=("x", "scales", "biases"),
    integer_operands=("codes", G.LHS, G.RHS), optional_operands=(G.LHS, G.RHS),
    variants=G.FLAG_VARIANTS, equivalent_params={G.SORTED: False},
    known_defects=DEFECTS, first_patch=True,
    reference=reference, reference_vjp=reference_vjp, exact=True, multilinear=True,
    rule="W = code * scale + bias per group along K; Y_q = x[i_q] W[j_q]^T; dx by the gather_mm rule; "
         "dscale = sum over the group of code * dW, dbias = sum over the group of dW",
    mlx_call=".ops.repro.gather_qmm:mlx_call", call_expression=call_expression,
    # Coverage, MLX 0.32.4 on the CPU: float16/bfloat16 forwards run, and the sorted path's VJP; the
    # unsorted VJP for scales/biases raises there (its GatherMM is float32-only); GatherQMM has no vmap.
    primitives=("GatherQMM", "QuantizedMatmul", "Broadcast"),
    dtypes=("float32", "float16", "bfloat16"), complex=False, vmap=False,
    scenarios=scenarios, strategy=fuzz_case, fuzz_weight=5, native=True),)
