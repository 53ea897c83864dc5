"""argmax and argmin (harness/ops/argreduce.py): both forms by hand (the indices,
and a * the indices with the first tied index held fixed), planted wrong rules
(a nonzero gradient through the indices, the last tied index, wrong only for a
0-d operand) caught by the catalog, and the pinned MLX verdicts (all pass)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from helpers import sorting as S
from mlx_vjpcheck import ops


def test_forms_by_hand():
    info = ops.get("argmax")
    a = {"a": np.array([[3.0, 1.0, 3.0], [2.0, 5.0, 2.0]])}
    assert info.reference(a, {"axis": 1}).tolist() == [0, 1]
    assert info.reference_vjp(a, np.ones(2), {"axis": 1})["a"].tolist() == [[0] * 3] * 2
    g = np.arange(6.0).reshape(2, 3)
    assert info.reference(a, {"axis": 1, "form": "weighted"}).tolist() == [[0, 0, 0], [2, 5, 2]]
    assert info.reference_vjp(a, g, {"axis": 1, "form": "weighted"})["a"].tolist() == [[0, 0, 0], [3, 4, 5]]
    assert ops.get("argmin").reference({"a": np.array(4.0)}, {}).tolist() == 0


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_reference_vjp_agrees_with_differences(name):
    compared, wrong = B.against_differences(name)
    assert compared >= 6 and wrong == [], (compared, wrong)


def _last_tie(ctx):
    """The weighted form with the last tied index instead of the first."""
    if ctx.params.get("form", "indices") != "weighted":
        return ctx.honest()
    a, axis = ctx.operands["a"], ctx.params.get("axis")
    flipped = np.flip(a, axis=axis)
    n = a.size if axis is None else a.shape[axis]
    idx = n - 1 - np.argmax(flipped, axis=axis, keepdims=True)
    return {"a": ctx.cot * idx}


MUTANTS = {
    "gradient_through_the_indices": lambda ctx: {"a": ctx.honest()["a"] + 1.0},
    "last_tied_index": _last_tie,
    "wrong_only_for_rank0": B.wrong_shape_where(B.rank0),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("argmax", MUTANTS[name], first_only=True), name


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("argmin") == []


# --- complex64 -----------------------------------------------------------------------------------

def test_complex_forms_by_hand():
    """Lexicographic (MLX's order): equal real parts decided by the imaginary part, an
    exact tie by the first index."""
    a = {"a": np.array([[1 + 2j, 1 + 3j, 0 + 9j, 1 + 3j]])}
    assert ops.get("argmax").reference(a, {"axis": 1}).tolist() == [1]
    assert ops.get("argmin").reference(a, {"axis": 1}).tolist() == [2]
    g = np.array([[1 + 1j, 2, 3, 4 - 1j]])
    assert ops.get("argmax").reference_vjp(a, g, {"axis": 1, "form": "weighted"})["a"].tolist() == g.tolist()


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_complex_only_mutants_are_rejected_by_complex_scenarios_only(name):
    """A conjugated gradient is rejected by complex weighted scenarios only; the index
    of the extreme real part alone only by the weighted convention/real_part_tie one."""
    conj = S.rejected_by_rule(name, S.conjugated_vjp)
    assert conj and all(n.endswith("/complex64") and "/weighted/" in n for n in conj), conj
    pick = np.argmax if name == "argmax" else np.argmin
    by_real = S.rejected_by_rule(name, S.weighted_by(lambda re, p: pick(re, axis=p.get("axis"), keepdims=True)))
    assert by_real == [f"{name}/weighted/convention/real_part_tie/complex64"], by_real


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_strategy_draws_complex64(name):
    assert S.strategy_draws_complex(name) == {"float32", "complex64"}


@needs_pinned_mlx()
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_pinned_mlx_passes_the_catalog(name):
    failing, tagged = B.pinned_verdicts(name)
    assert failing == tagged == set(), failing
