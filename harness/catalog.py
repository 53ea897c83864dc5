"""The scenario catalog: every family the defect report lists, as data.

Each builder returns flag-neutral scenarios; `catalog()` emits every one with
sorted_indices True and False. Values are small integers (or dyadic
fractions) so float32 arithmetic is exact and a mismatch cannot be rounding.

Defect tags name the known defect class a scenario hits on the sorted path:
  left_selection  repeated or omitted left indices (GatherMM/GatherQMM::vjp)
  broadcast_tail  left operand broadcast over the gathered batch
  quantized_left  the gather_qmm form of left_selection
  rank2_segments  index arrays of rank > 1 on the sorted path (found by this suite:
                  the segment count uses scatter_add_axis on unflattened indices)
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import family, opinfo
from .scenario import Scenario, Tensor

FD_STEP = 1.0 / 16
REPORT_FD_STEP = 1.0 / 1024


def T(values, shape, views=()) -> Tensor:
    vals = [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]
    return Tensor(tuple(vals), tuple(shape), "float32", tuple(views))


def ints(shape, seed, lo=-4, hi=5) -> Tensor:
    rng = np.random.RandomState(seed)
    return T(rng.randint(lo, hi, size=shape), shape)


def idx(values) -> Tensor:
    arr = np.asarray(values, dtype=np.int64)
    return Tensor(tuple(int(v) for v in arr.ravel()), tuple(arr.shape), "uint32")


def codes(shape, bits, seed=None) -> Tensor:
    if seed is None:
        vals = np.ones(shape, dtype=np.int64)
    else:
        vals = np.random.RandomState(seed).randint(0, 1 << bits, size=shape)
    return Tensor(tuple(int(v) for v in vals.ravel()), tuple(shape), "uint32")


def gmm(name, a, b, lhs=None, rhs=None, wrt=("a", "b"), tags=(), **kw) -> Scenario:
    return Scenario(name=name, op="gather_mm", operands={"a": a, "b": b}, wrt=tuple(wrt),
                    lhs_indices=None if lhs is None else idx(lhs),
                    rhs_indices=None if rhs is None else idx(rhs),
                    defect_tags=tuple(tags), **kw)


# --- gather_mm families ------------------------------------------------------

def report_example():
    a, b = T([2, 7], (2, 1, 1)), T([3, 5], (2, 1, 1))
    fam = dict(family="left_repeat", tags=("left_selection",))
    return [
        gmm("gmm/report_example/joint", a, b, lhs=[0, 0], fd_step=REPORT_FD_STEP,
            description="report's minimal example: dA must be [8,0], dB [2,2]", **fam),
        gmm("gmm/report_example/wrt_a", a, b, lhs=[0, 0], wrt=("a",), **fam),
        gmm("gmm/report_example/wrt_b", a, b, lhs=[0, 0], wrt=("b",), **fam),
    ]


def left_selections():
    a, b3, b2 = ints((3, 2, 3), 1), ints((3, 3, 4), 2), ints((2, 3, 2), 3)
    sel = dict(tags=("left_selection",), fd_step=FD_STEP)
    return [
        gmm("gmm/left_repeat/matrix", a, b3, lhs=[0, 0, 1], family="left_repeat", **sel),
        gmm("gmm/left_omit/repeat", a, b3, lhs=[0, 2, 2], family="left_omit", **sel),
        gmm("gmm/left_omit/unique", a, b2, lhs=[0, 2], family="left_omit", **sel),
        gmm("gmm/left_repeat/rank2_indices", ints((2, 2, 3), 4), ints((2, 2, 3, 2), 5),
            lhs=[[0, 0], [1, 1]], family="left_repeat", tags=("left_selection",)),
        gmm("gmm/left_identity", a, b3, lhs=[0, 1, 2], family="identity", fd_step=FD_STEP,
            description="identity selection: the sorted fast path is valid here"),
    ]


def right_selections():
    a3, b2, b3 = ints((3, 2, 3), 6), ints((2, 3, 2), 7), ints((3, 3, 2), 8)
    return [
        gmm("gmm/right_repeat", a3, b2, rhs=[0, 0, 1], family="right_sorted", fd_step=FD_STEP),
        gmm("gmm/right_omit", a3, b3, rhs=[0, 2, 2], family="right_sorted", fd_step=FD_STEP),
        gmm("gmm/right_identity", a3, b3, rhs=[0, 1, 2], family="identity"),
        gmm("gmm/right_repeat/rank2_indices", ints((2, 2, 2, 3), 23), ints((2, 3, 2), 24),
            rhs=[[0, 0], [1, 1]], family="right_sorted", tags=("rank2_segments",),
            description="rank-2 right indices on the valid right-sorted fast path"),
        gmm("gmm/right_repeat/wrt_a", a3, b2, rhs=[0, 0, 1], wrt=("a",), family="right_sorted"),
        gmm("gmm/right_repeat/wrt_b", a3, b2, rhs=[0, 0, 1], wrt=("b",), family="right_sorted"),
    ]


def both_explicit():
    a, b = ints((2, 2, 3), 9), ints((2, 3, 2), 10)
    doc = "both index arrays given: the sorted flag has no effect (controls)"
    return [
        gmm("gmm/both_explicit/left_repeat", a, b, lhs=[0, 0], rhs=[0, 1], family="both_explicit",
            description=doc),
        gmm("gmm/both_explicit/left_omit", a, b, lhs=[1, 1, 1], rhs=[0, 0, 1],
            family="both_explicit", description=doc),
    ]


def broadcasting():
    backing = T([2, 101, 202, -9, 13, 55], (3, 2, 1), [{"op": "slice", "index": [[0, 1]]}])
    b = ints((3, 1, 2), 11)
    bcast_view = T([1, -2, 3, 4, 0, -1], (1, 2, 3),
                   [{"op": "broadcast_to", "shape": [3, 2, 3]}])
    return [
        gmm("gmm/broadcast_left/right_sorted", backing, b, rhs=[0, 1, 2], family="broadcast",
            tags=("broadcast_tail",), fd_step=FD_STEP,
            description="left batch of 1 broadcast over three right matrices"),
        gmm("gmm/broadcast_left/wrt_a", backing, b, rhs=[0, 1, 2], wrt=("a",), family="broadcast",
            description="dA alone already takes the scatter path under broadcasting (control)"),
        gmm("gmm/broadcast_right/left_identity", ints((3, 2, 3), 12), ints((1, 3, 2), 13),
            lhs=[0, 1, 2], family="broadcast", fd_step=FD_STEP,
            description="right batch of 1 under an identity left selection (valid fast path)"),
        gmm("gmm/broadcast_right/left_repeat", ints((2, 2, 3), 14), ints((1, 3, 2), 15),
            lhs=[0, 0, 1], family="broadcast", tags=("left_selection", "broadcast_tail"),
            fd_step=FD_STEP),
        gmm("gmm/broadcast_to_view/right_sorted", bcast_view, ints((3, 3, 2), 16), rhs=[0, 1, 2],
            family="broadcast", fd_step=FD_STEP,
            description="left operand is a stride-0 broadcast_to view with a full logical batch"),
    ]


def layouts():
    # A stored as (batch, K, M) and transposed; B a stride-2 window of a larger buffer.
    a_t = T(np.arange(1, 19) % 7 - 3, (3, 3, 2), [{"op": "transpose", "axes": [0, 2, 1]}])
    b_s = T(np.arange(36) % 5 - 2, (3, 6, 2), [{"op": "slice", "index": [[0, 3], [0, 6, 2]]}])
    return [
        gmm("gmm/strided/left_repeat", a_t, b_s, lhs=[0, 0, 2], family="strided",
            tags=("left_selection",), fd_step=FD_STEP),
        gmm("gmm/strided/right_sorted", a_t, b_s, rhs=[0, 1, 1], family="strided",
            fd_step=FD_STEP),
    ]


def cotangents():
    a, b = ints((3, 2, 3), 17), ints((2, 3, 2), 18)
    neg = ints((3, 2, 2), 19, lo=-5, hi=0)
    zero = T(np.zeros(12), (3, 2, 2))
    return [
        gmm("gmm/negative_cotangent/left_repeat", a, ints((3, 3, 2), 20), lhs=[0, 0, 1],
            cotangent=neg, family="cotangent", tags=("left_selection",)),
        gmm("gmm/negative_cotangent/right_sorted", a, b, rhs=[0, 1, 1], cotangent=neg,
            family="cotangent"),
        gmm("gmm/zero_cotangent/right_sorted", a, b, rhs=[0, 1, 1], cotangent=zero,
            family="cotangent", description="zero cotangent: gradients must be exactly zero"),
    ]


def matmul_controls():
    a, b = ints((2, 2, 3), 21), ints((2, 3, 2), 22)
    return [gmm("gmm/matmul_control", a, b, family="matmul", fd_step=FD_STEP,
                description="no index arrays: plain batched matmul")]


def loss_and_hessian():
    return [Scenario(
        name="gmm/pair_loss/hessian", op="gather_mm",
        operands={"a": T([2, 7], (2, 1, 1)), "b": T([3, 5], (2, 1, 1))}, wrt=("a",),
        lhs_indices=idx([0, 0]), objective="pair_loss", fd_step=REPORT_FD_STEP,
        family="loss", defect_tags=("left_selection",),
        description="L = 0.5 (Y0 - Y1)^2: L=8, gradient [8,0], H@1 = [4,0]")]


def backing_tails():
    b = T([3, 5, 7], (3, 1, 1))
    out = []
    for label, tail in (("pos", [101, 202]), ("neg", [-31, 47])):
        a = T([2] + tail, (3, 1, 1), [{"op": "slice", "index": [[0, 1]]}])
        out.append(gmm(f"gmm/backing_tail/{label}", a, b, rhs=[0, 1, 2], wrt=("b",),
                       family="backing_tail", tags=("broadcast_tail",), fd_step=FD_STEP,
                       description=f"logical a=[2] over backing tail {tail}: dB must be [2,2,2]"))
    return out


# --- gather_qmm families -----------------------------------------------------

def qmm(name, x, codes_t, scales, biases, bits, group_size, lhs=None, rhs=None,
        wrt=("x", "scales", "biases"), tags=(), **kw) -> Scenario:
    return Scenario(name=name, op="gather_qmm",
                    operands={"x": x, "codes": codes_t, "scales": scales, "biases": biases},
                    wrt=tuple(wrt), lhs_indices=None if lhs is None else idx(lhs),
                    rhs_indices=None if rhs is None else idx(rhs),
                    params={"bits": bits, "group_size": group_size, "transpose": True,
                            "mode": "affine"},
                    defect_tags=tuple(tags), **kw)


def quantized(bits):
    K = N = 32
    x = T([2.0] * K + [7.0] * K, (2, 1, K))
    ones, sc = codes((2, N, K), bits), T(np.ones(2 * N), (2, N, 1))
    bi = T([2.0] * N + [4.0] * N, (2, N, 1))
    tag = dict(family="quantized", tags=("quantized_left",))
    out = [qmm(f"qmm{bits}/report_example/joint", x, ones, sc, bi, bits, 32, lhs=[0, 0],
               description="codes 1, scales 1, biases 2|4: W exactly 3 and 5", **tag)]
    out += [qmm(f"qmm{bits}/report_example/wrt_{w}", x, ones, sc, bi, bits, 32, lhs=[0, 0],
                wrt=(w,), **tag) for w in ("x", "scales", "biases")]
    # Varied exact codes, two groups along K, small dyadic scales.
    K2, E = 64, 3
    vc = codes((E, 4, K2), bits, seed=bits)
    vs = T(np.random.RandomState(30).choice([0.5, 1.0, 2.0, -1.0], size=E * 4 * 2), (E, 4, 2))
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
            T(np.r_[np.arange(K2) % 3 - 1, np.arange(K2) % 5 + 40], (2, 1, K2),
              [{"op": "slice", "index": [[0, 1]]}]),
            vc, vs, vb, bits, 32, rhs=[0, 1, 2], family="broadcast", tags=("broadcast_tail",)),
    ]
    return out


BUILDERS = (report_example, left_selections, right_selections, both_explicit, broadcasting,
            layouts, cotangents, matmul_controls, loss_and_hessian, backing_tails,
            lambda: quantized(4), lambda: quantized(8), family.catalog_scenarios)


def with_flag(s: Scenario, flag: bool) -> Scenario:
    return dataclasses.replace(s, name=f"{s.name}/{'sorted' if flag else 'unsorted'}",
                               sorted_indices=flag)


def catalog() -> list:
    base = [s for build in BUILDERS for s in build()]
    names = [s.name for s in base]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise ValueError(f"duplicate scenario names: {sorted(dupes)}")
    return [v for s in base for v in variants(s)]


def variants(s: Scenario) -> list:
    """Sorted and unsorted for ops with the flag; ops without it appear once."""
    if not opinfo.get(s.op).has_sorted_flag:
        return [s]
    return [with_flag(s, flag) for flag in (True, False)]
