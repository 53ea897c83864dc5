"""layer_norm (mx.fast.layer_norm): the float64 reference against a small example
worked out by hand, its hand-written VJP against float64 differences of the
forward, wrong VJPs (a term missing, the weight ignored, the bias gradient averaged,
weight and bias swapped) planted by helpers/wrong_vjp.py, each rejected by the
catalog scenarios written for it, and on the pinned MLX every catalog scenario
passing on CPU."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.cases import expected
from mlx_vjpcheck.core import numeric
from mlx_vjpcheck.ops import layer_norm as L

OP = "layer_norm"


def test_by_hand():
    inp = {"x": np.array([[1.0, 3.0]]), "weight": np.array([2.0, 3.0]), "bias": np.array([1.0, 1.0])}
    p = {"eps": 0.0}
    # mean 2, variance 1: xhat = (-1, 1)
    assert np.allclose(L.reference(inp, p), [[-1.0, 4.0]])
    assert np.allclose(L.reference({"x": inp["x"]}, p), [[-1.0, 1.0]])   # neither operand: None, None
    # two features normalise to +-1 whatever x is: dx = 0; dw = g xhat, db = g
    g = L.reference_vjp(inp, np.array([[1.0, 0.0]]), p)
    assert np.allclose(g["x"], 0.0)
    assert np.allclose(g["weight"], [-1.0, 0.0]) and np.allclose(g["bias"], [1.0, 0.0])
    # a constant row: xhat = 0, r = eps^-1/2 = 2, dx = r (g w - mean(g w)) = 2 ((2, 0) - 1)
    const = dict(inp, x=np.array([[5.0, 5.0]]))
    g = L.reference_vjp(const, np.array([[1.0, 0.0]]), {"eps": 0.25})
    assert np.allclose(g["x"], [[2.0, -2.0]]) and np.allclose(g["weight"], 0.0)


def test_hand_written_vjp_agrees_with_float64_differences():
    """Where differences can decide (not rows whose scale is sqrt(eps)), they agree
    with the hand-written reference VJP to the stated bound."""
    scenarios, decided = W.scenarios(OP), 0
    for s in scenarios:
        inp = expected.logical_inputs(s)
        g = expected.cotangent(s, L.reference(inp, s.params))
        try:
            num = numeric.vjp_by_differences(lambda x: L.reference(x, s.params), inp, g, s.wrt)
        except numeric.ReferenceUndecided:
            continue
        hand = L.reference_vjp(inp, g, s.params)
        for n in s.wrt:
            assert np.allclose(hand[n], num[n], rtol=0, atol=1e-7 * (1 + np.abs(num[n]).max())), (s.name, n)
        decided += 1
    assert decided >= len(scenarios) - 2


# --- wrong VJPs, planted through helpers/wrong_vjp.py ------------------------------------------

def _stats(ctx):
    """(xhat, r, g w) of the call in float64: r per row as a column."""
    x = ctx.operands["x"]
    xc = x - np.mean(x, axis=-1, keepdims=True)
    r = 1.0 / np.sqrt(np.mean(xc * xc, axis=-1, keepdims=True) + ctx.params["eps"])
    return xc * r, r, ctx.cot * ctx.operands["weight"] if "weight" in ctx.operands else ctx.cot


def mean_term_dropped(ctx):
    xhat, r, gw = _stats(ctx)
    return dict(ctx.honest(), x=r * (gw - xhat * np.mean(gw * xhat, axis=-1, keepdims=True)))


def variance_term_dropped(ctx):
    _, r, gw = _stats(ctx)
    return dict(ctx.honest(), x=r * (gw - np.mean(gw, axis=-1, keepdims=True)))


def bias_grad_mean(ctx):
    return dict(ctx.honest(), bias=np.mean(ctx.cot.reshape(-1, ctx.cot.shape[-1]), axis=0))


def weight_ignored_in_dx(ctx):
    without = {n: v for n, v in ctx.operands.items() if n != "weight"}
    return dict(ctx.honest(), x=L.reference_vjp(without, ctx.cot, ctx.params)["x"])


def weight_bias_swapped(ctx):
    every = L.reference_vjp(ctx.operands, ctx.cot, ctx.params)   # whichever of the two the call has
    swapped = {"weight": every.get("bias"), "bias": every.get("weight")}
    return dict(ctx.honest(), **{n: v for n, v in swapped.items() if v is not None})


# mutant, catalog scenarios that must each reject it
MUTANTS = [
    (mean_term_dropped, ["layer_norm/single/x", "layer_norm/constant_row"]),
    (variance_term_dropped, ["layer_norm/single/x", "layer_norm/no_weight/no_bias"]),
    (bias_grad_mean, ["layer_norm/single/bias", "layer_norm/rank3"]),
    (weight_ignored_in_dx, ["layer_norm/single/x", "layer_norm/weight/no_bias"]),
    (weight_bias_swapped, ["layer_norm/weight/bias", "layer_norm/rank3"]),
]


@pytest.mark.parametrize("mutant, catchers", MUTANTS, ids=[m.__name__ for m, _ in MUTANTS])
def test_a_wrong_vjp_is_rejected_by_its_scenarios(mutant, catchers):
    assert {n: W.honest(OP)[n] for n in catchers} == {n: "pass" for n in catchers}
    verdicts = W.statuses(OP, mutant)
    assert {n: verdicts[n] for n in catchers} == {n: "fail" for n in catchers}


def test_the_wrapper_around_a_true_vjp_changes_nothing():
    """Controls for the mutants: the same machinery with MLX's own VJP, and with the
    float64 reference VJP, changes no verdict."""
    assert W.statuses(OP, lambda ctx: ctx.true()) == W.honest(OP)
    assert W.honest_control(OP)


@needs_pinned_mlx()
def test_every_catalog_scenario_passes_on_the_pinned_mlx_cpu():
    """No defect in the CPU gradients on MLX 0.32.4: no scenario is tagged, all pass."""
    scenarios = W.scenarios(OP)
    assert scenarios and not any(s.defect_tags for s in scenarios)
    assert W.honest(OP) == {s.name: "pass" for s in scenarios}
