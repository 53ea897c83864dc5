"""hadamard_transform: the float64 reference against hand-computed transforms and
the Hadamard property, the transpose rule, semantic mutants (plausible wrong VJPs)
each rejected by the catalog, and MLX 0.32.4's untransposed-factor defect."""
from __future__ import annotations

import numpy as np
import pytest

import qmm_conv_mutants as M
from conftest import needs_pinned_mlx

OP = "hadamard_transform"


@pytest.fixture
def registry(monkeypatch):
    return M.load(monkeypatch, OP)


def _mod():
    from mlx_vjpcheck.ops import hadamard_transform
    return hadamard_transform


def _ref(a, scale):
    return _mod().reference({"a": np.asarray(a, dtype=np.float64)}, None, None, {"scale": scale})


def _vjp(a, g, scale):
    return _mod().reference_vjp({"a": np.asarray(a, dtype=np.float64)}, np.asarray(g, dtype=np.float64),
                                None, None, {"scale": scale})["a"]


def test_small_transforms_by_hand():
    assert _ref([1, 2], 1.0).tolist() == [3, -1]
    # Sylvester order 4: rows ++++, +-+-, ++--, +--+
    assert _ref([1, 2, 3, 4], 0.5).tolist() == [5, -1, -2, 0]
    assert _ref([[1, 0, 0, 0]], 1.0).tolist() == [[1, 1, 1, 1]]
    assert _ref([3.0], 0.5).tolist() == [1.5]
    assert np.allclose(_ref([1, 1, 1, 1], None), [2, 0, 0, 0])   # default scale 1/sqrt(4)


@pytest.mark.parametrize("n", [12, 20, 28, 24, 40, 56, 32])
def test_matrices_are_hadamard(n):
    M_ = _mod().matrix(n)
    assert set(np.unique(M_)) == {-1.0, 1.0}
    assert np.array_equal(M_ @ M_.T, n * np.eye(n))


def test_order_12_is_symmetric_orders_20_and_28_are_not():
    for m, symmetric in ((12, True), (20, False), (28, False)):
        F = _mod().factor(m)
        assert np.array_equal(F, F.T) == symmetric, m


@pytest.mark.parametrize("n", [8, 12, 20, 28, 40])
def test_reference_vjp_is_the_transpose(n):
    rng = np.random.RandomState(n)
    a, g = rng.randint(-3, 4, (2, n)), rng.randint(-3, 4, (2, n))
    M_ = _mod().matrix(n)
    assert np.array_equal(_vjp(a, g, -0.5), -0.5 * g @ M_)
    # <g, f(a)> = <f^T(g), a>
    assert np.isclose(np.sum(g * _ref(a, 2.0)), np.sum(_vjp(a, g, 2.0) * a))


def test_reference_vjp_agrees_with_float64_differences():
    from mlx_vjpcheck.core import numeric
    a, g = {"a": np.arange(20.0).reshape(1, 20) % 5 - 2}, np.arange(20.0).reshape(1, 20) % 3 - 1
    by_diff = numeric.vjp_by_differences(lambda x: _ref(x["a"], 0.25), a, g, ("a",))
    assert np.allclose(by_diff["a"], _vjp(a["a"], g, 0.25), atol=1e-12)


# --- semantic mutants through mx.custom_function -------------------------------------------

def _with(scale_fn):
    return lambda inp, g, p: _mod().reference_vjp(inp, g, None, None, dict(p, scale=scale_fn(p, inp)))


MUTANTS = {
    # the explicit scale dropped: the unscaled transpose
    "scale_ignored": _with(lambda p, inp: 1.0),
    # the default orthonormal scale used whatever the call said
    "default_scale": _with(lambda p, inp: None),
    # the sign of a negative scale lost
    "scale_sign_lost": _with(lambda p, inp: None if p["scale"] is None else abs(p["scale"])),
    # the scale applied twice
    "scale_squared": _with(lambda p, inp: (inp["a"].shape[-1] ** -0.5 if p["scale"] is None
                                           else p["scale"]) ** 2),
    # the rows of the batch mixed up: each row gets the next row's gradient
    "rows_rolled": lambda inp, g, p: {"a": np.roll(_mod().reference_vjp(inp, g, None, None, p)["a"], 1, axis=-2)},
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_semantic_mutant_is_rejected(registry, monkeypatch, mutant):
    assert M.rejected_by(monkeypatch, OP, MUTANTS[mutant]), mutant


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing(registry, monkeypatch):
    assert M.honest_wrapper_passes(monkeypatch, OP, _mod().reference_vjp)


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_untransposed_factor_scenarios(registry):
    from mlx_vjpcheck.running import devices, execute
    devices.select("cpu")
    for s in M.scenarios(OP):
        status = execute.run(s, "cpu")["status"]
        assert (status == "fail") == (_mod().UNTRANSPOSED in s.defect_tags), (s.name, status)


@needs_pinned_mlx()
def test_pinned_mlx_applies_the_forward_matrix_in_the_vjp():
    """The defect's mechanism: MLX's dx is M g (its JVP) where M^T g is due."""
    import mlx.core as mx
    M_ = _mod().matrix(20)
    g = np.arange(20.0) % 7 - 3
    _, (dx,) = mx.vjp(lambda a: mx.hadamard_transform(a, scale=1.0), [mx.zeros((20,))], [mx.array(g)])
    assert np.array_equal(np.array(dx), M_ @ g) and not np.array_equal(M_ @ g, M_.T @ g)


@needs_pinned_mlx()
def test_pinned_mlx_probe_says_present():
    rc, out = M.probe_verdict("hadamard_transform__untransposed_factor.py")
    assert rc == 1 and "VERDICT: defect present" in out, out
