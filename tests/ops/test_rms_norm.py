"""rms_norm (mx.fast.rms_norm): the float64 reference against a small example worked
out by hand, its hand-written VJP against float64 differences of the forward,
wrong VJPs (a term missing, an axis not summed, eps or the weight ignored) planted
by helpers/wrong_vjp.py, each rejected by the catalog scenarios written for it,
and on the pinned MLX every catalog scenario passing on CPU."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.cases import expected
from mlx_vjpcheck.core import numeric
from mlx_vjpcheck.ops import rms_norm as R

OP = "rms_norm"


def test_by_hand():
    inp = {"x": np.array([[2.0, -2.0]]), "weight": np.array([1.0, 3.0])}
    p = {"eps": 0.0}
    # mean of squares 4, r = 1/2: y = x / 2 * w
    assert np.allclose(R.reference(inp, p), [[1.0, -3.0]])
    assert np.allclose(R.reference({"x": inp["x"]}, p), [[1.0, -1.0]])   # no weight operand: None
    # dy0/dx0 = r - x0^2 r^3 / 2 = 1/4, dy0/dx1 = -x0 x1 r^3 / 2 = 1/4; dw = g x r
    g = R.reference_vjp(inp, np.array([[1.0, 0.0]]), p)
    assert np.allclose(g["x"], [[0.25, 0.25]]) and np.allclose(g["weight"], [1.0, 0.0])
    # a zero row: r = eps^-1/2 = 2 and only g w r is left
    zero = {"x": np.zeros((1, 2)), "weight": np.array([1.0, 3.0])}
    g = R.reference_vjp(zero, np.array([[1.0, 1.0]]), {"eps": 0.25})
    assert np.allclose(g["x"], [[2.0, 6.0]]) and np.allclose(g["weight"], 0.0)


def test_hand_written_vjp_agrees_with_float64_differences():
    """Where differences can decide (not rows whose scale is sqrt(eps)), they agree
    with the hand-written reference VJP to the stated bound."""
    scenarios, decided = W.scenarios(OP), 0
    for s in scenarios:
        inp = expected.logical_inputs(s)
        g = expected.cotangent(s, R.reference(inp, s.params))
        try:
            num = numeric.vjp_by_differences(lambda x: R.reference(x, s.params), inp, g, s.wrt)
        except numeric.ReferenceUndecided:
            continue
        hand = R.reference_vjp(inp, g, s.params)
        for n in s.wrt:
            assert np.allclose(hand[n], num[n], rtol=0, atol=1e-7 * (1 + np.abs(num[n]).max())), (s.name, n)
        decided += 1
    assert decided >= len(scenarios) - 2


# --- wrong VJPs, planted through helpers/wrong_vjp.py ------------------------------------------

def _stats(ctx):
    """(x, r, g w) of the call in float64: r per row as a column."""
    x = ctx.operands["x"]
    r = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + ctx.params["eps"])
    return x, r, ctx.cot * ctx.operands["weight"] if "weight" in ctx.operands else ctx.cot


def r_constant(ctx):
    _, r, gw = _stats(ctx)
    return dict(ctx.honest(), x=gw * r)                    # r treated as a constant


def weight_grad_last_row(ctx):
    x, r, _ = _stats(ctx)
    rows = (ctx.cot * x * r).reshape(-1, x.shape[-1])
    return dict(ctx.honest(), weight=rows[-1])             # assigned per row, not summed


def eps_dropped(ctx):
    return ctx.true(eps=0.0)


def weight_ignored_in_dx(ctx):
    without = {n: v for n, v in ctx.operands.items() if n != "weight"}
    return dict(ctx.honest(), x=R.reference_vjp(without, ctx.cot, ctx.params)["x"])


# mutant, catalog scenarios that must each reject it
MUTANTS = [
    (r_constant, ["rms_norm/weight/x", "rms_norm/no_weight"]),
    (weight_grad_last_row, ["rms_norm/weight/weight", "rms_norm/rank3"]),
    (eps_dropped, ["rms_norm/zero_row", "rms_norm/eps_half"]),
    (weight_ignored_in_dx, ["rms_norm/weight/x"]),
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
