"""gradcheck as a new user meets it: deliberately wrong custom gradients, each wrong in
one place only, must fail with a message pointing there; right ones must pass."""
from __future__ import annotations

import numpy as np
import pytest

mx = pytest.importorskip("mlx.core")
nn = pytest.importorskip("mlx.nn")

from mlx_vjpcheck import GradcheckError, gradcheck  # noqa: E402

RNG = np.random.default_rng(7)
X = mx.array(RNG.uniform(-2, 2, (2, 3)).astype(np.float32))
QUICK = dict(transforms=("vjp", "jvp", "identity", "vmap"), shrink=0)


def failing(fn, inputs, **kw) -> str:
    with pytest.raises(GradcheckError) as e:
        gradcheck(fn, inputs, **{**QUICK, **kw})
    return str(e.value)


def sin_with(vjp_scale=1.0, jvp_scale=1.0, vmap_scale=1.0, second_order=True, half_scale=1.0):
    """mx.sin with its own rules, each scaled to make it wrong where asked."""
    @mx.custom_function
    def f(x):
        return mx.sin(x)

    @f.vjp
    def f_vjp(x, cot, out):
        d = mx.cos(x) if second_order else mx.stop_gradient(mx.cos(x))
        scale = half_scale if cot.dtype == mx.float16 else vjp_scale
        return cot * d * scale

    @f.jvp
    def f_jvp(x, tangent):   # one input: the rules get it unwrapped
        return tangent * mx.cos(x) * jvp_scale

    @f.vmap
    def f_vmap(x, axis):
        return mx.sin(x) * vmap_scale, axis
    return f


def test_right_custom_function_passes_every_transform_and_order_2():
    report = gradcheck(sin_with(), (X,), order=2, transforms=("vjp", "jvp", "identity", "vmap", "compile"))
    assert report.passed and not report.not_differentiable


def test_wrong_at_first_order_names_input_element_and_transform():
    msg = failing(sin_with(vjp_scale=1.5), (X,), transforms=("vjp",))
    first = msg.splitlines()[1]
    assert first.startswith("FAIL  vjp [float32]") and "inputs[0][" in first and "MLX " in first


def test_wrong_only_at_second_order():
    f = sin_with(second_order=False)
    assert gradcheck(f, (X,), **QUICK).passed
    msg = failing(f, (X,), order=2)
    assert "order 2 vjp" in msg and "grad inputs[0]" in msg
    assert "FAIL  vjp" not in msg and "FAIL  jvp" not in msg


def test_wrong_only_under_vmap():
    f = sin_with(vmap_scale=2.0)
    assert gradcheck(f, (X,), transforms=("vjp", "jvp", "identity"), shrink=0).passed
    msg = failing(f, (X,))
    assert "FAIL  vmap(forward" in msg
    assert "FAIL  vjp" not in msg and "FAIL  jvp" not in msg


def test_wrong_only_in_forward_mode():
    msg = failing(sin_with(jvp_scale=0.5), (X,))
    assert "FAIL  jvp [float32]" in msg and "FAIL  vjp" not in msg
    assert "identity" in msg   # <v, J u> from the jvp no longer matches <J^T v, u>


def square_missing_conj():
    """z * z with the conjugate missing from its VJP: right for every real input."""
    @mx.custom_function
    def f(z):
        return z * z

    @f.vjp
    def f_vjp(z, cot, out):
        return cot * 2 * z   # MLX's convention needs cot * conj(2 z)
    return f


def test_wrong_only_for_complex_input():
    f = square_missing_conj()
    assert gradcheck(f, (X,), **QUICK).passed
    z = mx.array((RNG.standard_normal(4) + 1j * RNG.standard_normal(4)).astype(np.complex64))
    msg = failing(f, (z,), transforms=("vjp",))
    assert "FAIL  vjp [float32]" in msg and "inputs[0][" in msg and "j vs" in msg


def test_wrong_only_in_a_half_dtype():
    f = sin_with(half_scale=1.25)
    assert gradcheck(f, (X,), dtypes=("float32", "bfloat16"), **QUICK).passed
    msg = failing(f, (X,), dtypes=("float32", "float16"), transforms=("vjp",))
    assert "[float16]" in msg and "FAIL  vjp [float32]" not in msg


def product_wrong_for(which: str):
    @mx.custom_function
    def h(a, b):
        return a * mx.exp(b)

    @h.vjp
    def h_vjp(primals, cot, out):
        a, b = primals
        da, db = cot * mx.exp(b), cot * a * mx.exp(b)
        return (da * 3, db) if which == "a" else (da, db * 3)
    return h


def test_wrong_only_for_one_leaf_of_a_pytree():
    h = product_wrong_for("b")
    fn = lambda tree, k: {"y": h(tree["w"], tree["b"]) * k}   # k: an int, passed through  # noqa: E731
    tree = {"w": X, "b": X[::-1] * 0.5}
    msg = failing(fn, (tree, 2), transforms=("vjp",))
    assert "inputs[0]['b']" in msg and "inputs[0]['w']" not in msg.split("\n", 1)[1].split("note")[0]


