"""Every checker rejects a deliberately wrong value (negative controls)."""
import numpy as np
import pytest

from mlx_vjpcheck.core import checks
from mlx_vjpcheck.core import verdict
from mlx_vjpcheck.ops._support import gather as ref

TOL = checks.tolerance("float32")


def test_accepts_exact_and_tiny_rounding():
    assert checks.compare("g", [8.0, 0.0], [8.0, 0.0], *TOL)["passed"]
    assert checks.compare("g", [1.0 + 1e-6], [1.0], *TOL)["passed"]


def test_rejects_wrong_rows_of_the_report():
    rec = checks.compare("grad:a", [3.0, 5.0], [8.0, 0.0], *TOL)
    # worst by error/tolerance: row 1 (5 against a tolerance of 3e-5)
    assert not rec["passed"] and rec["worst_index"] == [1] and rec["worst_error"] == 5.0


def test_rejects_a_miss_just_outside_tolerance():
    assert not checks.compare("g", [100.0 + 4e-3], [100.0], *TOL)["passed"]  # tol = 3.03e-3


def test_rejects_shape_mismatch_even_when_values_agree():
    rec = checks.compare("g", [[8.0, 0.0]], [8.0, 0.0], *TOL)
    assert not rec["passed"] and "shape" in rec["reason"]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_rejects_non_finite(bad):
    assert not checks.compare("g", [bad, 0.0], [8.0, 0.0], *TOL)["passed"]


def test_rejects_assign_instead_of_add_scatter():
    # Seed 001's classic bug: grad_table[ids] = grads keeps one occurrence only.
    ids, grads = np.array([0, 2, 0]), np.array([[1.0], [2.0], [3.0]])
    wrong = np.zeros((3, 1))
    wrong[ids] = grads
    right = np.zeros((3, 1))
    np.add.at(right, ids, grads)
    assert not checks.compare("grad", wrong, right, *TOL)["passed"]
    a = np.ones((3, 1, 1))
    oracle = ref.gather_mm_vjp(a, np.ones((3, 1, 1)), grads.reshape(3, 1, 1), lhs=ids)["a"]
    assert np.array_equal(oracle.reshape(3, 1), right)


def test_recheck_reproduces_the_recorded_verdict():
    rec = checks.compare("g", [3.0], [8.0], *TOL)
    assert checks.recheck(rec)["passed"] is False
    forged = dict(rec, passed=True)
    assert checks.recheck(forged)["passed"] is False


def test_verdict_rule():
    ok = {"passed": True}
    bad = {"passed": False}
    assert verdict.status([ok, ok]) == "pass"
    assert verdict.status([ok, bad]) == "fail"
    assert verdict.status([], error="ValueError: x") == "error"
    assert verdict.status([]) == "error"          # checked nothing: not a pass
    assert verdict.status([ok], crashed=True) == "crashed"


def test_unknown_dtype_has_no_tolerance():
    with pytest.raises(ValueError):
        checks.tolerance("int8")
