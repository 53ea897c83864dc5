"""custom_function (harness/ops/custom.py): the three forms by hand and against
float64 differences, planted wrong rules (the two outputs' cotangents swapped,
the operands' gradients swapped, wrong only for a zero-size operand) caught by
the catalog, and the pinned MLX verdicts: only checkpoint fails, under vmap
(Depends has no vmap rule)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck.ops import custom as C


def test_forms_by_hand():
    inp, g = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 5.0])}, np.array([1.0, -1.0])
    assert C.reference_vjp(inp, g, {"form": "two_outputs"})["a"].tolist() == [1, -3]
    assert C.reference_vjp(inp, g, {"form": "checkpoint"})["a"].tolist() == [4, -6]
    assert C.reference(inp, {"form": "product"}).tolist() == [3, 10]


def test_reference_vjp_agrees_with_differences():
    compared, wrong = B.against_differences("custom_function")
    assert compared >= 6 and wrong == [], (compared, wrong)


def _cotangents_swapped(ctx):
    """The rule fed (g1, g0) for two outputs: y = o0 - 2 o1 gives g0 = g, g1 = -2 g."""
    if ctx.params["form"] != "two_outputs":
        return ctx.honest()
    a, b, g = ctx.operands["a"], ctx.operands["b"], ctx.cot
    out = {"a": -2 * g * b + g, "b": -2 * g * a + g}
    return {n: out[n] for n in ctx.names}


def _gradients_swapped(ctx):
    """The product's rule returned in the wrong order: d a = g a, d b = g b."""
    if ctx.params["form"] != "product":
        return ctx.honest()
    return {n: ctx.cot * ctx.operands[n] for n in ctx.names}


MUTANTS = {
    "cotangents_swapped": _cotangents_swapped,
    "gradients_swapped": _gradients_swapped,
    "wrong_only_for_zero_size": B.wrong_shape_where(B.zero_size),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("custom_function", MUTANTS[name], first_only=True), name


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("custom_function") == []


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_checkpoint_under_vmap():
    failing, tagged = B.pinned_verdicts("custom_function")
    assert failing == tagged == {"custom_function/checkpoint",
                                 "custom_function/checkpoint/broadcast_view"}, failing