class Scaled(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.weight = mx.array([0.5, -1.0, 0.25])
        self.bias = mx.array([0.1, 0.2, 0.3])
        self.h = h

    def __call__(self, x):
        return self.h(self.weight, x) + self.bias


def test_wrong_only_for_a_modules_weight():
    model = Scaled(product_wrong_for("a"))
    msg = failing(model, (X[0] * 0.5,), transforms=("vjp",))
    fails = [line for line in msg.splitlines() if line.startswith("FAIL")]
    assert fails and all("model.weight" in line for line in fails)
    assert np.array_equal(np.array(model.weight), [0.5, -1.0, 0.25])   # the module is restored


@pytest.mark.parametrize("make", [
    lambda: nn.Linear(3, 2), lambda: nn.LayerNorm(3),
    lambda: nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Linear(4, 2), nn.Tanh()),
], ids=["Linear", "LayerNorm", "MLP"])
def test_right_modules_pass(make):
    mx.random.seed(3)
    report = gradcheck(make(), (X,), **QUICK)
    assert report.passed, report.message()
    assert any(c.input.startswith("model.") for c in report.checks)


def test_mlp_with_a_loss_and_integer_targets_passes():
    mx.random.seed(4)
    model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 4))
    targets = mx.array([1, 3])

    def loss(params_model, x, y):
        return nn.losses.cross_entropy(params_model(x), y, reduction="mean")
    report = gradcheck(lambda x, y: loss(model, x, y), (X, targets), **QUICK)
    assert report.passed, report.message()


def test_abs_and_relu_at_zero_are_reported_not_failed():
    x = mx.array([0.0, 1.5, -0.75])
    for fn in (mx.abs, nn.relu):
        report = gradcheck(fn, (x,), **QUICK)
        assert report.passed
        kinks = report.not_differentiable
        assert kinks and all(c.index[:1] == [0] for c in kinks), report.message()


def test_a_kink_never_excuses_a_defect_elsewhere():
    @mx.custom_function
    def f(x):
        return mx.abs(x)

    @f.vjp
    def f_vjp(x, cot, out):
        return cot * mx.sign(x) * mx.where(x < -0.5, 2.0, 1.0)   # wrong below -0.5
    with pytest.raises(GradcheckError) as e:
        gradcheck(f, (mx.array([0.0, 1.5, -0.75]),), transforms=("vjp",), shrink=0)
    report = e.value.report
    assert report.failures[0].index == [2] and report.not_differentiable[0].index == [0]


def test_fast_mode_catches_a_wrong_gradient_in_a_big_input():
    x = mx.array(RNG.uniform(-2, 2, (400,)).astype(np.float32))
    assert gradcheck(sin_with(), (x,), transforms=("vjp", "jvp"), shrink=0).mode == "fast"
    msg = failing(sin_with(vjp_scale=1.01), (x,), transforms=("vjp",))
    assert "fast mode" in msg and "FAIL  vjp" in msg


def test_failure_returns_report_without_raising():
    report = gradcheck(sin_with(vjp_scale=2.0), (X,), raise_exception=False, transforms=("vjp",), shrink=0)
    assert not report.passed and report.failures[0].transform == "vjp"


def test_a_staircase_at_large_values_is_not_judged_but_a_wrong_rule_there_still_fails():
    """floor at 3e4: the oracle's shortest step spans many stairs (the differences see a
    line of slope 1): its second differences do not shrink with the step, so it is a jump,
    not a gradient to compare. Negative controls: floor's rule made wrong (the identity's)
    fails where the steps resolve the stairs (x = 2.3), and a smooth function's wrong rule
    fails at the same large values."""
    big = mx.array([32013.37, -26608.85, 15593.6])
    report = gradcheck(mx.floor, (big,), transforms=("vjp", "jvp"), shrink=0)
    assert report.passed and report.not_differentiable, report.message()

    @mx.custom_function
    def floor_wrong(x):
        return mx.floor(x)

    @floor_wrong.vjp
    def floor_wrong_vjp(x, cot, out):
        return cot   # the staircase's envelope, not floor's derivative (0)
    with pytest.raises(GradcheckError):
        gradcheck(floor_wrong, (mx.array([2.3, -1.6]),), transforms=("vjp",), shrink=0)

    @mx.custom_function
    def double(x):
        return 2 * x

    @double.vjp
    def double_vjp(x, cot, out):
        return cot   # wrong: 2 cot
    with pytest.raises(GradcheckError) as e:
        gradcheck(double, (big,), transforms=("vjp",), shrink=0)
    assert not e.value.report.not_differentiable


