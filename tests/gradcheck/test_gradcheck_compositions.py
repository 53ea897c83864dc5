"""Negative controls of the transform compositions (harness/gradcheck/consistency.py):
for each one, a rule wrong only under that composition must fail it, and only it; the
right rule passes every composition.

Where a custom rule cannot see the composition (vmap's out_axes, mx.compile, a shapeless
compile's call shape are MLX's business, not the rule's), the control injects the wrong
transform into MLX instead, as a defect of MLX's own would be: a vmap that drops
out_axes, a compile wrong for functions of one argument, a shapeless compile wrong
past the checked size."""
from __future__ import annotations

import numpy as np
import pytest

mx = pytest.importorskip("mlx.core")

from mlx_vjpcheck import GradcheckError, gradcheck  # noqa: E402
from mlx_vjpcheck.gradcheck import consistency  # noqa: E402

RNG = np.random.default_rng(11)
# (3,) per example: BATCH (3) examples stack to a square, so a rule that reads the
# batch on the wrong axis gives wrong values, not a shape error MLX refuses
X3 = mx.array(RNG.uniform(-2, 2, (3,)).astype(np.float32))
X33 = mx.array(RNG.uniform(-2, 2, (3, 3)).astype(np.float32))
Y3 = mx.array(RNG.uniform(-2, 2, (3,)).astype(np.float32))
VMAP = dict(transforms=("vjp", "vmap"), shrink=0)


def failed(fn, inputs, **kw) -> set:
    with pytest.raises(GradcheckError) as e:
        gradcheck(fn, inputs, **{**VMAP, **kw})
    return {c.transform for c in e.value.report.failures}


def sin_fn(vmap_rule=None, vjp_rule=None):
    @mx.custom_function
    def f(x):
        return mx.sin(x)

    @f.vjp
    def f_vjp(x, cot, out):
        return vjp_rule(x, cot) if vjp_rule else cot * mx.cos(x)

    @f.vmap
    def f_vmap(x, axis):   # one input: the rule gets it unwrapped
        return vmap_rule(x, axis) if vmap_rule else (mx.sin(x), axis)
    return f


def test_right_rules_pass_every_composition():
    report = gradcheck(sin_fn(), (X33,), transforms=("vjp", "jvp", "identity", "vmap", "compile"), shrink=0)
    assert report.passed, report.message()
    names = {c.transform for c in report.checks}
    assert {"vmap(forward, out_axes=last)", "vmap(vjp, cotangent from the output)", "vmap(grad)",
            "vmap(vmap(forward))", "vmap(vmap(vjp))", "vmap(forward) under vjp", "compile(forward)",
            "compile(vjp)", "compile(jvp)", "compile(vjp, shapeless)",
            "compile(vjp, shapeless, traced here, called smaller)",
            "compile(vjp, shapeless, traced here, called larger)"} <= names


def test_vmap_examples_are_distinct():
    """A rule that computes example 0 and copies it to the whole batch fails: the batch
    holds distinct examples (it would pass a batch of copies)."""
    def first_for_all(x, axis):
        y = mx.sin(mx.take(x, mx.array([0]), axis=axis))
        return mx.broadcast_to(y, x.shape), axis
    assert "vmap(forward, in_axes=0)" in failed(sin_fn(vmap_rule=first_for_all), (X3,))


def test_out_axes_wrong_only_there(monkeypatch):
    """An MLX whose vmap ignores out_axes: only the out_axes composition sees it."""
    real = mx.vmap
    monkeypatch.setattr(mx, "vmap", lambda f, in_axes=0, out_axes=0: real(f, in_axes=in_axes))
    assert failed(sin_fn(), (X3,)) == {"vmap(forward, out_axes=last)"}


def product_fn(wrong_when_shared: bool):
    """x * y whose vmap rule, when an operand is shared by the batch (axis None),
    forgets it (a rule written for batched operands only)."""
    @mx.custom_function
    def f(x, y):
        return x * y

    @f.vmap
    def f_vmap(inputs, axes):
        x, y = inputs
        ax, ay = axes
        if wrong_when_shared and (ax is None or ay is None):
            return (x if ay is None else y) + 0 * (x * y), ax if ax is not None else ay
        y = y if ay is None or ax is None else mx.moveaxis(y, ay, ax)
        return x * y, ax if ax is not None else ay
    return f


def test_unbatched_operand_wrong_only_there():
    assert gradcheck(product_fn(False), (X3, Y3), **VMAP).passed
    assert failed(product_fn(True), (X3, Y3)) == {"vmap(forward, input 0 unbatched)",
                                                 "vmap(forward, input 1 unbatched)"}


def helper(wrong: str):
    """c * cos(x) as a custom function whose vmap rule is wrong in one way: "axis" reads
    the cotangent's batch on x's axis; "shared" scales it when the cotangent is unbatched."""
    @mx.custom_function
    def h(x, c):
        return c * mx.cos(x)

    @h.vmap
    def h_vmap(inputs, axes):
        x, c = inputs
        ax, ac = axes
        if ac is None:
            return c * mx.cos(x) * (1.5 if wrong == "shared" else 1.0), ax
        if ax is None:
            return c * mx.cos(x), ac
        if wrong != "axis":
            c = mx.moveaxis(c, ac, ax)
        return c * mx.cos(x), ax
    return h


