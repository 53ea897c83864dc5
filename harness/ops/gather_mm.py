"""gather_mm: Y_q = A[i_q] @ B[j_q], and the defect that started this project.

Everything about the op in one place: the float64 reference and its VJP, the
MLX call, the catalog scenarios (every family of the defect report, each run
with sorted_indices True and False), the fuzz strategy and the reproducer
snippet. gather_qmm builds on the reference and the strategy helpers here.

Defect tags name the known defect class a scenario hits on the sorted path:
  left_selection  repeated or omitted left indices (GatherMM/GatherQMM::vjp)
  broadcast_tail  left operand broadcast over the gathered batch
  quantized_left  the gather_qmm form of left_selection
  rank2_segments  index arrays of rank > 1 on the sorted path (found by this suite:
                  the segment count uses scatter_add_axis on unflattened indices)
"""
from __future__ import annotations

import math

import numpy as np

from ..core import draw as D
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import index_tensor, seeded_ints, tensor

# --- float64 reference: plain loops over nested lists, numpy for shapes only ---------


def default_indices(batch_shape) -> np.ndarray:
    """MLX's default when an index array is omitted: arange over the operand's batch."""
    return np.arange(math.prod(batch_shape), dtype=np.int64).reshape(tuple(batch_shape))


def resolve_indices(a_batch, b_batch, lhs, rhs):
    """Broadcast the (possibly defaulted) index arrays; return flat lists and batch shape."""
    lhs = default_indices(a_batch) if lhs is None else np.asarray(lhs, dtype=np.int64)
    rhs = default_indices(b_batch) if rhs is None else np.asarray(rhs, dtype=np.int64)
    lhs_b, rhs_b = np.broadcast_arrays(lhs, rhs)
    for name, idx, bound in (("lhs", lhs_b, math.prod(a_batch)), ("rhs", rhs_b, math.prod(b_batch))):
        if idx.size and (idx.min() < 0 or idx.max() >= bound):
            raise ValueError(f"{name} index out of range [0, {bound})")
    return [int(v) for v in lhs_b.ravel()], [int(v) for v in rhs_b.ravel()], lhs_b.shape


def mats(arr) -> list:
    """(..., R, C) -> list of R x C nested lists (flattened batch)."""
    arr = np.asarray(arr, dtype=np.float64)
    return arr.reshape((-1,) + arr.shape[-2:]).tolist()


def _zeros(n, r, c) -> list:
    return [[[0.0] * c for _ in range(r)] for _ in range(n)]


