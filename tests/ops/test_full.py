"""full (harness/ops/full.py): d v = the sum of g over v's copies, against float64
differences and by hand; the pinned MLX verdicts: every call but the empty and
the half-precision first-order ones fails, because Full::vjp returns g * v (right
at first order only where v is 1); and a planted rule of that form is rejected."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck.ops import full as F


def test_rule_by_hand():
    d = F.reference_vjp({"v": np.array([2.0, -1.0])}, np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
                        {"shape": [3, 2]})
    assert d["v"].tolist() == [9, 12]


def test_reference_vjp_agrees_with_differences():
    compared, wrong = B.against_differences("full")
    assert compared >= 6 and wrong == [], (compared, wrong)


def test_mlx_s_rule_planted_is_rejected_where_v_is_not_one():
    """g * v summed over the copies: MLX 0.32.4's Full::vjp, planted as a rule of its own."""
    def scaled(ctx):
        weighted = ctx.cot * np.broadcast_to(ctx.operands["v"], ctx.cot.shape)
        return {"v": F.reference_vjp(ctx.operands, weighted, ctx.params)["v"]}
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    s = next(s for s in B.W.scenarios("full") if s.name == "full/defect/value_scaled/row")
    rec = execute.run(B.W.plant(s, scaled), "cpu")
    assert any(c["name"] == "grad:v" and not c["passed"] for c in rec["checks"])


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("full") == []


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_value_scaled_scenarios():
    failing, tagged = B.pinned_verdicts("full")
    assert failing == tagged and len(tagged) == 8, (failing, tagged)


@needs_pinned_mlx()
def test_pinned_mlx_gradient_is_g_times_v():
    import mlx.core as mx
    g = mx.grad(lambda v: mx.full((3,), v).sum())(mx.array(2.0))
    assert g.item() == 6.0   # the sum of g over 3 copies is 3