def _sort_and_sin(vjp_scale):
    """sort of x[:4] beside sin of x[4:], with its own VJP: sin's part scaled."""
    @mx.custom_function
    def f(x):
        return mx.concatenate([mx.sort(x[:4]), mx.sin(x[4:])])

    @f.vjp
    def f_vjp(x, cot, out):
        _, (g,) = mx.vjp(lambda y: mx.sort(y[:4]), [x], [cot[:4]])
        return g + mx.concatenate([mx.zeros(4), cot[4:] * mx.cos(x[4:]) * vjp_scale])
    return f


def test_ties_are_not_differentiable_but_never_excuse_a_wrong_rule_elsewhere():
    """sort of equal values: moving one element at a time shows no kink in the sorted
    position it stays at, yet the map is not differentiable (along a random direction the
    derivative is not the sum of the partials). Those outputs are left out of the checks
    and said so; a wrong rule for the other outputs still fails (the negative control)."""
    x = mx.array([0.5, 0.5, 0.5, 0.5, 1.0, -0.3])
    report = gradcheck(mx.sort, (x[:4],), transforms=("vjp", "jvp", "identity"), shrink=0)
    assert report.passed and report.not_differentiable, report.message()
    assert gradcheck(_sort_and_sin(1.0), (x,), transforms=("vjp", "jvp", "identity"), shrink=0,
                     raise_exception=False).passed
    with pytest.raises(GradcheckError) as e:
        gradcheck(_sort_and_sin(1.5), (x,), transforms=("vjp",), shrink=0)
    assert e.value.report.failures[0].index[0] in (4, 5), e.value.report.message()


def test_a_non_finite_value_is_not_differentiable_not_a_failure():
    """log at 0 is -inf: said so, no failure, the finite elements beside it still judged;
    sqrt's rule made wrong at a finite point beside a 0 still fails. (Not mean over an
    empty axis, the 0/0 the sweep met: MLX 0.32.4 can hang reducing an empty axis of an
    array made from numpy, probes/sweep/var__zero_size_hang.py, and this runs in-process.)"""
    report = gradcheck(lambda x: mx.log(x), (mx.array([0.0, 2.0, 3.0]),), shrink=0, raise_exception=False)
    assert report.passed and report.not_differentiable, report.message()
    assert any(c.status == "pass" for c in report.checks if c.transform == "vjp"), report.message()

    @mx.custom_function
    def f(x):
        return mx.sqrt(x)

    @f.vjp
    def f_vjp(x, cot, out):
        return cot / out   # wrong: cot / (2 out)
    with pytest.raises(GradcheckError):
        gradcheck(f, (mx.array([0.0, 2.0, 3.0]),), transforms=("vjp",), shrink=0)


def scaled_copy(wrong: str):
    """y = 2 x with its own VJP: right (2 g); 2 g x (right at x = 1 only, wrong nearby, as
    full's g * v was at v = 1); or 2 sign(g) exp(log |g|), as logcumsumexp's was: right and
    finite everywhere, but its derivative in g is NaN where g is 0."""
    @mx.custom_function
    def f(x):
        return 2 * x

    @f.vjp
    def f_vjp(x, cot, out):
        if wrong == "depends_on_x":
            return cot * 2 * x
        if wrong == "divides_by_cotangent":
            return 2 * mx.sign(cot) * mx.exp(mx.log(mx.abs(cot)))
        return cot * 2
    return f


def test_a_vjp_right_at_the_point_but_built_wrongly_fails_at_order_2():
    """At x = 1, g * 2 * x is the right first order; its derivative in x (2 g) is not 0.
    The float64 VJP is built the same way, so only fn's own second differences show it."""
    ones = mx.array([1.0, 1.0, 1.0])
    assert gradcheck(scaled_copy("depends_on_x"), (ones,), shrink=0, transforms=("vjp",)).passed
    msg = failing(scaled_copy("depends_on_x"), (ones,), order=2, transforms=("vjp",))
    assert "order 2 hessian" in msg
    assert gradcheck(scaled_copy("right"), (ones,), order=2, transforms=("vjp",), shrink=0).passed


def test_a_vjp_not_finite_at_a_zero_cotangent_fails_at_order_2():
    x = mx.array([0.5, -1.0, 2.0])
    assert gradcheck(scaled_copy("divides_by_cotangent"), (x,), shrink=0, transforms=("vjp",)).passed
    msg = failing(scaled_copy("divides_by_cotangent"), (x,), order=2, transforms=("vjp",))
    assert "d cotangent" in msg and "nan" in msg


def test_a_vjp_that_raises_fails_unless_mlx_has_no_rule():
    @mx.custom_function
    def f(x):
        return mx.sin(x)

    @f.vjp
    def f_vjp(x, cot, out):
        return cot.reshape(7, 7)   # raises: a broken rule, not a missing one
    msg = failing(f, (X,), transforms=("vjp",))
    assert "raises where fn itself works" in msg
    # a primitive MLX has no JVP for: stated, not failed (here: none known to the test is
    # guaranteed, so a custom_function without a jvp rule stands in)
    report = gradcheck(lambda x: mx.sin(x), (X,), transforms=("vjp", "jvp"), shrink=0, raise_exception=False)
    assert report.passed
