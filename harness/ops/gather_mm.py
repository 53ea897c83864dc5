"""gather_mm: Y_q = A[i_q] @ B[j_q], and the defect that started this project.

Everything about the op in one place: the float64 reference and its VJP (the
rule itself lives in _support/gather.py, which gather_qmm shares), the catalog
scenarios (every family of the defect report, each run with sorted_indices True
and False: the record's variants), the fuzz strategy; the MLX call is
ops/repro/gather_mm.py.

Defect tags name the known defect class a scenario hits on the sorted path:
  left_selection  repeated or omitted left indices (GatherMM/GatherQMM::vjp)
  broadcast_tail  left operand broadcast over the gathered batch
  quantized_left  the gather_qmm form of left_selection
  rank2_segments  index arrays of rank > 1 on the sorted path (found by this suite:
                  the segment count uses scatter_add_axis on unflattened indices)
  segmented_second_order  second order on the sorted path wherever b is differentiated:
                  dB is a segmented_mm there, and SegmentedMM has no VJP, so the VJP of the
                  VJP raises "[Primitive::vjp] Not implemented for SegmentedMM" (found by the
                  second-order oracle; tagged by rule, `segmented`)
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo, tag_by_rules
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints, tensor
from ._support import gather as G
from ._support.gather import FD_STEP, ints

# --- float64 reference: the rule in _support/gather.py -----------------------------------

def reference(inp, params):
    return G.gather_mm(inp["a"], inp["b"], *G.indices_of(inp))


def reference_vjp(inp, g, params):
    return G.gather_mm_vjp(inp["a"], inp["b"], g, *G.indices_of(inp))


# --- catalog scenarios: small integers, so float32 arithmetic is exact ------------------

REPORT_FD_STEP = 1.0 / 1024


def gmm(name, a, b, lhs=None, rhs=None, wrt=("a", "b"), tags=(), **kw) -> Scenario:
    return Scenario(name=name, op="gather_mm", operands={"a": a, "b": b, **G.index_operands(lhs, rhs)},
                    wrt=tuple(wrt), defect_tags=tuple(tags), **kw)


def _report_example():
    a, b = tensor([2, 7], (2, 1, 1)), tensor([3, 5], (2, 1, 1))
    fam = dict(family="left_repeat", tags=("left_selection",))
    return [
        gmm("gmm/report_example/joint", a, b, lhs=[0, 0], fd_step=REPORT_FD_STEP,
            description="report's minimal example: dA must be [8,0], dB [2,2]", **fam),
        gmm("gmm/report_example/wrt_a", a, b, lhs=[0, 0], wrt=("a",), **fam),
        gmm("gmm/report_example/wrt_b", a, b, lhs=[0, 0], wrt=("b",), **fam),
    ]


def _left_selections():
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


def _right_selections():
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


def _both_explicit():
    a, b = ints((2, 2, 3), 9), ints((2, 3, 2), 10)
    doc = "both index arrays given: the sorted flag has no effect (controls)"
    return [
        gmm("gmm/both_explicit/left_repeat", a, b, lhs=[0, 0], rhs=[0, 1], family="both_explicit",
            description=doc),
        gmm("gmm/both_explicit/left_omit", a, b, lhs=[1, 1, 1], rhs=[0, 0, 1],
            family="both_explicit", description=doc),
    ]


def _broadcasting():
    backing = tensor([2, 101, 202, -9, 13, 55], (3, 2, 1), views=[{"op": "slice", "index": [[0, 1]]}])
    b = ints((3, 1, 2), 11)
    bcast_view = tensor([1, -2, 3, 4, 0, -1], (1, 2, 3),
                        views=[{"op": "broadcast_to", "shape": [3, 2, 3]}])
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


def _layouts():
    # A stored as (batch, K, M) and transposed; B a stride-2 window of a larger buffer.
    a_t = tensor(np.arange(1, 19) % 7 - 3, (3, 3, 2), views=[{"op": "transpose", "axes": [0, 2, 1]}])
    b_s = tensor(np.arange(36) % 5 - 2, (3, 6, 2), views=[{"op": "slice", "index": [[0, 3], [0, 6, 2]]}])
    return [
        gmm("gmm/strided/left_repeat", a_t, b_s, lhs=[0, 0, 2], family="strided",
            tags=("left_selection",), fd_step=FD_STEP),
        gmm("gmm/strided/right_sorted", a_t, b_s, rhs=[0, 1, 1], family="strided",
            fd_step=FD_STEP),
    ]


def _cotangents():
    a, b = ints((3, 2, 3), 17), ints((2, 3, 2), 18)
    neg = ints((3, 2, 2), 19, lo=-5, hi=0)
    zero = tensor(np.zeros((3, 2, 2)))
    return [
        gmm("gmm/negative_cotangent/left_repeat", a, ints((3, 3, 2), 20), lhs=[0, 0, 1],
            cotangent=neg, family="cotangent", tags=("left_selection",)),
        gmm("gmm/negative_cotangent/right_sorted", a, b, rhs=[0, 1, 1], cotangent=neg,
            family="cotangent"),
        gmm("gmm/zero_cotangent/right_sorted", a, b, rhs=[0, 1, 1], cotangent=zero,
            family="cotangent", description="zero cotangent: gradients must be exactly zero"),
    ]


def _matmul_controls():
    a, b = ints((2, 2, 3), 21), ints((2, 3, 2), 22)
    return [gmm("gmm/matmul_control", a, b, family="matmul", fd_step=FD_STEP,
                description="no index arrays: plain batched matmul")]


def _loss_and_hessian():
    return [gmm("gmm/pair_loss/hessian", tensor([2, 7], (2, 1, 1)), tensor([3, 5], (2, 1, 1)),
                lhs=[0, 0], wrt=("a",), tags=("left_selection",), objective="pair_loss",
                fd_step=REPORT_FD_STEP, family="loss",
                description="L = 0.5 (Y0 - Y1)^2: L=8, gradient [8,0], H@1 = [4,0]")]


def _backing_tails():
    b = tensor([3, 5, 7], (3, 1, 1))
    out = []
    for label, tail in (("pos", [101, 202]), ("neg", [-31, 47])):
        a = tensor([2] + tail, (3, 1, 1), views=[{"op": "slice", "index": [[0, 1]]}])
        out.append(gmm(f"gmm/backing_tail/{label}", a, b, rhs=[0, 1, 2], wrt=("b",),
                       family="backing_tail", tags=("broadcast_tail",), fd_step=FD_STEP,
                       description=f"logical a=[2] over backing tail {tail}: dB must be [2,2,2]"))
    return out


def _user_layouts():
    """Layouts behind recent reports of silent wrong results on the sorted path: a
    singleton axis inserted by expand_dims (x[:, None, :], MoE tokens as 1-row
    matrices), and a rank-3 transpose that moves a batch axis."""
    tokens = tensor(seeded_ints((4, 3), 40), views=[{"op": "expand_dims", "axis": 1}])   # (4, 1, 3)
    t3 = tensor(seeded_ints((2, 3, 3), 41), views=[{"op": "transpose", "axes": [1, 0, 2]}])  # (3, 2, 3)
    return [
        gmm("gmm/expand_dims/right_sorted", tokens, ints((2, 3, 2), 42), rhs=[0, 0, 1, 1],
            family="layout", fd_step=FD_STEP,
            description="x[:, None, :] as the left operand, tokens sorted by expert (MoE)"),
        gmm("gmm/expand_dims/left_repeat", tokens, ints((3, 3, 2), 43), lhs=[0, 0, 3],
            family="layout", tags=("left_selection",)),
        gmm("gmm/transpose3/right_sorted", t3, ints((2, 3, 2), 44), rhs=[0, 1, 1], family="layout",
            fd_step=FD_STEP, description="left operand transposed across its batch and row axes"),
        gmm("gmm/transpose3/left_repeat", t3, ints((3, 3, 2), 45), lhs=[0, 0, 2], family="layout",
            tags=("left_selection",)),
    ]


def _grid_ranks():
    """Index arrays of rank 0 and 3 on either side (ranks 1 and 2 appear above)."""
    a, b = ints((3, 2, 3), 60), ints((3, 3, 2), 61)
    rank3 = [[[0, 0, 2]]]   # (1, 1, 3): broadcasts against the other side's default (3,)
    return [
        gmm("gmm/grid/rank0/lhs", a, b, lhs=1, family="grid", tags=("left_selection",),
            description="a 0-d left index, broadcast over the right batch: left row 1 three times"),
        gmm("gmm/grid/rank0/rhs", a, b, rhs=2, family="grid", description="a 0-d right index"),
        gmm("gmm/grid/rank0/rhs/left2d", ints((2, 3), 74), b, rhs=2, family="grid",
            tags=("no_batch_left", "rank0_segments"),
            description="a 0-d right index and a 2-D left operand (no batch axes): on the right-sorted "
                        "path the VJP must give dA of shape (M, K) and dB nonzero in row 2 only"),
        gmm("gmm/grid/rank3/lhs", a, b, lhs=rank3, family="grid", tags=("rank2_segments",),
            description="a (1, 1, 3) left index"),
        gmm("gmm/grid/rank3/rhs", a, b, rhs=rank3, family="grid", tags=("rank2_segments",),
            description="a (1, 1, 3) right index"),
    ]


def _grid_batches():
    """Operands with 0 and 2 batch axes, with and without their index array (1 appears above)."""
    return [
        gmm("gmm/grid/batch0/lhs", ints((2, 3), 62), ints((3, 2), 63), lhs=[0, 0], family="grid",
            tags=("no_batch_left",), description="left (M, K) without batch axes, indexed; right (K, N) "
                                                  "defaulted: the VJP raises in flatten"),
        gmm("gmm/grid/batch0/rhs", ints((2, 3), 64), ints((3, 2), 65), rhs=[0, 0], family="grid",
            tags=("no_batch_left",), description="right (K, N) without batch axes, indexed; left (M, K) "
                                                  "defaulted: the VJP raises in flatten"),
        gmm("gmm/grid/batch2/lhs", ints((2, 2, 2, 3), 66), ints((2, 2, 3, 2), 67), lhs=[[0, 3], [3, 1]],
            family="grid", tags=("rank2_segments",),
            description="both operands with two batch axes; left indexed, right defaulted"),
        gmm("gmm/grid/batch2/rhs", ints((2, 2, 2, 3), 68), ints((2, 2, 3, 2), 69), rhs=[[0, 1], [3, 3]],
            family="grid", tags=("rank2_segments",),
            description="both operands with two batch axes; right indexed, left defaulted"),
    ]


def _grid_zero_sizes():
    """M, N or K zero, left or right indexed: the rule gives empty or zero gradients."""
    out = []
    for dim in "MNK":
        M, K, N = (0 if d == dim else 2 for d in "MKN")
        for side in ("lhs", "rhs"):
            tag = "zero_size_unsorted" if dim == "M" else "zero_size"
            out.append(gmm(f"gmm/grid/zero_{dim}/{side}", ints((2, M, K), 70), ints((2, K, N), 71),
                           **{side: [0, 1]}, family="grid", tags=(tag,),
                           description=f"{dim} = 0: the VJP's kernel divides by zero (SIGFPE)"))
    return out


def scenarios() -> list:
    return [tag_by_rules(s, DEFECTS) for build in (_report_example, _left_selections, _right_selections,
                                               _both_explicit, _broadcasting, _layouts, _cotangents,
                                               _matmul_controls, _loss_and_hessian, _backing_tails,
                                               _user_layouts, _grid_ranks, _grid_batches, _grid_zero_sizes)
            for s in build()]


SEGMENTED = "segmented_second_order"


def segmented(s: Scenario) -> bool:
    """SEGMENTED's rule: the flag acts (exactly one index array) and b is differentiated, in a
    plain float32 VJP (where the second-order oracle runs); the class bites on the sorted
    variant only (its KnownDefect's `when`)."""
    one_index = (G.LHS in s.operands) != (G.RHS in s.operands)
    return one_index and "b" in s.wrt and s.objective == "vjp" and s.operands["a"].dtype == "float32"


# The known defects of MLX 0.32.4 (module text): the sorted path's classes, the two
# zero-size crashes (SIGFPE in the kernel), and the second-order class, tagged by rule.
DEFECTS = (
    KnownDefect("left_selection", when=G.SORTED),
    KnownDefect("broadcast_tail", when=G.SORTED),
    KnownDefect("no_batch_left"),
    KnownDefect("rank2_segments", when=G.SORTED),
    KnownDefect(SEGMENTED, when=G.SORTED, revealed_by="second_order", rule=segmented),
    KnownDefect("zero_size", fatal=True),
    KnownDefect("zero_size_unsorted", when="!" + G.SORTED, fatal=True),
    # classes of the first patch's manifest that only the regression corpus holds
    KnownDefect("rank0_segments", unregistered=G.CORPUS_ONLY),
    KnownDefect("sorted_batch_shape", unregistered=G.CORPUS_ONLY),
    KnownDefect("left_selection_blas", unregistered=G.CORPUS_ONLY),
)


def error_inputs() -> list:
    """Calls MLX refuses: GatherMM runs in float32 only on the CPU ("[GatherMM::eval]
    Currently only supports float32"); the VJP must refuse them too."""
    a, b = ints((3, 2, 3), 72), ints((3, 3, 2), 73)
    half = lambda t, dt: dataclasses.replace(t, dtype=dt)  # noqa: E731
    return [gmm(f"gmm/refused/{dt}/{side}", half(a, dt), half(b, dt), **{side: [0, 0, 1]}, family="grid",
                description=f"{dt} operands: the CPU kernel takes float32 only")
            for dt in ("float16", "bfloat16") for side in ("lhs", "rhs")]


# --- fuzz strategy: index arrays of every rank, sides, broadcasting, layouts -------------

def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    side, srt, out, lhs_shape, rhs_shape = G.index_plan(draw)
    # A left operand shared by every right index half the time it has no index array: the
    # broadcast_tail class, whose form needs it, is as likely as a plain right-sorted call.
    a_batch, b_batch = G.draw_batches(draw, side, out, lhs_shape, rhs_shape, shared_left=True)
    M, K, N = draw(D.irange(1, 4)), draw(D.irange(1, 4)), draw(D.irange(1, 4))
    lhs = G.draw_index(draw, lhs_shape, int(np.prod(a_batch, dtype=np.int64)), srt)
    rhs = G.draw_index(draw, rhs_shape, int(np.prod(b_batch, dtype=np.int64)), srt)
    seeds = draw(D.irange(0, 2**16)), draw(D.irange(0, 2**16))
    a = D.layout(draw, a_batch, (M, K), seeds[0], dtype)
    b = D.layout(draw, b_batch, (K, N), seeds[1], dtype)
    out_batch = G.out_batch_of(a_batch, b_batch, lhs, rhs)
    cot, mode = D.cotangent(draw, out_batch + (M, N), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "b")))))
    return D.finish(Scenario(
        name="", op="gather_mm", operands={"a": a, "b": b, **G.index_operands(lhs, rhs)}, wrt=wrt,
        params={G.SORTED: srt}, cotangent=cot, family=G.form(side, srt, a_batch, out_batch),
        description=f"generated: side {side}, cotangent {mode}"))


