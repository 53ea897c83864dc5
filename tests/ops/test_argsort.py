"""argsort and argpartition (harness/ops/argsort.py): the forms by hand (the kth
position's index for argpartition), ties refused, planted wrong rules (a
nonzero gradient through the indices, a descending order, wrong only for a
zero-size operand) caught by the catalog, and the pinned MLX verdicts (all pass)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from helpers import sorting as S
from mlx_vjpcheck import ops
from mlx_vjpcheck.core.numeric import ReferenceUndecided


def test_forms_by_hand():
    a = {"a": np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])}
    assert ops.get("argsort").reference(a, {"axis": 1}).tolist() == [[1, 2, 0], [0, 2, 1]]
    assert ops.get("argsort").reference(a, {"axis": None}).tolist() == [3, 1, 2, 0, 5, 4]
    assert ops.get("argpartition").reference(a, {"kth": 1, "axis": 1}).tolist() == [[2], [2]]
    d = ops.get("argpartition").reference_vjp(a, np.ones((2, 3)), {"kth": 2, "axis": 1, "form": "weighted"})
    assert d["a"].tolist() == [[0, 0, 0], [1, 1, 1]]
    with pytest.raises(ReferenceUndecided):
        ops.get("argsort").reference({"a": np.array([1.0, 1.0])}, {"axis": 0})


@pytest.mark.parametrize("name", ["argsort", "argpartition"])
def test_reference_vjp_agrees_with_differences(name):
    compared, wrong = B.against_differences(name)
    assert compared >= 4 and wrong == [], (compared, wrong)


def _descending(ctx):
    if ctx.params.get("form", "indices") != "weighted":
        return ctx.honest()
    a, axis = ctx.operands["a"], ctx.params.get("axis", -1)
    return {"a": ctx.cot * np.argsort(-a, axis=axis)}


MUTANTS = {
    "gradient_through_the_indices": lambda ctx: {"a": ctx.honest()["a"] - 2.0},
    "descending_order": _descending,
    "wrong_only_for_zero_size": B.wrong_shape_where(B.zero_size),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("argsort", MUTANTS[name], first_only=True), name


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("argpartition") == []


# --- complex64 -----------------------------------------------------------------------------------

def test_complex_forms_by_hand():
    """Lexicographic (MLX's order): equal real parts ordered by the imaginary part."""
    a = {"a": np.array([[1 + 2j, 1 - 1j, 0 + 5j]])}
    assert ops.get("argsort").reference(a, {"axis": 1}).tolist() == [[2, 1, 0]]
    assert ops.get("argpartition").reference(a, {"kth": 1, "axis": 1}).tolist() == [[1]]
    d = ops.get("argsort").reference_vjp(a, np.array([[1 + 1j, 2, 3]]), {"axis": 1, "form": "weighted"})
    assert d["a"].tolist() == [[2 + 2j, 2, 0]]   # g * idx, unconjugated


def _argsort_real(re, params):
    axis = params.get("axis", -1)
    return np.argsort(re.reshape(-1) if axis is None else re, axis=-1 if axis is None else axis, kind="stable")


def _argpartition_real(re, params):
    order = np.argsort(re, axis=params.get("axis", -1), kind="stable")
    return np.take(order, [params["kth"]], axis=params.get("axis", -1))


BY_REAL = {"argsort": _argsort_real, "argpartition": _argpartition_real}


@pytest.mark.parametrize("name", ["argsort", "argpartition"])
def test_complex_only_mutants_are_rejected_by_complex_scenarios_only(name):
    """A conjugated gradient is rejected by complex weighted scenarios only; indices
    from the real parts alone only by the weighted convention/real_part_tie one (the
    orders differ only inside a block of equal real parts)."""
    conj = S.rejected_by_rule(name, S.conjugated_vjp)
    assert conj and all(n.endswith("/complex64") and "/weighted/" in n for n in conj), conj
    by_real = S.rejected_by_rule(name, S.weighted_by(BY_REAL[name]))
    assert by_real == [f"{name}/weighted/convention/real_part_tie/complex64"], by_real


@pytest.mark.parametrize("name", ["argsort", "argpartition"])
def test_strategy_draws_complex64(name):
    assert S.strategy_draws_complex(name) == {"float32", "complex64"}


@needs_pinned_mlx()
@pytest.mark.parametrize("name", ["argsort", "argpartition"])
def test_pinned_mlx_passes_the_catalog(name):
    failing, tagged = B.pinned_verdicts(name)
    assert failing == tagged == set(), failing