def test_cotangent_from_the_output_wrong_only_there():
    """The forward's rule puts the batch last; the VJP's helper assumes the cotangent is
    batched on x's axis, true of every stacked cotangent, false of one made from the output."""
    h = helper("axis")

    def batch_last(x, axis):
        return mx.moveaxis(mx.sin(x), axis, -1), x.ndim - 1
    f = sin_fn(vmap_rule=batch_last, vjp_rule=h)
    assert failed(f, (X3,)) == {"vmap(vjp, cotangent from the output)"}


def test_grad_inside_vmap_wrong_only_there():
    f = sin_fn(vjp_rule=helper("shared"))
    assert failed(f, (X3,)) == {"vmap(grad)"}


def test_nested_vmap_wrong_only_there():
    """The vmap rule calls a helper whose own vmap rule is wrong: seen only when the
    rule's output is mapped again (vmap of vmap)."""
    @mx.custom_function
    def k(x):
        return mx.sin(x)

    @k.vmap
    def k_vmap(x, axis):
        return 2 * mx.sin(x), axis

    assert failed(sin_fn(vmap_rule=lambda x, axis: (k(x), axis)), (X3,)) == {"vmap(vmap(forward))"}


def test_vmap_under_vjp_wrong_only_there():
    """A vmap rule right in value but built from a stopped gradient: only the gradient of
    the mapped function (vmap inside grad) goes through it."""
    def no_grad(x, axis):
        return x + mx.stop_gradient(mx.sin(x) - x), axis
    assert failed(sin_fn(vmap_rule=no_grad), (X3,)) == {"vmap(forward) under vjp"}


def test_compile_of_forward_wrong_only_there(monkeypatch):
    """An MLX whose compile is wrong for functions of one argument (the forward here; the
    VJP and the JVP take two)."""
    real = mx.compile

    def compile_(f, shapeless=False, **kw):
        cf = real(f, shapeless=shapeless, **kw)
        return lambda *a: [2 * y for y in cf(*a)] if len(a) == 1 else cf(*a)
    monkeypatch.setattr(mx, "compile", compile_)
    assert failed(sin_fn(), (X33,), transforms=("vjp", "compile")) == {"compile(forward)"}


def test_shapeless_called_larger_wrong_only_there(monkeypatch):
    """An MLX whose shapeless compile is wrong past the checked size (3 rows): traced at 2
    and called at 3 it is right; traced at 3 and called at 4 it is not."""
    real = mx.compile

    def compile_(f, shapeless=False, **kw):
        cf = real(f, shapeless=shapeless, **kw)
        return lambda *a: [2 * y for y in cf(*a)] if shapeless and a[0].shape[0] > 3 else cf(*a)
    monkeypatch.setattr(mx, "compile", compile_)
    assert failed(sin_fn(), (X33,), transforms=("vjp", "compile"), isolated=True) == {
        "compile(vjp, shapeless, traced here, called larger)"}


def test_shapeless_called_smaller_wrong_only_there(monkeypatch):
    """An MLX whose shapeless compile is wrong below the traced size."""
    real = mx.compile

    def compile_(f, shapeless=False, **kw):
        cf, seen = real(f, shapeless=shapeless, **kw), []

        def call(*a):
            seen.append(a[0].shape[0])
            return [2 * y for y in cf(*a)] if shapeless and a[0].shape[0] < seen[0] else cf(*a)
        return call
    monkeypatch.setattr(mx, "compile", compile_)
    assert failed(sin_fn(), (X33,), transforms=("vjp", "compile"), isolated=True) == {
        "compile(vjp, shapeless, traced here, called smaller)"}


def test_batch_helper_gives_distinct_examples():
    """The batch itself: no two examples of an argument equal (a batch of copies would let
    a rule that mixes examples up pass)."""
    class S:
        rng = np.random.default_rng(0)

        def random(self, shape, cplx):
            return self.rng.standard_normal(shape)

    class M:
        s = S()
    ex = consistency._batch(M(), [mx.array(np.ones((2, 2), np.float32))])[0]
    assert all(not np.array_equal(ex[i], ex[j]) for i in range(len(ex)) for j in range(i))


def test_measured_rounding_never_excuses_a_rule_one_percent_off():
    """The float32 rounding allowed on a failing vmap comparison (the loop measured against
    float64) is of rounding's size: a vmap rule 1 % off still fails."""
    assert "vmap(forward, in_axes=0)" in failed(sin_fn(vmap_rule=lambda x, axis: (1.01 * mx.sin(x), axis)), (X3,))


def test_rounding_is_measured_against_the_same_loop_in_float64():
    class S:
        rng = np.random.default_rng(0)

        def random(self, shape, cplx):
            return self.rng.standard_normal(shape)

    class M:
        s = S()
    x = mx.array(np.array([0.3, 0.7, 1.1], dtype=np.float32))
    f = lambda x: [(x + 1e4) - 1e4]   # noqa: E731 (float32 cancellation: rounding ~5e-4, float64 exact)
    want = consistency._loop(f, consistency._batch(M(), [x]), [x])
    floors = consistency._rounding(want)
    assert floors is not None and floors[0] > 0