def gather_mm(a, b, lhs=None, rhs=None) -> np.ndarray:
    """Y_q = A[i_q] @ B[j_q] over the broadcast index pairs (i_q, j_q)."""
    ii, jj, batch = resolve_indices(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B = mats(a), mats(b)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    out = [[[math.fsum(A[i][m][k] * B[j][k][n] for k in range(K)) for n in range(N)]
            for m in range(M)] for i, j in zip(ii, jj)]
    if not out:
        return np.zeros(tuple(batch) + (M, N))
    return np.array(out, dtype=np.float64).reshape(tuple(batch) + (M, N))


def gather_mm_vjp(a, b, g, lhs=None, rhs=None) -> dict:
    """dA[l] = sum_{q: i_q = l} G_q B[j_q]^T ;  dB[l] = sum_{q: j_q = l} A[i_q]^T G_q.

    Repeated selections accumulate; rows never selected stay exactly zero.
    """
    ii, jj, _ = resolve_indices(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B, G = mats(a), mats(b), mats(g)
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    dA, dB = _zeros(len(A), M, K), _zeros(len(B), K, N)
    for q, (i, j) in enumerate(zip(ii, jj)):
        for m in range(M):
            for k in range(K):
                dA[i][m][k] += math.fsum(G[q][m][n] * B[j][k][n] for n in range(N))
        for k in range(K):
            for n in range(N):
                dB[j][k][n] += math.fsum(A[i][m][k] * G[q][m][n] for m in range(M))
    return {"a": np.array(dA).reshape(a.shape), "b": np.array(dB).reshape(b.shape)}


def reference(inp, lhs, rhs, params):
    return gather_mm(inp["a"], inp["b"], lhs, rhs)


def reference_vjp(inp, g, lhs, rhs, params):
    return gather_mm_vjp(inp["a"], inp["b"], g, lhs, rhs)


# --- the MLX call ------------------------------------------------------------------------

def mlx_call(ops, lhs, rhs, sorted_indices, params):
    import mlx.core as mx
    return mx.gather_mm(ops["a"], ops["b"], lhs_indices=lhs, rhs_indices=rhs,
                        sorted_indices=sorted_indices)


# --- catalog scenarios: small integers, so float32 arithmetic is exact ------------------

FD_STEP = 1.0 / 16
REPORT_FD_STEP = 1.0 / 1024


def ints(shape, seed, lo=-4, hi=5):
    return tensor(seeded_ints(shape, seed, lo, hi))


def gmm(name, a, b, lhs=None, rhs=None, wrt=("a", "b"), tags=(), **kw) -> Scenario:
    return Scenario(name=name, op="gather_mm", operands={"a": a, "b": b}, wrt=tuple(wrt),
                    lhs_indices=None if lhs is None else index_tensor(lhs),
                    rhs_indices=None if rhs is None else index_tensor(rhs),
                    defect_tags=tuple(tags), **kw)


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


def scenarios() -> list:
    return [s for build in (_report_example, _left_selections, _right_selections, _both_explicit,
                            _broadcasting, _layouts, _cotangents, _matmul_controls,
                            _loss_and_hessian, _backing_tails, _user_layouts) for s in build()]


# --- fuzz strategy: index arrays of every rank, sides, broadcasting, layouts -------------

# Sizes above 1 drawn more often (1 shrinks first, and is where nothing can repeat).
DIMS = {2: (1, 2, 2), 3: (1, 2, 3)}
ITEMS = {3: (1, 2, 3, 2, 3), 4: (1, 2, 3, 4)}
# One index array (the only case where the sorted flag acts) twice as often.
SIDES = ("lhs", "rhs", "both", "none", "lhs", "rhs")


def index_plan(draw, max_dim=3):
    """Which index arrays are given, their shapes, and the sorted flag.

    Returns (side, sorted, out_batch, lhs_shape, rhs_shape); a missing array's
    shape is None. Index arrays of rank 0 to 3 are all accepted by MLX.
    """
    side = draw(D.choice(SIDES))
    srt = draw(D.choice((False, True, True)))   # the sorted path is where the defects live
    rank = draw(D.choice((1, 1, 2, 3) if side == "none" else (1, 1, 1, 1, 0, 2, 3)))
    out = tuple(draw(D.choice(DIMS[max_dim])) for _ in range(rank))
    lhs = rhs = None
    if side in ("lhs", "both"):
        lhs = out if side == "lhs" else D.broadcast_variant(draw, out)
    if side in ("rhs", "both"):
        rhs = out if side == "rhs" else D.broadcast_variant(draw, out)
    return side, srt, out, lhs, rhs


def operand_batch(draw, idx_shape, other_shape, max_items=4):
    """Batch shape of one operand. With an index array it is any (E,) / (E1, E2);
    without one its default arange must broadcast against the other side."""
    if idx_shape is not None:
        return tuple(draw(D.choice(ITEMS[max_items])) for _ in range(draw(D.irange(1, 2))))
    if other_shape is None:
        return None   # decided by the caller (side "none")
    return D.broadcast_variant(draw, other_shape)


def form(side, srt, a_batch, out_batch) -> str:
    """Call form used in signatures: which array is given, whether the sorted
    flag takes effect (exactly one array), and left broadcasting."""
    name = side + ("-sorted" if srt and side in ("lhs", "rhs") else "")
    if side == "rhs" and int(np.prod(a_batch, dtype=np.int64)) < int(np.prod(out_batch, dtype=np.int64)):
        name += "+bcast-left"
    return name


def draw_indices(draw, shape, bound, srt):
    return None if shape is None else index_tensor(D.index_values(draw, shape, bound, srt))


def draw_batches(draw, side, out, lhs, rhs, max_items=4):
    if side == "none":
        return D.broadcast_variant(draw, out), D.broadcast_variant(draw, out)
    return operand_batch(draw, lhs, rhs, max_items), operand_batch(draw, rhs, lhs, max_items)


def out_batch_of(a_batch, b_batch, lhs, rhs):
    la = lhs.shape if lhs is not None else a_batch
    rb = rhs.shape if rhs is not None else b_batch
    return tuple(np.broadcast_shapes(tuple(la), tuple(rb)))


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    side, srt, out, lhs_shape, rhs_shape = index_plan(draw)
    a_batch, b_batch = draw_batches(draw, side, out, lhs_shape, rhs_shape)
    M, K, N = draw(D.irange(1, 4)), draw(D.irange(1, 4)), draw(D.irange(1, 4))
    lhs = draw_indices(draw, lhs_shape, int(np.prod(a_batch, dtype=np.int64)), srt)
    rhs = draw_indices(draw, rhs_shape, int(np.prod(b_batch, dtype=np.int64)), srt)
    seeds = draw(D.irange(0, 2**16)), draw(D.irange(0, 2**16))
    a = D.layout(draw, a_batch, (M, K), seeds[0], dtype)
    b = D.layout(draw, b_batch, (K, N), seeds[1], dtype)
    out_batch = out_batch_of(a_batch, b_batch, lhs, rhs)
    cot, mode = D.cotangent(draw, out_batch + (M, N), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "b")))))
    return D.finish(Scenario(
        name="", op="gather_mm", operands={"a": a, "b": b}, wrt=wrt, lhs_indices=lhs,
        rhs_indices=rhs, sorted_indices=srt, cotangent=cot,
        family=form(side, srt, a_batch, out_batch),
        description=f"generated: side {side}, cotangent {mode}"))


