"""addmm (harness/ops/addmm.py): alpha (a @ b) + beta c against float64
differences and by hand, planted wrong rules (alpha or beta ignored, c's
broadcast not summed, wrong only for a 0-d c) caught by the catalog, and the
pinned MLX verdicts: every float32 call with alpha or beta other than 1 fails
forward mode alone (AddMM::jvp ignores them)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck.ops import addmm as A


def test_rule_by_hand():
    inp = {"c": np.array([1.0, 2.0]), "a": np.array([[1.0, 2.0]]), "b": np.array([[1.0, 0.0], [0.0, 1.0]])}
    p = {"alpha": 2.0, "beta": 0.5}
    assert A.reference(inp, p).tolist() == [[2.5, 5.0]]
    d = A.reference_vjp(inp, np.array([[1.0, -1.0]]), p)
    assert d["c"].tolist() == [0.5, -0.5] and d["a"].tolist() == [[2, -2]]
    assert d["b"].tolist() == [[2, -2], [4, -4]]


def test_reference_vjp_agrees_with_differences():
    compared, wrong = B.against_differences("addmm")
    assert compared >= 8 and wrong == [], (compared, wrong)


MUTANTS = {
    "alpha_ignored": lambda ctx: ctx.reference(alpha=1.0),
    "beta_ignored": lambda ctx: ctx.reference(beta=1.0),
    "c_broadcast_not_summed": lambda ctx: dict(ctx.honest(), c=ctx.params.get("beta", 1.0) * ctx.cot),
    "wrong_only_for_rank0_c": B.scaled_where(B.rank0, 3.0),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("addmm", MUTANTS[name], first_only=True), name


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("addmm") == []


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_scaled_calls():
    failing, tagged = B.pinned_verdicts("addmm")
    assert failing == tagged == {"addmm/scaled", "addmm/negative_alpha_zero_beta", "addmm/scaled_c_row"}, failing


@needs_pinned_mlx()
def test_pinned_mlx_forward_mode_ignores_alpha():
    import mlx.core as mx
    f = lambda a: mx.addmm(mx.array([[0.0]]), a, mx.array([[3.0]]), alpha=2.0, beta=1.0)   # noqa: E731
    _, (t,) = mx.jvp(f, [mx.array([[1.0]])], [mx.array([[1.0]])])
    _, (v,) = mx.vjp(f, [mx.array([[1.0]])], [mx.array([[1.0]])])
    assert t.item() == 3.0 and v.item() == 6.0   # the tangent misses alpha; the VJP has it
