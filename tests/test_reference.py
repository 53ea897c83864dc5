"""The float64 oracles against values computed by hand (the report's numbers)."""
import numpy as np
import pytest

from mlx_vjpcheck.core import quant
from mlx_vjpcheck.core import objectives
from mlx_vjpcheck.ops import gather_mm as ref
from mlx_vjpcheck.ops import gather_qmm as qref

A = np.array([2.0, 7.0]).reshape(2, 1, 1)
B = np.array([3.0, 5.0]).reshape(2, 1, 1)


def test_report_example_forward_and_vjp():
    # Y = [3 a0, 5 a0]; with unit cotangent dA = [3 + 5, 0], dB = [a0, a0].
    assert ref.gather_mm(A, B, lhs=[0, 0]).ravel().tolist() == [6.0, 10.0]
    g = ref.gather_mm_vjp(A, B, np.ones((2, 1, 1)), lhs=[0, 0])
    assert g["a"].ravel().tolist() == [8.0, 0.0]
    assert g["b"].ravel().tolist() == [2.0, 2.0]


def test_backing_tail_example_sees_only_the_logical_slice():
    a = np.array([2.0]).reshape(1, 1, 1)
    b = np.array([3.0, 5.0, 7.0]).reshape(3, 1, 1)
    assert ref.gather_mm(a, b, rhs=[0, 1, 2]).sum() == 30.0
    g = ref.gather_mm_vjp(a, b, np.ones((3, 1, 1)), rhs=[0, 1, 2])
    assert g["b"].ravel().tolist() == [2.0, 2.0, 2.0]
    assert g["a"].ravel().tolist() == [15.0]


def test_matrix_vjp_matches_dense_formula():
    rng = np.random.RandomState(0)
    a, b = rng.randint(-3, 4, (3, 2, 4)).astype(float), rng.randint(-3, 4, (2, 4, 5)).astype(float)
    lhs, rhs = [2, 2, 0, 1], [0, 1, 1, 0]
    g = rng.randint(-2, 3, (4, 2, 5)).astype(float)
    got = ref.gather_mm_vjp(a, b, g, lhs, rhs)
    da, db = np.zeros_like(a), np.zeros_like(b)
    for q, (i, j) in enumerate(zip(lhs, rhs)):   # np.add.at semantics, written out
        da[i] += g[q] @ b[j].T
        db[j] += a[i].T @ g[q]
    assert np.array_equal(got["a"], da) and np.array_equal(got["b"], db)
    assert np.array_equal(ref.gather_mm(a, b, lhs, rhs), np.stack([a[i] @ b[j] for i, j in zip(lhs, rhs)]))


def test_unselected_rows_are_exactly_zero():
    a = np.arange(1.0, 10.0).reshape(3, 1, 3)
    b = np.ones((1, 3, 2))
    g = ref.gather_mm_vjp(a, b, np.ones((2, 1, 2)), lhs=[2, 2])
    assert np.all(g["a"][:2] == 0.0) and np.all(g["a"][2] == 4.0)


def test_defaults_and_broadcasting_follow_mlx_rules():
    ii, jj, shape = ref.resolve_indices((1,), (3,), None, [0, 1, 2])
    assert (ii, jj, shape) == ([0, 0, 0], [0, 1, 2], (3,))
    with pytest.raises(ValueError, match="out of range"):
        ref.resolve_indices((2,), (2,), [0, 2], None)


def test_quantized_report_example():
    K = N = 32
    x = np.array([2.0] * K + [7.0] * K).reshape(2, 1, K)
    codes = np.ones((2, N, K))
    scales = np.ones((2, N, 1))
    biases = np.concatenate([np.full((1, N, 1), 2.0), np.full((1, N, 1), 4.0)])
    w = qref.dequantize(codes, scales, biases, 32)
    assert np.all(w[0] == 3.0) and np.all(w[1] == 5.0)
    y = qref.gather_qmm(x, codes, scales, biases, lhs=[0, 0], group_size=32)
    assert np.all(y[0] == 2 * 3 * K) and np.all(y[1] == 2 * 5 * K)
    g = qref.gather_qmm_vjp(x, codes, scales, biases, np.ones((2, 1, N)), lhs=[0, 0], group_size=32)
    assert np.all(g["x"][0] == 256.0) and np.all(g["x"][1] == 0.0)      # 32*3 + 32*5
    assert np.all(g["scales"] == 64.0) and np.all(g["biases"] == 64.0)   # sum_k code * x0


def test_dequantize_groups_along_k():
    codes = np.array([[[1, 2, 3, 4]]], dtype=float)
    w = qref.dequantize(codes, np.array([[[2.0, -1.0]]]), np.array([[[0.5, 10.0]]]), 2)
    assert w.ravel().tolist() == [2.5, 4.5, 7.0, 6.0]


def test_pair_loss_and_its_hessian():
    y = ref.gather_mm(A, B, lhs=[0, 0])
    assert objectives.pair_loss(y) == 8.0                       # 0.5 (6 - 10)^2
    g = ref.gather_mm_vjp(A, B, objectives.pair_loss_cotangent(y), lhs=[0, 0])
    assert g["a"].ravel().tolist() == [8.0, 0.0]          # 4 a0 at a0 = 2


def test_pack_matches_documented_words():
    assert quant.pack(np.ones((1, 8)), 4).tolist() == [[0x11111111]]
    assert quant.pack(np.ones((1, 4)), 8).tolist() == [[0x01010101]]
    assert quant.pack([[1, 0, 0, 0, 0, 0, 0, 15]], 4).tolist() == [[0xF0000001]]
    with pytest.raises(ValueError):
        quant.pack([[16] * 8], 4)


def test_dequantize_groups_along_the_stored_last_axis_untransposed():
    # Stored (E, K, N) = (1, 2, 4), groups of 2 along N: MLX quantizes the last axis.
    codes = np.array([[[1, 2, 3, 4], [5, 6, 7, 8]]], dtype=float)
    scales = np.array([[[1.0, 2.0], [3.0, 4.0]]])
    biases = np.zeros((1, 2, 2))
    w = qref.dequantize(codes, scales, biases, 2)
    assert w.ravel().tolist() == [1.0, 2.0, 6.0, 8.0, 15.0, 18.0, 28.0, 32.0]
