"""logcumsumexp (harness/ops/logcumsumexp.py): the window rule against float64
differences and by hand under every flag, planted wrong rules (reverse or
inclusive ignored, wrong only for a strided operand) caught by the catalog, and
the pinned MLX verdicts: only the second-order call with a zero cotangent entry
fails (NaN from Scan::vjp's log|g|), and every complex call (the register's
complex_logaddexp_scan_vjp: Scan::vjp drops g's imaginary part and does not
conjugate), the reference confirmed there by differences of MLX's own forward."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck.ops import logcumsumexp as L


def test_rule_by_hand():
    x, g = {"a": np.log(np.array([1.0, 2.0, 3.0]))}, np.array([1.0, 10.0, 100.0])
    y = L.reference(x, {"axis": 0})
    assert np.allclose(np.exp(y), [1, 3, 6])
    d = L.reference_vjp(x, g, {"axis": 0})["a"]
    assert np.allclose(d, [1 + 10 / 3 + 100 / 6, 2 * (10 / 3 + 100 / 6), 3 * 100 / 6])
    y = L.reference(x, {"axis": 0, "reverse": True, "inclusive": False})
    assert np.isneginf(y[2]) and np.allclose(np.exp(y[:2]), [5, 3])


def test_reference_vjp_agrees_with_differences():
    compared, wrong = B.against_differences("logcumsumexp")
    assert compared >= 15 and wrong == [], (compared, wrong)


MUTANTS = {
    "reverse_ignored": lambda ctx: ctx.reference(reverse=not ctx.params.get("reverse", False)),
    "inclusive_ignored": lambda ctx: ctx.reference(inclusive=True),
    "wrong_only_for_strided": B.scaled_where(B.strided),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("logcumsumexp", MUTANTS[name], first_only=True), name


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("logcumsumexp") == []


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_zero_cotangent_second_order():
    failing, tagged = B.pinned_verdicts("logcumsumexp")
    complex_ = {f"logcumsumexp/complex/{n}" for n in ("axis1", "axis0/reverse", "ones_cotangent", "single_element")}
    assert failing == tagged == {"logcumsumexp/defect/second_order_zero_cotangent"} | complex_, failing


# --- complex64: the reference, and MLX's defect -----------------------------------------------------

def test_complex_rule_by_hand():
    """One element is the identity (dx = g, imaginary part kept); two: conj(exp(x_j - y_i))."""
    assert L.reference_vjp({"a": np.array([0j])}, np.array([1j]), {"axis": 0})["a"].tolist() == [1j]
    x, g = np.array([1j, 0]), np.array([0, 1])
    d = L.reference_vjp({"a": x}, g, {"axis": 0})["a"]
    assert np.allclose(d, np.conj(np.exp(x - np.log(np.exp(1j) + 1))))


def _rule(transform):
    def backward(ctx):
        x = ctx.operands["a"]
        g = ctx.cot
        if np.iscomplexobj(x):
            g = transform(g, x, ctx)
            if g is None:   # conjugate dropped: the rule without conj, as MLX 0.32.4 computes it
                return {"a": np.conj(L.reference_vjp({"a": x}, np.conj(ctx.cot), ctx.params)["a"])}   # sum g exp(x - y)
        return L.reference_vjp({"a": x}, g, ctx.params)
    return backward


COMPLEX_MUTANTS = {"imaginary_dropped": _rule(lambda g, x, ctx: np.real(g)),
                   "unconjugated": _rule(lambda g, x, ctx: None)}


@pytest.mark.parametrize("mutant", sorted(COMPLEX_MUTANTS))
def test_complex_mutants_are_rejected_by_complex_scenarios_only(mutant):
    """The true rule planted passes every complex scenario (MLX's own VJP fails them: the
    defect); a dropped imaginary part of g and a missing conjugate fail complex scenarios
    only (on real input each is the true rule)."""
    from helpers import wrong_vjp as W
    scen = [s for s in W.scenarios("logcumsumexp") if not s.defect_tags or s.name.startswith("logcumsumexp/complex/")]
    truth = {s.name: W._judge(s, _rule(lambda g, x, ctx: g)) for s in scen}
    assert all(v == "pass" for v in truth.values()), truth
    rejected = [s.name for s in scen if W._judge(s, COMPLEX_MUTANTS[mutant]) != "pass"]
    assert rejected and all(n.startswith("logcumsumexp/complex/") for n in rejected), rejected


@needs_pinned_mlx()
def test_complex_reference_is_confirmed_by_differences_of_mlx_forward():
    """The reference VJP, not MLX's, is what float32 differences of MLX's own forward give
    (L = Re sum conj(g) y, stepped along each real and imaginary part), and the forward
    matches MLX's (its branch) on the catalog's values."""
    import mlx.core as mx
    rng = np.random.RandomState(0)
    x = rng.randint(-3, 4, 5) + 0.5j * rng.randint(-1, 2, 5)
    g = rng.randint(-3, 4, 5) + 1j * rng.randint(-3, 4, 5)

    def loss(z):
        y = np.array(mx.logcumsumexp(mx.array(z.astype(np.complex64)), axis=0)).astype(complex)
        return float(np.real(np.sum(np.conj(g) * y)))
    h, num = 1e-2, np.zeros(5, complex)
    for k in range(5):
        e = np.eye(5)[k]
        num[k] = (loss(x + h * e) - loss(x - h * e)) / (2 * h) + 1j * (loss(x + 1j * h * e) - loss(x - 1j * h * e)) / (2 * h)
    ref = L.reference_vjp({"a": x}, g, {"axis": 0})["a"]
    assert np.allclose(num, ref, atol=5e-3)
    (y,), (d,) = mx.vjp(lambda a: mx.logcumsumexp(a, axis=0), [mx.array(x.astype(np.complex64))],
                        [mx.array(g.astype(np.complex64))])
    assert np.allclose(np.array(y), L.reference({"a": x}, {"axis": 0}), atol=1e-5)
    assert not np.allclose(np.array(d), ref, atol=1e-2)   # the register's complex_logaddexp_scan_vjp
