"""logcumsumexp (harness/ops/logcumsumexp.py): the window rule against float64
differences and by hand under every flag, planted wrong rules (reverse or
inclusive ignored, wrong only for a strided operand) caught by the catalog, and
the pinned MLX verdicts: only the second-order call with a zero cotangent entry
fails (NaN from Scan::vjp's log|g|)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck.ops import logcumsumexp as L


def test_rule_by_hand():
    x, g = {"a": np.log(np.array([1.0, 2.0, 3.0]))}, np.array([1.0, 10.0, 100.0])
    y = L.reference(x, {"axis": 0})
    assert np.allclose(np.exp(y), [1, 3, 6])
    d = L.reference_vjp(x, g, {"axis": 0})["a"]
    assert np.allclose(d, [1 + 10 / 3 + 100 / 6, 2 * (10 / 3 + 100 / 6), 3 * 100 / 6])
    y = L.reference(x, {"axis": 0, "reverse": True, "inclusive": False})
    assert np.isneginf(y[2]) and np.allclose(np.exp(y[:2]), [5, 3])


def test_reference_vjp_agrees_with_differences():
    compared, wrong = B.against_differences("logcumsumexp")
    assert compared >= 15 and wrong == [], (compared, wrong)


MUTANTS = {
    "reverse_ignored": lambda ctx: ctx.reference(reverse=not ctx.params.get("reverse", False)),
    "inclusive_ignored": lambda ctx: ctx.reference(inclusive=True),
    "wrong_only_for_strided": B.scaled_where(B.strided),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("logcumsumexp", MUTANTS[name], first_only=True), name


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("logcumsumexp") == []


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_zero_cotangent_second_order():
    failing, tagged = B.pinned_verdicts("logcumsumexp")
    assert failing == tagged == {"logcumsumexp/defect/second_order_zero_cotangent"}, failing
