"""The generic float64 reference VJP (core/numeric.py): its stated bound holds
against exact derivatives, it refuses what it cannot decide, and an op declared
analytic whose reference is not is caught."""
from __future__ import annotations

import numpy as np
import pytest

from mlx_vjpcheck.core import numeric

RNG = np.random.RandomState(7)


def _softmax(z):
    e = np.exp(z - 1.0)            # a constant shift keeps it analytic
    return e / np.sum(e, axis=-1, keepdims=True)


CASES = {
    # name: (forward of inputs dict, exact J^T g, analytic)
    "product": (lambda i: i["x"] * i["y"], lambda x, y, g: {"x": g * y, "y": g * x}, True),
    "exp_sin": (lambda i: np.exp(i["x"]) * np.sin(i["x"][::-1]),
                lambda x, g: {"x": g * np.exp(x) * np.sin(x[::-1])
                              + (g * np.exp(x))[::-1] * np.cos(x)}, True),
    "softmax": (lambda i: _softmax(i["x"]),
                lambda x, g: {"x": _softmax(x) * (g - np.sum(g * _softmax(x), axis=-1, keepdims=True))},
                True),
    "rsqrt_norm": (lambda i: i["x"] / np.sqrt(np.mean(i["x"] ** 2) + 0.5),
                   None, True),
}


def _inputs(name):
    x = RNG.randint(-3, 4, size=6).astype(float) + 0.5
    return {"x": x, "y": RNG.randint(-3, 4, size=6).astype(float)} if name == "product" else {"x": x}


def _exact_rsqrt(x, g):
    r = np.mean(x ** 2) + 0.5
    return {"x": g / np.sqrt(r) - x * np.sum(g * x) / (x.size * r ** 1.5)}


@pytest.mark.parametrize("analytic", [True, False], ids=["complex_step", "richardson"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_within_the_stated_bound_of_the_exact_derivative(name, analytic):
    fwd, exact, _ = CASES[name]
    inp = _inputs(name)
    g = RNG.randint(-2, 3, size=6).astype(float)
    got = numeric.vjp_by_differences(fwd, inp, g, list(inp), analytic=analytic)
    want = _exact_rsqrt(inp["x"], g) if exact is None else exact(*inp.values(), g)
    for k in want:
        err = np.abs(got[k] - want[k])
        assert np.all(err <= numeric.ACCURACY * (1 + np.abs(want[k]))), (name, k, err.max())


def test_the_bound_is_1e4_tighter_than_float32_tolerance():
    from mlx_vjpcheck.core import checks
    atol, rtol = checks.tolerance("float32")
    assert numeric.ACCURACY * 1e4 <= min(atol, rtol)


def test_a_kink_inside_the_step_is_refused_not_guessed():
    # |x| near 0: central differences straddle the kink and the Richardson table
    # does not settle; the reference must say it cannot judge.
    with pytest.raises(numeric.ReferenceUndecided):
        numeric.vjp_by_differences(lambda i: np.abs(i["x"]), {"x": np.array([0.01])}, np.ones(1), ["x"])


def test_a_wrongly_declared_analytic_reference_is_caught():
    # abs() drops the imaginary part: a complex step would silently give 0.
    with pytest.raises(numeric.ReferenceUndecided):
        numeric.vjp_by_differences(lambda i: np.abs(i["x"]), {"x": np.array([2.0])}, np.ones(1), ["x"],
                                   analytic=True)
    # so does a cast to float64
    with pytest.raises((numeric.ReferenceUndecided, Exception)):
        numeric.vjp_by_differences(lambda i: np.asarray(i["x"], dtype=np.float64) ** 2,
                                   {"x": np.array([2.0])}, np.ones(1), ["x"], analytic=True)


def test_integer_operands_are_not_differentiated():
    got = numeric.vjp_by_differences(lambda i: i["x"] * i["k"], {"x": np.array([1.0, 2.0]),
                                                               "k": np.array([3, 4])}, np.ones(2), ["x"])
    assert set(got) == {"x"} and np.allclose(got["x"], [3.0, 4.0], rtol=0, atol=1e-12)


# --- directional derivatives, kinks, complex operands -------------------------------------

def test_directional_derivative_within_the_bound():
    x = np.array([0.3, -1.2, 2.0])
    u = np.array([1.0, -2.0, 3.0])
    got = numeric.directional(lambda t: np.sin(x + t * u) * np.exp(x + t * u))
    want = (np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x)) * u
    assert np.all(np.abs(got - want) <= numeric.ACCURACY * (1 + np.abs(want)))


@pytest.mark.parametrize("kinked", [
    lambda t: np.abs(np.array([0.0, 1.0]) + t),                      # |x| at 0
    lambda t: np.sort(np.array([2.0, 2.0, 5.0]) + t * np.array([1.0, -1.0, 0.0])),   # a tie
    lambda t: np.maximum(np.array([1.0]) + 2 * t, 1.0 - t),          # max of two lines crossing
])
def test_a_kink_at_the_point_is_refused_not_averaged(kinked):
    """Every central difference across a kink is the mean of the one-sided slopes,
    which extrapolates cleanly: only the second-difference test refuses it."""
    with pytest.raises(numeric.ReferenceUndecided, match="kink"):
        numeric.directional(kinked)


def test_the_kink_test_leaves_smooth_and_polynomial_functions_alone():
    assert numeric.directional(lambda t: np.array([1.0 + t]) ** 3)[0] == pytest.approx(3.0)
    assert numeric.directional(lambda t: np.array([1e-3 * t * t + t]), quadratic=True)[0] == pytest.approx(1.0)
    # a kink away from the point (farther than the largest step) is no kink here
    assert numeric.directional(lambda t: np.abs(np.array([1.0]) + t))[0] == pytest.approx(1.0)


def test_complex_operands_follow_the_conjugate_wirtinger_convention():
    """dL/dRe z + i dL/dIm z with L = Re sum(conj(g) f(z)): conj(f'(z)) g for a
    holomorphic f, 2 z for |z|^2."""
    z = np.array([1 + 2j, -0.5 + 1j])
    g = np.array([1 + 0j, 2 - 1j])
    got = numeric.vjp_by_differences(lambda i: i["z"] ** 3, {"z": z}, g, ["z"])["z"]
    assert np.allclose(got, np.conj(3 * z ** 2) * g, rtol=0, atol=1e-7)
    got = numeric.vjp_by_differences(lambda i: np.abs(i["z"]) ** 2, {"z": z}, np.ones(2), ["z"])["z"]
    assert np.allclose(got, 2 * z, rtol=0, atol=1e-7)
    # a real operand of a complex output gets the real part only
    r = np.array([0.5, 2.0])
    got = numeric.vjp_by_differences(lambda i: i["r"] * (1 + 2j), {"r": r}, g, ["r"])["r"]
    assert np.isrealobj(got) and np.allclose(got, np.real(np.conj(1 + 2j) * g), atol=1e-7)


def test_a_non_finite_estimate_is_undecided():
    with pytest.raises(numeric.ReferenceUndecided):
        numeric.directional(lambda t: np.array([np.nan]))


def test_a_function_declared_quadratic_that_is_not_is_refused_not_judged():
    """An op record that calls an op multilinear when it is not (degree 3 along a
    line) gets no verdict from the two-level estimate, rather than a wrong one."""
    assert numeric.directional(lambda t: np.array([(1 + t) ** 2]), quadratic=True)[0] == pytest.approx(2.0)
    with pytest.raises(numeric.ReferenceUndecided):
        numeric.directional(lambda t: np.array([(1 + t) ** 3]), quadratic=True)
