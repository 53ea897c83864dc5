"""sdpa (mx.fast.scaled_dot_product_attention): the float64 reference and its
differentiated VJP against attention worked out by hand (masks, MLX's convention
for rows that see nothing, grouped heads), wrong VJPs (a mask ignored or
misaligned, a head group cut short, the scale or the softmax centring missing,
hidden scores at -inf, a boolean mask added) planted by helpers/wrong_vjp.py, each
rejected by the catalog scenarios written for it, and on the pinned MLX every
catalog scenario passing on CPU."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.cases import expected
from mlx_vjpcheck.ops import sdpa

OP = "sdpa"
INFO = sdpa.OPS[0]
LN3 = math.log(3.0)


def _mx():
    import mlx.core as mx
    return mx


def _sdpa(q, k, v, mask_kind="none", mask=None, scale=1.0, g=None):
    """(forward, {q, k, v gradients}) of the reference, as the harness computes them."""
    inp = {"q": np.array(q, dtype=float), "k": np.array(k, dtype=float), "v": np.array(v, dtype=float)}
    if mask is not None:
        inp["mask"] = np.array(mask, dtype=float)
    p = {"scale": scale, "mask": mask_kind}
    y = INFO.reference(inp, p)
    g = np.ones_like(y) if g is None else np.array(g, dtype=float)
    return y, expected.reference_vjp(INFO, inp, g, p, ("q", "k", "v"))


def test_by_hand():
    q, k, v = [[[[1.0]]]], [[[[0.0], [LN3]]]], [[[[4.0], [8.0]]]]
    # scores (0, ln 3): P = (1/4, 3/4), out = 7; dP = v g = (4, 8), dS = P (dP - 7) = (-3/4, 3/4)
    y, gr = _sdpa(q, k, v)
    assert np.allclose(y, 7.0)
    assert np.allclose(gr["v"].ravel(), [0.25, 0.75])
    assert np.allclose(gr["q"].ravel(), [0.75 * LN3]) and np.allclose(gr["k"].ravel(), [-0.75, 0.75])
    # a boolean mask hiding key 1: out = v0, no dependence on q or k
    y, gr = _sdpa(q, k, v, "bool", [[1.0, 0.0]])
    assert np.allclose(y, 4.0) and np.allclose(gr["q"], 0) and np.allclose(gr["v"].ravel(), [1.0, 0.0])
    # hiding every key: MLX's convention, uniform weights
    y, gr = _sdpa(q, k, v, "bool", [[0.0, 0.0]])
    assert np.allclose(y, 6.0) and np.allclose(gr["k"], 0) and np.allclose(gr["v"].ravel(), [0.5, 0.5])
    # causal is lower-right aligned: one query with two keys sees both (upper-left would see one)
    assert np.allclose(_sdpa(q, k, v, "causal")[0], 7.0)
    # an additive mask (0, ln 3) on equal scores gives the same weights
    assert np.allclose(_sdpa(q, [[[[0.0], [0.0]]]], v, "additive", [[0.0, LN3]])[0], 7.0)


def test_grouped_heads_by_hand():
    """Two query heads on one key/value head: dk and dv add both heads' terms."""
    q = [[[[1.0]], [[-1.0]]]]                       # heads 0, 1; one query each
    y, gr = _sdpa(q, [[[[0.0], [LN3]]]], [[[[4.0], [8.0]]]], g=[[[[1.0]], [[2.0]]]])
    # head 1: scores (0, -ln 3), P = (3/4, 1/4), out 5; dS = P (dP - 10) with dP = (8, 16)
    assert np.allclose(y.ravel(), [7.0, 5.0])
    assert np.allclose(gr["v"].ravel(), [0.25 + 1.5, 0.75 + 0.5])
    assert np.allclose(gr["k"].ravel(), [-0.75 + 1.5, 0.75 - 1.5])
    assert np.allclose(gr["q"].ravel(), [0.75 * LN3, 1.5 * LN3])   # dq = dS . k


# --- wrong VJPs, planted through helpers/wrong_vjp.py ------------------------------------------

def _mlx_operands(ctx) -> dict:
    mx = _mx()
    return {n: mx.array(v.astype(np.float32)) for n, v in ctx.operands.items()}


def _mlx_cot(ctx, factor=1.0):
    return _mx().array((ctx.cot * factor).astype(np.float32))


def mask_ignored(ctx):
    return ctx.true(mask="none")


def causal_upper_left(ctx):
    """A causal mask aligned top-left, as a boolean one: the float64 rule of that call."""
    if ctx.params["mask"] != "causal":
        return ctx.honest()
    Tq, Tk = ctx.operands["q"].shape[2], ctx.operands["k"].shape[2]
    inputs = dict(ctx.operands, mask=np.tril(np.ones((Tq, Tk))))
    return expected.reference_vjp(INFO, inputs, ctx.cot, dict(ctx.params, mask="bool"), ctx.names)


