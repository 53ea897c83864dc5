"""matmul (harness/ops/matmul.py): the product rule against float64 differences
and by hand (vectors, broadcast batches, a real operand of a complex product),
planted wrong rules (batch axes not summed, a transposed factor, wrong only for
a zero-size, a strided or a 0-d-output call) caught by the catalog, and the
pinned MLX verdicts (all pass)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck.ops import matmul as M


def test_rule_by_hand():
    a, b = np.array([1.0, 2.0]), np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    d = M.reference_vjp({"a": a, "b": b}, np.array([1.0, 0.0, -1.0]), {})
    assert d["a"].tolist() == [-2, -2] and d["b"].tolist() == [[1, 0, -1], [2, 0, -2]]
    d = M.reference_vjp({"a": np.ones((2, 1, 2, 3)), "b": np.ones((3, 3, 2))}, np.ones((2, 3, 2, 2)), {})
    assert d["a"].shape == (2, 1, 2, 3) and np.all(d["a"] == 6) and np.all(d["b"] == 4)
    d = M.reference_vjp({"a": np.array([[1j, 1.0]]), "b": np.array([[2.0], [3.0]])}, np.array([[1 - 1j]]), {})
    assert d["a"].tolist() == [[2 - 2j, 3 - 3j]] and d["b"].tolist() == [[-1], [1]]   # conj(a)^T g, real part


def test_reference_vjp_agrees_with_differences():
    compared, wrong = B.against_differences("matmul")
    assert compared >= 15 and wrong == [], (compared, wrong)


def _unsummed(ctx):
    """d b = a^T g per batch item, not summed over the axes b was broadcast along."""
    a, g = ctx.operands["a"], ctx.cot
    if a.ndim < 2 or g.ndim < 2:
        return ctx.honest()
    return dict(ctx.honest(), b=np.matmul(np.swapaxes(a, -1, -2), g))


def _untransposed(ctx):
    """d a = g @ b, b not transposed (where the shapes let it through: a square b)."""
    a, b, g = ctx.operands["a"], ctx.operands["b"], ctx.cot
    if "a" not in ctx.names or a.ndim != 2 or b.ndim != 2 or b.shape[0] != b.shape[1]:
        return ctx.honest()
    return dict(ctx.honest(), a=np.matmul(g, b))


MUTANTS = {
    "batch_axes_not_summed": _unsummed,
    "untransposed_factor": _untransposed,
    "wrong_only_for_zero_size": B.wrong_shape_where(B.zero_size),
    "wrong_only_for_strided": B.scaled_where(B.strided),
    "wrong_only_in_bfloat16": B.scaled_where(B.in_dtype("bfloat16"), -1.0),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("matmul", MUTANTS[name], first_only=True), name


def test_wrong_only_for_a_vector_operand_is_caught():
    caught = B.first_order_caught("matmul", B.scaled_where(lambda s, n: s.operands[n].shape in ((3,),), 3.0))
    assert {"matmul/vector_matrix", "matmul/vector_vector"} <= set(caught), caught


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("matmul") == []


@needs_pinned_mlx()
def test_pinned_mlx_passes_the_catalog():
    failing, tagged = B.pinned_verdicts("matmul")
    assert failing == tagged == set(), failing
