"""sdpa: mx.fast.scaled_dot_product_attention(q, k, v, scale=, mask=).

q (B, Nq, Tq, D), k (B, Nkv, Tk, D), v (B, Nkv, Tk, Dv), Nq a multiple of Nkv:
query head h reads key/value head h // (Nq / Nkv) (grouped-query attention).
Per query row, S_j = scale <q, k_j> (+ mask_j for an additive mask) and the
output is sum_j P_j v_j with P = softmax over the keys the row may see.
Masks: "causal" (lower-right aligned: query i sees key j iff
j <= i + Tk - Tq), a boolean array (True: may see), an additive float array;
arrays broadcast to (B, Nq, Tq, Tk). MLX replaces a boolean-masked score by
the lowest finite float, so a row that may see no key attends to all keys
uniformly (a causal call with Tq > Tk has such rows); the reference follows
that convention.

The reverse rule (softmax backward, then the sum over each key/value head's
query-head group, the mask and the scale) is long, so the reference VJP is the
reference forward differentiated by complex step (core/numeric.py): the
forward uses exp, products, sums and one division on q, k, v; the mask enters
as a constant (and its row maximum, a constant too, is subtracted so that
large negative additive masks cannot underflow every term).

ScaledDotProductAttention::vjp in mlx/fast.cpp routes to a fused
ScaledDotProductAttentionVJP on GPU; on CPU (use_fallback) MLX differentiates
its composed fallback (unflatten for the head groups, where/add for masks,
softmax). The mask is a fixed, optional operand (present for the "additive"
and "bool" kinds of params["mask"]): the fused rule refuses its gradient.
The boolean form arrives here as a 0/1 float operand (nonzero: may see),
converted to a bool array in the MLX call, ops/repro/sdpa.py.

Float32 rounding: |q|, |k| <= 2, head dim <= 4 and scale <= 1/2 keep
|S| <= 8; |v|, |g| <= 4. The softmax and its backward then carry ~1e-6
relative error, against the 3e-5 atol/rtol band.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core import layout
from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints, tensor
from ._support import fast
from ._support import expression as E

MASKS = ("none", "causal", "additive", "bool")


# --- float64 reference ---------------------------------------------------------------------

def visible(params, mask, shape) -> np.ndarray:
    """Boolean (B, Nq, Tq, Tk): which keys each query row may see."""
    Tq, Tk = shape[-2], shape[-1]
    if params["mask"] == "causal":
        rows = np.arange(Tq)[:, None] + (Tk - Tq)
        return np.broadcast_to(np.arange(Tk)[None, :] <= rows, shape)
    if params["mask"] == "bool":
        return np.broadcast_to(np.asarray(mask) != 0, shape)
    return np.ones(shape, dtype=bool)


def additive(params, mask, shape) -> np.ndarray:
    """The additive mask minus its row maximum (a constant: q, k, v do not enter it)."""
    if params["mask"] != "additive":
        return np.zeros(shape)
    m = np.broadcast_to(np.asarray(mask, dtype=np.float64), shape)
    return m - np.max(m, axis=-1, keepdims=True)


def probabilities(q, k, params, mask) -> np.ndarray:
    """P (B, Nq, Tq, Tk); complex inputs stay complex (complex step)."""
    reps = q.shape[1] // k.shape[1]
    scores = float(params["scale"]) * np.einsum("bhqd,bhkd->bhqk", q, np.repeat(k, reps, axis=1))
    shape = scores.shape
    seen = visible(params, mask, shape)
    e = np.exp(scores + additive(params, mask, shape)) * seen
    blind = ~seen.any(axis=-1, keepdims=True)   # rows that may see nothing: uniform
    total = np.where(blind, 1.0, e.sum(axis=-1, keepdims=True))
    return np.where(blind, 1.0 / shape[-1], e / total)


def reference(inp, params):
    q, k, v = (np.asarray(inp[n]) for n in ("q", "k", "v"))
    p = probabilities(q, k, params, inp.get("mask"))
    return np.einsum("bhqk,bhkd->bhqd", p, np.repeat(v, q.shape[1] // k.shape[1], axis=1))


# --- catalog ---------------------------------------------------------------------------------

def _qkv(B, Nq, Nkv, Tq, Tk, Dh, Dv=None, seed=100):
    return {"q": tensor(seeded_ints((B, Nq, Tq, Dh), seed, -2, 3)),
            "k": tensor(seeded_ints((B, Nkv, Tk, Dh), seed + 1, -2, 3)),
            "v": tensor(seeded_ints((B, Nkv, Tk, Dv or Dh), seed + 2))}


def _case(name, ops, mask="none", mask_values=None, scale=0.5, wrt=("q", "k", "v"), desc="", cot=True):
    if mask_values is not None:
        ops = dict(ops, mask=tensor(mask_values))
    q, v = layout.logical(ops["q"]), layout.logical(ops["v"])
    shape = q.shape[:3] + v.shape[3:]
    return Scenario(name=f"sdpa/{name}", op="sdpa", operands=ops, wrt=tuple(wrt),
                    params={"scale": scale, "mask": mask}, family="attention", description=desc,
                    cotangent=tensor(seeded_ints(shape, 109)) if cot else None)


def scenarios() -> list:
    mha = _qkv(1, 2, 2, 3, 3, 4)
    gqa = _qkv(1, 4, 2, 3, 4, 4, seed=110)
    tri = [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]]   # the last row may see nothing
    out = [_case("plain", mha), _case("plain/ones_cotangent", mha, cot=False)]
    out += [_case(f"single/{n}", mha, wrt=(n,)) for n in ("q", "k", "v")]
    out += [
        _case("causal/square", mha, "causal"),
        _case("causal/fewer_queries", _qkv(1, 2, 2, 2, 4, 4, seed=120), "causal",
              desc="Tq < Tk: lower-right alignment, query i sees keys up to i + 2"),
        _case("causal/more_queries", _qkv(1, 2, 2, 4, 2, 4, seed=121), "causal",
              desc="Tq > Tk: the first two rows see no key and attend uniformly"),
        _case("additive/full", mha, "additive", seeded_ints((1, 2, 3, 3), 122, -2, 2)),
        _case("additive/broadcast_rows", mha, "additive", seeded_ints((3, 3), 123, -2, 2),
              desc="a (Tq, Tk) mask shared by every batch item and head"),
        _case("additive/large_negative", mha, "additive",
              [[0, -1e4, -1e4], [0, 0, -1e4], [-1e4, 0, 1]], desc="entries that remove keys"),
        _case("bool/broadcast_rows", _qkv(1, 2, 2, 3, 4, 4, seed=124), "bool", tri,
              desc="a (Tq, Tk) boolean mask with a row that sees nothing"),
        _case("gqa/plain", gqa, desc="4 query heads share 2 key/value heads"),
        _case("gqa/k_only", gqa, wrt=("k",), desc="dk sums over each head's query group"),
        _case("gqa/causal", gqa, "causal"),
        _case("gqa/additive_per_head", gqa, "additive", seeded_ints((1, 4, 3, 4), 125, -2, 2),
              desc="a per-query-head mask: split by key/value head and group"),
        _case("gqa/bool_per_head", gqa, "bool", seeded_ints((4, 3, 4), 126, 0, 2) + np.eye(3, 4)),
        _case("mqa", _qkv(2, 3, 1, 2, 3, 4, seed=127), "causal", desc="3 query heads, one key/value head"),
        _case("scale_inv_sqrt3", _qkv(1, 2, 2, 3, 3, 3, seed=128), scale=3 ** -0.5,
              desc="head dim 3, the usual 1/sqrt(D): not a dyadic scale"),
        _case("value_dim_differs", _qkv(1, 2, 1, 3, 2, 4, Dv=2, seed=129), "additive",
              seeded_ints((3, 2), 130, -2, 2), desc="Dv 2 != D 4"),
        _case("one_query_one_key", _qkv(1, 1, 1, 1, 1, 1, seed=131),
              desc="a single score: P = 1, dq = dk = 0"),
        _case("decode_step", _qkv(2, 2, 1, 1, 4, 4, seed=132), "causal", desc="Tq = 1 sees every key"),
        _case("layout/bthd", _transposed(_qkv(2, 2, 2, 3, 3, 4, seed=133)), "causal",
              desc="q, k, v stored (B, T, N, D) and transposed to (B, N, T, D)"),
        _case("layout/broadcast_kv", dict(_qkv(2, 2, 1, 2, 3, 4, seed=134),
              k=tensor(seeded_ints((1, 1, 3, 4), 135, -2, 3),
                       views=[{"op": "broadcast_to", "shape": [2, 1, 3, 4]}])),
              "additive", seeded_ints((2, 1, 1, 3), 136, -2, 2), desc="k one stride-0 batch item"),
    ]
    return out


def _transposed(ops) -> dict:
    """Each operand stored with axes 1 and 2 swapped, the logical value unchanged."""
    out = {}
    for name, t in ops.items():
        logical = np.asarray(t.values).reshape(t.shape)
        out[name] = tensor(np.transpose(logical, (0, 2, 1, 3)),
                           views=[{"op": "transpose", "axes": [0, 2, 1, 3]}])
    return out


# --- fuzz strategy -------------------------------------------------------------------------

SCALES = (0.5, 0.25, 1.0)


def _mask(draw, kind, full, dtype) -> dict:
    """The mask operand of an "additive" or "bool" call, broadcasting to `full`."""
    if kind in ("none", "causal"):
        return {}
    shape = D.broadcast_variant(draw, full) or (1,)
    lo, hi = (0, 2) if kind == "bool" else (-2, 2)
    return {"mask": D.tensor(D.hashed_ints(shape, draw(D.irange(0, 2**16)), lo, hi), dtype=dtype)}


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = fast.FUZZ_DTYPE   # whatever the campaign offers: see fast.FUZZ_DTYPE
    B, Nkv, reps = draw(D.irange(1, 2)), draw(D.irange(1, 2)), draw(D.irange(1, 3))
    Tq, Tk, Dh, Dv = (draw(D.irange(1, 4)) for _ in range(4))
    Nq = Nkv * reps
    kind, scale = draw(D.choice(MASKS)), draw(D.choice(SCALES))
    if scale == 1.0 and Dh > 2:
        scale = 0.5   # keeps |S| <= 8
    seed = lambda: draw(D.irange(0, 2**16))  # noqa: E731
    ops = {"q": D.layout(draw, (B, Nq), (Tq, Dh), seed(), dtype, -2, 3),
           "k": D.layout(draw, (B, Nkv), (Tk, Dh), seed(), dtype, -2, 3),
           "v": D.layout(draw, (B, Nkv), (Tk, Dv), seed(), dtype),
           **_mask(draw, kind, (B, Nq, Tq, Tk), dtype)}
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("q", "k", "v")))))
    cot, mode = D.cotangent(draw, (B, Nq, Tq, Dv), dtype)
    return D.finish(Scenario(name="", op="sdpa", operands=ops, wrt=wrt, cotangent=cot, family="attention",
                             params={"scale": scale, "mask": kind},
                             description=f"generated: B{B} Nq{Nq} Nkv{Nkv} Tq{Tq} Tk{Tk} D{Dh} Dv{Dv}, "
                                         f"mask {kind}, cotangent {mode}"))


def call_expression(params, names) -> str:
    """The one attention call: no mask, "causal", the additive mask, or the mask's nonzeros as booleans."""
    kind = params["mask"]
    mask = {"none": "None", "causal": '"causal"', "bool": f"{names.get('mask')} != 0"}.get(kind, names.get("mask"))
    return E.call("mx.fast.scaled_dot_product_attention", names["q"], names["k"], names["v"],
                  scale=E.lit(params["scale"]), mask=mask)


OPS = (OpInfo(
    name="sdpa", summary="mx.fast.scaled_dot_product_attention: scale, causal/additive/boolean masks, "
                         "grouped-query heads",
    operands=("q", "k", "v", "mask"), differentiable=("q", "k", "v"), optional_operands=("mask",),
    reference=reference, reference_vjp=None, analytic=True,
    rule="per query row, P = softmax(scale q k^T + additive mask) over the keys it may see (uniform over "
         "all keys where it may see none); dv = P^T g, dS = P (g v^T - rowsum(P g v^T)), "
         "dq = scale dS k, dk = scale dS^T q, summed over each key/value head's query heads",
    mlx_call=".ops.repro.sdpa:mlx_call", call_expression=call_expression,
    # ScaledDotProductAttention where a fused GPU kernel applies; elsewhere (the CPU) MLX composes it
    primitives=("ScaledDotProductAttention", "Softmax", "Matmul", "Multiply", "Add", "Select", "Broadcast",
                "ExpandDims", "Flatten", "Unflatten", "Transpose"),
    dtypes=("float32", "float16", "bfloat16"), complex=False,
    scenarios=scenarios, strategy=fuzz_case),)
