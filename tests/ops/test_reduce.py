"""The reductions (harness/ops/reduce.py): hand-written VJPs against float64
differences and by hand (MLX's tie convention for max and min, zeros in prod),
planted wrong rules (ties not split, the group size of mean, a rule wrong only
for a 0-d or a strided operand or in float16) caught by the catalog, and the
pinned MLX verdicts: only prod fails, where tagged: its complex second order
(cumprod's VJP takes no conjugate) and the VJP over several axes of a zero-size
operand (raises)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck import ops
from mlx_vjpcheck.ops import reduce as R

NAMES = [r.name for r in R.TABLE]


def _vjp(name, a, g, **params):
    info = ops.get(name)
    inp = {"a": np.asarray(a, dtype=float)}
    return info.reference(inp, params), info.reference_vjp(inp, np.asarray(g, dtype=float), params)["a"]


def test_rules_by_hand():
    y, d = _vjp("max", [[3, 1, 3], [2, 2, 2]], [6, 3], axis=1)
    assert y.tolist() == [3, 2] and d.tolist() == [[3, 0, 3], [1, 1, 1]]      # ties share g (MLX's convention)
    y, d = _vjp("prod", [[2, 0, 3], [0, 5, 0]], [1, 1], axis=-1)
    assert y.tolist() == [0, 0] and d.tolist() == [[0, 6, 0], [0, 0, 0]]
    y, d = _vjp("sum", [[1, 2], [3, 4]], [[5], [7]], axis=1, keepdims=True)
    assert y.tolist() == [[3], [7]] and d.tolist() == [[5, 5], [7, 7]]
    y, d = _vjp("var", [1, 2, 3, 6], 1.0, axis=0, ddof=1)
    assert y == pytest.approx(14 / 3) and d.tolist() == pytest.approx([2 * (x - 3) / 3 for x in (1, 2, 3, 6)])
    _, d = _vjp("mean", np.ones((2, 3, 4)), np.ones(3), axis=[0, 2])
    assert np.all(d == 1 / 8)


@pytest.mark.parametrize("name", NAMES)
def test_reference_vjp_agrees_with_differences(name):
    compared, wrong = B.against_differences(name)
    assert compared >= 8 and wrong == [], (compared, wrong)


def test_std_refuses_a_group_without_spread():
    from mlx_vjpcheck.core.numeric import ReferenceUndecided
    with pytest.raises(ReferenceUndecided):
        _vjp("std", [[1, 1], [1, 2]], [1, 1], axis=1)


# --- planted wrong rules -----------------------------------------------------------------------------

def _ties_not_split(ctx):
    """g to every tied extreme, undivided."""
    a, axes = ctx.operands["a"], R._axes(ctx.operands["a"], ctx.params)
    mask = a == np.max(a, axis=axes, keepdims=True)
    return {"a": R._back(ctx.cot, a, ctx.params) * mask}


MUTANTS = {
    ("max", "ties_not_split"): _ties_not_split,
    ("mean", "whole_size_not_group_size"): lambda ctx: {
        "a": R._back(ctx.cot, ctx.operands["a"], ctx.params) / max(ctx.operands["a"].size, 1)},
    ("sum", "wrong_only_for_rank0"): B.scaled_where(B.rank0),
    ("prod", "wrong_only_for_strided"): B.scaled_where(B.strided),
    ("var", "wrong_only_in_float16"): B.scaled_where(B.in_dtype("float16"), 1.5),
    ("std", "ddof_ignored"): lambda ctx: ctx.reference(ddof=0),
    ("min", "plain"): B.scaled_where(lambda s, n: True, -1.0),
}


@pytest.mark.parametrize("key", sorted(MUTANTS))
def test_mutant_is_caught(key):
    assert B.first_order_caught(key[0], MUTANTS[key], first_only=True), key


@pytest.mark.parametrize("op", ["max", "prod"])
def test_the_true_rule_planted_the_same_way_passes(op):
    assert B.first_order_control(op) == []


@needs_pinned_mlx()
@pytest.mark.parametrize("name", NAMES)
def test_pinned_mlx_fails_exactly_the_tagged_scenarios(name):
    failing, tagged = B.pinned_verdicts(name)
    want = {"prod/complex", "prod/defect/empty_several_axes_vjp"}
    assert failing == tagged and tagged == (want if name == "prod" else set()), (failing, tagged)
