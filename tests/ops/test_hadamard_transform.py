"""hadamard_transform: the float64 reference against hand-computed transforms and
the Hadamard property, the transpose rule, semantic mutants (plausible wrong VJPs,
planted by helpers/wrong_vjp.py) each rejected by the catalog, and MLX 0.32.4's
untransposed-factor defect (the catalog verdicts, the mechanism, the rendered
reproducer)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops import hadamard_transform as H

OP = "hadamard_transform"


def _ref(a, scale):
    return H.reference({"a": np.asarray(a, dtype=np.float64)}, {"scale": scale})


def _vjp(a, g, scale):
    return H.reference_vjp({"a": np.asarray(a, dtype=np.float64)}, np.asarray(g, dtype=np.float64),
                           {"scale": scale})["a"]


def test_small_transforms_by_hand():
    assert _ref([1, 2], 1.0).tolist() == [3, -1]
    # Sylvester order 4: rows ++++, +-+-, ++--, +--+
    assert _ref([1, 2, 3, 4], 0.5).tolist() == [5, -1, -2, 0]
    assert _ref([[1, 0, 0, 0]], 1.0).tolist() == [[1, 1, 1, 1]]
    assert _ref([3.0], 0.5).tolist() == [1.5]
    assert np.allclose(_ref([1, 1, 1, 1], None), [2, 0, 0, 0])   # default scale 1/sqrt(4)


@pytest.mark.parametrize("n", [12, 20, 28, 24, 40, 56, 32])
def test_matrices_are_hadamard(n):
    M = H.matrix(n)
    assert set(np.unique(M)) == {-1.0, 1.0}
    assert np.array_equal(M @ M.T, n * np.eye(n))


def test_order_12_is_symmetric_orders_20_and_28_are_not():
    for m, symmetric in ((12, True), (20, False), (28, False)):
        F = H.factor(m)
        assert np.array_equal(F, F.T) == symmetric, m


@pytest.mark.parametrize("n", [8, 12, 20, 28, 40])
def test_reference_vjp_is_the_transpose(n):
    rng = np.random.RandomState(n)
    a, g = rng.randint(-3, 4, (2, n)), rng.randint(-3, 4, (2, n))
    M = H.matrix(n)
    assert np.array_equal(_vjp(a, g, -0.5), -0.5 * g @ M)
    # <g, f(a)> = <f^T(g), a>
    assert np.isclose(np.sum(g * _ref(a, 2.0)), np.sum(_vjp(a, g, 2.0) * a))


def test_reference_vjp_agrees_with_float64_differences():
    from mlx_vjpcheck.core import numeric
    a, g = {"a": np.arange(20.0).reshape(1, 20) % 5 - 2}, np.arange(20.0).reshape(1, 20) % 3 - 1
    by_diff = numeric.vjp_by_differences(lambda x: _ref(x["a"], 0.25), a, g, ("a",))
    assert np.allclose(by_diff["a"], _vjp(a["a"], g, 0.25), atol=1e-12)


# --- semantic mutants, planted through helpers/wrong_vjp.py ---------------------------------

def _scaled(scale_of):
    """The true transpose rule, under the scale scale_of(ctx) instead of the call's."""
    return lambda ctx: ctx.reference(scale=scale_of(ctx))


def _squared(ctx):
    scale = ctx.params["scale"]
    return (ctx.operands["a"].shape[-1] ** -0.5 if scale is None else scale) ** 2


MUTANTS = {
    # the explicit scale dropped: the unscaled transpose
    "scale_ignored": _scaled(lambda ctx: 1.0),
    # the default orthonormal scale used whatever the call said
    "default_scale": _scaled(lambda ctx: None),
    # the sign of a negative scale lost
    "scale_sign_lost": _scaled(lambda ctx: None if ctx.params["scale"] is None else abs(ctx.params["scale"])),
    # the scale applied twice
    "scale_squared": _scaled(_squared),
    # the rows of the batch mixed up: each row gets the next row's gradient
    "rows_rolled": lambda ctx: {"a": np.roll(ctx.reference()["a"], 1, axis=-2)},
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_semantic_mutant_is_rejected(mutant):
    assert W.caught(OP, MUTANTS[mutant], first_only=True), mutant


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing():
    assert W.honest_control(OP)


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_untransposed_factor_scenarios():
    """... and the complex rows (the register's complex_input_cast_to_real)."""
    for s in W.scenarios(OP):
        status = W.honest(OP)[s.name]
        assert (status == "fail") == bool({H.UNTRANSPOSED, H.COMPLEX_CAST} & set(s.defect_tags)), (s.name, status)


def test_complex_reference_is_the_documented_matrix_product():
    """MLX's docs: equivalent to hadamard(n) @ a * scale. Complex input keeps its
    imaginary part; the VJP is scale M^T g in complex arithmetic (M is real)."""
    a = np.array([[1 + 2j, 3 - 1j]])
    assert np.allclose(H.reference({"a": a}, {"scale": 1.0}), [[4 + 1j, -2 + 3j]])
    d = H.reference_vjp({"a": a}, np.array([[1 + 0j, 1j]]), {"scale": 1.0})["a"]
    assert np.allclose(d, [[1 + 1j, 1 - 1j]])


@needs_pinned_mlx()
def test_pinned_mlx_drops_the_imaginary_part_of_complex_input():
    import mlx.core as mx
    (y,), (d,) = mx.vjp(lambda a: mx.hadamard_transform(a, scale=1.0),
                        [mx.array(np.array([1 + 2j, 3 - 1j], dtype=np.complex64))], [mx.array([1.0, 1.0])])
    assert y.dtype == mx.float32 and np.array(y).tolist() == [4.0, -2.0]
    assert d.dtype == mx.complex64 and np.array(d).tolist() == [2, 0]


@needs_pinned_mlx()
def test_pinned_mlx_applies_the_forward_matrix_in_the_vjp():
    """The defect's mechanism: MLX's dx is M g (its JVP) where M^T g is due."""
    import mlx.core as mx
    M = H.matrix(20)
    g = np.arange(20.0) % 7 - 3
    _, (dx,) = mx.vjp(lambda a: mx.hadamard_transform(a, scale=1.0), [mx.zeros((20,))], [mx.array(g)])
    assert np.array_equal(np.array(dx), M @ g) and not np.array_equal(M @ g, M.T @ g)


@needs_pinned_mlx()
@pytest.mark.parametrize("name, present", [(f"{H.UNTRANSPOSED}/n20/ones", True), ("h12/n12/scale_1", False)])
def test_pinned_mlx_reproducer_says(name, present, tmp_path):
    """The report's script (probes/findings/hadamard_transform__untransposed_factor.py: n 20, an
    all-ones cotangent) in the rendered form of the catalog's n20/ones (the same cotangent, so the
    same dx = scale M^T g), and the symmetric order-12 factor as its control."""
    from mlx_vjpcheck.cases import reproducer
    s = {s.name: s for s in W.scenarios(OP)}[f"{OP}/{name}"]
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=600)
    out = proc.stdout + proc.stderr
    verdict = "VERDICT: defect present (grad:a differ)" if present else "VERDICT: defect absent"
    assert proc.returncode == int(present) and verdict in out, out
