"""ops/_support/complex_parts.py: an affine op's real reference lifted to complex
operands by parts, and the complex twin of a catalog scenario."""
from __future__ import annotations

import numpy as np

from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.ops._support.complex_parts import by_parts

M = np.array([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0]])


def affine(inp, params):
    return M @ np.asarray(inp["x"]) + params.get("b", 0.0) + 0.0 * np.asarray(inp["i"]).sum()


def affine_vjp(inp, g, params):
    return {"x": M.T @ np.asarray(g)}


def test_an_affine_op_by_parts_is_the_complex_computation():
    ref, vjp = by_parts(affine, affine_vjp, ("x",))
    x, g = np.array([1 + 2j, -1j, 3.0]), np.array([2 - 1j, 1 + 1j])
    inp = {"x": x, "i": np.array([4, 5])}   # an integer operand passes through
    assert np.allclose(ref(inp, {"b": -2.0}), M @ x - 2.0)
    assert np.allclose(vjp(inp, g, {})["x"], np.conj(M).T @ g)   # conj(f')^T g, MLX's convention
    assert np.allclose(ref({"x": x.real, "i": inp["i"]}, {}), M @ x.real)   # real input: unchanged


def test_a_nonlinear_op_does_not_split_by_parts():
    """Negative control: x^2 by parts is re^2 + i im^2, not (re + i im)^2."""
    ref, _ = by_parts(lambda inp, p: np.asarray(inp["x"]) ** 2, None, ("x",))
    x = np.array([1 + 2j])
    assert not np.allclose(ref({"x": x}, {}), x ** 2)


def test_every_lifted_op_has_a_complex_twin_in_the_catalog():
    lifted = [n for n in ops.names() if ops.get(n).reference.__qualname__.startswith("by_parts")]
    twins = {s.op for s in catalog.catalog() if s.name.endswith("/complex64") and s.dtype == "complex64"}
    assert len(lifted) == 13 and set(lifted) <= twins, sorted(set(lifted) - twins)