def call_expression(params, names) -> str:
    """The one gather_mm call for these params (index arrays given as uint32)."""
    index = "".join(f", {k}=mx.array({names[k]}, dtype=mx.uint32)" for k in (G.LHS, G.RHS) if k in names)
    return f"mx.gather_mm({names['a']}, {names['b']}{index}, sorted_indices={params.get(G.SORTED, False)})"


OPS = (OpInfo(
    name="gather_mm", summary="mx.gather_mm: batched matmul over gathered left and right matrices",
    operands=("a", "b", G.LHS, G.RHS), differentiable=("a", "b"), integer_operands=(G.LHS, G.RHS),
    optional_operands=(G.LHS, G.RHS), variants=G.FLAG_VARIANTS, equivalent_params={G.SORTED: False},
    known_defects=DEFECTS, first_patch=True,
    reference=reference, reference_vjp=reference_vjp, exact=True, multilinear=True,
    rule="Y_q = A[i_q] B[j_q]; dA[l] = sum over q with i_q = l of G_q B[j_q]^T; "
         "dB[l] = sum over q with j_q = l of A[i_q]^T G_q",
    mlx_call=".ops.repro.gather_mm:mlx_call", call_expression=call_expression,
    # MLX 0.32.4 on the CPU: GatherMM is float32-only (float16/bfloat16 raise in the forward) and has no
    # vmap; without index arrays the call is a plain Matmul.
    primitives=("GatherMM", "Matmul", "Broadcast", "Flatten", "Unflatten"), dtypes=("float32",), complex=False,
    vmap=False,
    scenarios=scenarios, error_inputs=error_inputs, strategy=fuzz_case, fuzz_weight=10, native=True),)