# --- reproducer snippet: the rule written again from the maths ---------------------------

REPRO_MATMUL = r'''
def _pairs(a_batch, b_batch, lhs, rhs):
    """Index pairs (i_q, j_q): omitted arrays default to arange over the batch."""
    n = lambda shape: int(np.prod(shape, dtype=np.int64))
    li = np.arange(n(a_batch)).reshape(a_batch) if lhs is None else lhs
    ri = np.arange(n(b_batch)).reshape(b_batch) if rhs is None else rhs
    li, ri = np.broadcast_arrays(li, ri)
    return list(zip(li.ravel().tolist(), ri.ravel().tolist())), li.shape


def mm_forward(a, b, lhs, rhs):
    pairs, batch = _pairs(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B = a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])
    M, K, N = A.shape[1], A.shape[2], B.shape[2]
    Y = np.zeros((len(pairs), M, N))
    for q, (i, j) in enumerate(pairs):
        for m in range(M):
            for c in range(N):
                Y[q, m, c] = sum(A[i, m, k] * B[j, k, c] for k in range(K))
    return Y.reshape(tuple(batch) + (M, N))


def mm_vjp(a, b, g, lhs, rhs):
    """dA[l] += G_q B[j_q]^T over q with i_q = l;  dB[l] += A[i_q]^T G_q over j_q = l."""
    pairs, _ = _pairs(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B = a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])
    M, K, N = A.shape[1], A.shape[2], B.shape[2]
    G = g.reshape((-1, M, N))
    dA, dB = np.zeros(A.shape), np.zeros(B.shape)
    for q, (i, j) in enumerate(pairs):
        for m in range(M):
            for k in range(K):
                dA[i, m, k] += sum(G[q, m, c] * B[j, k, c] for c in range(N))
        for k in range(K):
            for c in range(N):
                dB[j, k, c] += sum(A[i, m, k] * G[q, m, c] for m in range(M))
    return dA.reshape(a.shape), dB.reshape(b.shape)
'''

REPRO = REPRO_MATMUL + r'''
INTEGER_OPERANDS = ()


def ref_forward(inp, lhs, rhs, params):
    return mm_forward(inp["a"], inp["b"], lhs, rhs)


def ref_vjp(inp, g, lhs, rhs, params):
    da, db = mm_vjp(inp["a"], inp["b"], g, lhs, rhs)
    return {"a": da, "b": db}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    return mx.gather_mm(ops["a"], ops["b"], lhs_indices=lhs, rhs_indices=rhs,
                        sorted_indices=sorted_flag)
'''


OPS = (OpInfo(
    name="gather_mm", summary="mx.gather_mm: batched matmul over gathered left and right matrices",
    operands=("a", "b"), differentiable=("a", "b"), index_arrays=("lhs", "rhs"), has_sorted_flag=True,
    reference=reference, reference_vjp=reference_vjp, exact=True, multilinear=True,
    mlx_call=".ops.gather_mm:mlx_call",
    scenarios=scenarios, strategy=fuzz_case, fuzz_weight=10, repro_source=REPRO, native=True),)