def group_first_head_only(ctx):
    """dk, dv from the first query head of each group alone."""
    Nq, Nkv = ctx.operands["q"].shape[1], ctx.operands["k"].shape[1]
    first = (np.arange(Nq) % (Nq // Nkv) == 0).astype(np.float64).reshape(1, -1, 1, 1)
    wrong = ctx.true(cot=_mlx_cot(ctx, first))
    return dict(ctx.honest(), **{n: wrong[n] for n in ("k", "v") if n in wrong})


def scale_missing_in_dk(ctx):
    grads = ctx.honest()
    if "k" in grads:
        grads["k"] = grads["k"] / ctx.params["scale"]
    return grads


def _attention(mx, env, params, softmax, hidden):
    """MLX's fallback composition, with the softmax and the hidden-score value supplied."""
    q, k, v, kind = env["q"], env["k"], env["v"], params["mask"]
    reps = q.shape[1] // k.shape[1]
    s = params["scale"] * (q @ mx.swapaxes(mx.repeat(k, reps, axis=1), -1, -2))
    Tq, Tk = s.shape[-2:]
    if kind == "additive":
        s = s + env["mask"]
    if kind in ("causal", "bool"):
        lower_right = np.arange(Tk)[None] <= np.arange(Tq)[:, None] + Tk - Tq
        seen = mx.array(lower_right) if kind == "causal" else env["mask"] != 0
        s = mx.where(seen, s, mx.array(hidden, dtype=mx.float32))
    return softmax(s) @ mx.repeat(v, reps, axis=1)


def _softmax_with(centred):
    mx = _mx()
    f = mx.custom_function(lambda s: mx.softmax(s, axis=-1, precise=True))

    @f.vjp
    def f_vjp(s, g, p):
        return p * (g - mx.sum(p * g, axis=-1, keepdims=True)) if centred else p * g
    return f


def _composed(ctx, centred, hidden=float(np.finfo(np.float32).min)):
    """The VJP of the composed attention, its softmax backward centred or not."""
    mx, env = _mx(), _mlx_operands(ctx)

    def f(*xs):
        return _attention(mx, dict(env, **dict(zip(ctx.names, xs))), ctx.params, _softmax_with(centred), hidden)
    _, grads = mx.vjp(f, [env[n] for n in ctx.names], [_mlx_cot(ctx)])
    return dict(zip(ctx.names, grads))


def softmax_not_centred(ctx):
    return _composed(ctx, centred=False)


def hidden_scores_minus_inf(ctx):
    return _composed(ctx, centred=True, hidden=-math.inf)   # rows that see nothing: NaN


def bool_mask_added(ctx):
    return ctx.true(mask="additive")                     # the 0/1 mask added to the scores


# mutant, catalog scenarios that must each reject it
MUTANTS = [
    (mask_ignored, ["sdpa/causal/square", "sdpa/additive/full", "sdpa/bool/broadcast_rows"]),
    (causal_upper_left, ["sdpa/causal/fewer_queries", "sdpa/causal/more_queries"]),
    (group_first_head_only, ["sdpa/gqa/plain", "sdpa/gqa/k_only", "sdpa/mqa"]),
    (scale_missing_in_dk, ["sdpa/single/k", "sdpa/gqa/k_only"]),
    (softmax_not_centred, ["sdpa/single/q", "sdpa/plain/ones_cotangent"]),
    (hidden_scores_minus_inf, ["sdpa/causal/more_queries", "sdpa/bool/broadcast_rows"]),
    (bool_mask_added, ["sdpa/bool/broadcast_rows", "sdpa/gqa/bool_per_head"]),
]


@pytest.mark.parametrize("mutant, catchers", MUTANTS, ids=[m.__name__ for m, _ in MUTANTS])
def test_a_wrong_vjp_is_rejected_by_its_scenarios(mutant, catchers):
    assert {n: W.honest(OP)[n] for n in catchers} == {n: "pass" for n in catchers}
    verdicts = W.statuses(OP, mutant)
    assert {n: verdicts[n] for n in catchers} == {n: "fail" for n in catchers}


def test_the_wrapper_around_a_true_vjp_changes_nothing():
    """Controls for the mutants: the same machinery with the composed attention and a
    correct softmax VJP, and with the differentiated float64 reference (the op has no
    hand-written VJP, so W.honest_control does not apply), changes no verdict."""
    assert W.statuses(OP, lambda ctx: _composed(ctx, centred=True)) == W.honest(OP)
    reference = lambda ctx: expected.reference_vjp(INFO, ctx.operands, ctx.cot, ctx.params, ctx.names)  # noqa: E731
    assert W.statuses(OP, reference) == W.honest(OP)


@needs_pinned_mlx()
def test_every_catalog_scenario_passes_on_the_pinned_mlx_cpu():
    """No defect in the CPU gradients on MLX 0.32.4: no scenario is tagged, all pass."""
    scenarios = W.scenarios(OP)
    assert scenarios and not any(s.defect_tags for s in scenarios)
    assert W.honest(OP) == {s.name: "pass" for s in scenarios}
