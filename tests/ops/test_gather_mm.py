"""gather_mm: the float64 rule (ops/_support/gather.py) against values computed by
hand (the report's numbers) and a dense formulation, and MLX's index defaults."""
import numpy as np
import pytest

from mlx_vjpcheck.core import objectives
from mlx_vjpcheck.ops import gather_mm
from mlx_vjpcheck.ops._support import gather as G

A = np.array([2.0, 7.0]).reshape(2, 1, 1)
B = np.array([3.0, 5.0]).reshape(2, 1, 1)


def test_report_example_forward_and_vjp():
    # Y = [3 a0, 5 a0]; with unit cotangent dA = [3 + 5, 0], dB = [a0, a0].
    assert G.gather_mm(A, B, lhs=[0, 0]).ravel().tolist() == [6.0, 10.0]
    g = G.gather_mm_vjp(A, B, np.ones((2, 1, 1)), lhs=[0, 0])
    assert g["a"].ravel().tolist() == [8.0, 0.0]
    assert g["b"].ravel().tolist() == [2.0, 2.0]


def test_the_records_reference_reads_the_index_operands():
    """The same example through the op record: the index array is an integer operand,
    an absent one takes MLX's default."""
    inp = {"a": A, "b": B, G.LHS: np.array([0, 0])}
    assert gather_mm.reference(inp, {G.SORTED: True}).ravel().tolist() == [6.0, 10.0]
    g = gather_mm.reference_vjp(inp, np.ones((2, 1, 1)), {})
    assert g["a"].ravel().tolist() == [8.0, 0.0] and g["b"].ravel().tolist() == [2.0, 2.0]


def test_backing_tail_example_sees_only_the_logical_slice():
    a = np.array([2.0]).reshape(1, 1, 1)
    b = np.array([3.0, 5.0, 7.0]).reshape(3, 1, 1)
    assert G.gather_mm(a, b, rhs=[0, 1, 2]).sum() == 30.0
    g = G.gather_mm_vjp(a, b, np.ones((3, 1, 1)), rhs=[0, 1, 2])
    assert g["b"].ravel().tolist() == [2.0, 2.0, 2.0]
    assert g["a"].ravel().tolist() == [15.0]


def test_matrix_vjp_matches_dense_formula():
    rng = np.random.RandomState(0)
    a, b = rng.randint(-3, 4, (3, 2, 4)).astype(float), rng.randint(-3, 4, (2, 4, 5)).astype(float)
    lhs, rhs = [2, 2, 0, 1], [0, 1, 1, 0]
    g = rng.randint(-2, 3, (4, 2, 5)).astype(float)
    got = G.gather_mm_vjp(a, b, g, lhs, rhs)
    da, db = np.zeros_like(a), np.zeros_like(b)
    for q, (i, j) in enumerate(zip(lhs, rhs)):   # np.add.at semantics, written out
        da[i] += g[q] @ b[j].T
        db[j] += a[i].T @ g[q]
    assert np.array_equal(got["a"], da) and np.array_equal(got["b"], db)
    assert np.array_equal(G.gather_mm(a, b, lhs, rhs), np.stack([a[i] @ b[j] for i, j in zip(lhs, rhs)]))


def test_unselected_rows_are_exactly_zero():
    a = np.arange(1.0, 10.0).reshape(3, 1, 3)
    b = np.ones((1, 3, 2))
    g = G.gather_mm_vjp(a, b, np.ones((2, 1, 2)), lhs=[2, 2])
    assert np.all(g["a"][:2] == 0.0) and np.all(g["a"][2] == 4.0)


def test_defaults_and_broadcasting_follow_mlx_rules():
    ii, jj, shape = G.resolve_indices((1,), (3,), None, [0, 1, 2])
    assert (ii, jj, shape) == ([0, 0, 0], [0, 1, 2], (3,))
    with pytest.raises(ValueError, match="out of range"):
        G.resolve_indices((2,), (2,), [0, 2], None)


def test_pair_loss_and_its_hessian():
    y = G.gather_mm(A, B, lhs=[0, 0])
    assert objectives.pair_loss(y) == 8.0                       # 0.5 (6 - 10)^2
    g = G.gather_mm_vjp(A, B, objectives.pair_loss_cotangent(y), lhs=[0, 0])
    assert g["a"].ravel().tolist() == [8.0, 0.0]          # 4 a0 at a0 = 2
