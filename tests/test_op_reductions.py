"""logsumexp and softmax: references against hand-computed values (-inf inputs
included; against float64 differences: test_op_contracts.py), the all -inf policy, the fuzz strategies'
promises, and semantic mutants each rejected by the catalog."""
from __future__ import annotations

import math

import numpy as np
import pytest

import op_mutants as M
from conftest import needs_pinned_mlx

NEG_INF = -np.inf


@pytest.fixture
def ops(monkeypatch):
    M.use_ops(monkeypatch)
    from mlx_vjpcheck import ops as registry
    return registry


# --- references: hand-computed -----------------------------------------------------------------

def test_logsumexp_reference_by_hand():
    from mlx_vjpcheck.ops import logsumexp as L
    x = {"a": np.array([[0.0, math.log(3.0)], [NEG_INF, 2.0]])}
    y = L.reference(x, None, None, {"axis": -1})
    assert np.allclose(y, [math.log(4.0), 2.0], rtol=0, atol=1e-15)
    da = L.reference_vjp(x, np.array([2.0, 5.0]), None, None, {"axis": -1})["a"]
    assert np.allclose(da, [[0.5, 1.5], [0.0, 5.0]], rtol=0, atol=1e-15) and da[1, 0] == 0.0
    kept = L.reference(x, None, None, {"axis": 0, "keepdims": True})
    assert kept.shape == (1, 2) and kept[0, 0] == 0.0


def test_logsumexp_all_neg_inf_policy():
    """The forward of a group of -inf only is -inf (claimed); its gradient has no
    value, so the reference refuses it, and inf_rows appends such groups as constants."""
    from mlx_vjpcheck.core.numeric import ReferenceUndecided
    from mlx_vjpcheck.ops import logsumexp as L
    row = {"a": np.array([[1.0, 2.0], [NEG_INF, NEG_INF]])}
    assert L.reference(row, None, None, {"axis": -1})[1] == NEG_INF
    with pytest.raises(ReferenceUndecided):
        L.reference_vjp(row, np.ones(2), None, None, {"axis": -1})
    x = {"a": np.array([[0.0, 0.0]])}
    p = {"axis": -1, "inf_rows": 2}
    assert L.reference(x, None, None, p).tolist() == [math.log(2.0), NEG_INF, NEG_INF]
    assert L.reference_vjp(x, np.array([4.0, 7.0, 9.0]), None, None, p)["a"].tolist() == [[2.0, 2.0]]


def test_softmax_reference_by_hand():
    from mlx_vjpcheck.ops import softmax as S
    x = {"a": np.array([[0.0, math.log(3.0), NEG_INF]])}
    s = S.reference(x, None, None, {"axis": -1})
    assert np.allclose(s, [[0.25, 0.75, 0.0]], rtol=0, atol=1e-15)
    da = S.reference_vjp(x, np.array([[1.0, 0.0, 5.0]]), None, None, {"axis": -1})["a"]
    # s * (g - <s, g>) with <s, g> = 1/4
    assert np.allclose(da, [[3 / 16, -3 / 16, 0.0]], rtol=0, atol=1e-15) and da[0, 2] == 0.0


# The hand-written VJPs against float64 differences of the forward, on every catalog
# scenario: test_op_contracts.py (test_hand_written_vjp_agrees_with_differences).


@pytest.mark.parametrize("op", ["logsumexp", "softmax"])
def test_strategy_never_draws_an_all_neg_inf_group(ops, op):
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets
    infs = []

    @settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy(op, ("float32",)))
    def check(s):
        exp = expected.expected(s)   # ReferenceUndecided on an all -inf group
        assert all(np.all(np.isfinite(v)) for v in exp.values()), s.name
        infs.append("neg_inf" in s.description)
    check()
    assert any(infs), "no generated case had a -inf entry"


# --- semantic mutants --------------------------------------------------------------------------

def _axes(x, p):
    from mlx_vjpcheck.ops import logsumexp as L
    return L.reduced_axes(p, x.ndim)


def _probs(x, axes):
    e = np.exp(x - np.max(x, axis=axes, keepdims=True))
    return e / np.sum(e, axis=axes, keepdims=True)


def _expanded(g, x, p):
    """The logsumexp cotangent broadcast back over the reduced axes (inf_rows cut off)."""
    from mlx_vjpcheck.ops import logsumexp as L
    axes = _axes(x, p)
    g = g if p.get("keepdims") else np.expand_dims(g, axes)
    if p.get("inf_rows"):
        ax = L.inf_axis(p, x.ndim)
        g = np.take(g, range(x.shape[ax]), axis=ax)
    return g


LSE_MUTANTS = {
    "softmax_over_last_axis": lambda x, g, y, p: _expanded(g, x, p) * _probs(x, (x.ndim - 1,)),
    "unnormalised": lambda x, g, y, p: _expanded(g, x, p) * np.exp(x - np.max(x, axis=_axes(x, p), keepdims=True)),
    "cotangents_summed": lambda x, g, y, p: np.sum(g[np.isfinite(g)]) * _probs(x, _axes(x, p)),
    "exp_of_input": lambda x, g, y, p: _expanded(g, x, p) * np.exp(x),
}


def _softmax_parts(x, g, p):
    axes = _axes(x, p)
    s = _probs(x, axes)
    return s, s * g, axes


SOFTMAX_MUTANTS = {
    "correction_missing": lambda x, g, y, p: _softmax_parts(x, g, p)[1],
    "correction_sign": lambda x, g, y, p: (lambda s, sg, ax: sg + s * sg.sum(axis=ax, keepdims=True))(
        *_softmax_parts(x, g, p)),
    "correction_over_last_axis": lambda x, g, y, p: (lambda s, sg, ax: sg - s * sg.sum(axis=-1, keepdims=True))(
        *_softmax_parts(x, g, p)),
    "input_for_output": lambda x, g, y, p: x * g - x * (x * g).sum(axis=_axes(x, p), keepdims=True),
}


def _lse_core(mx, a, p):
    from mlx_vjpcheck.ops import logsumexp as L
    return L.mlx_call({"a": a}, None, None, False, p)


def _softmax_core(mx, a, p):
    return mx.softmax(a, axis=p.get("axis"), precise=bool(p.get("precise", False)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # a wrong rule on -inf inputs overflows: expected
@pytest.mark.parametrize("mutant", sorted(LSE_MUTANTS))
def test_logsumexp_mutant_is_rejected(ops, monkeypatch, mutant):
    names = M.caught(monkeypatch, "logsumexp", M.numpy_vjp(_lse_core, LSE_MUTANTS[mutant]))
    assert names, mutant
    if mutant == "softmax_over_last_axis":   # only scenarios off the last axis can tell
        assert any("axis0" in n or "axes_0_2" in n for n in names), names


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # a wrong rule on -inf inputs overflows: expected
@pytest.mark.parametrize("mutant", sorted(SOFTMAX_MUTANTS))
def test_softmax_mutant_is_rejected(ops, monkeypatch, mutant):
    names = M.caught(monkeypatch, "softmax", M.numpy_vjp(_softmax_core, SOFTMAX_MUTANTS[mutant]))
    assert names, mutant


def test_honest_numpy_vjps_are_accepted(ops, monkeypatch):
    from mlx_vjpcheck.ops import logsumexp as L
    from mlx_vjpcheck.ops import softmax as S
    for op, core, ref in (("logsumexp", _lse_core, L.reference_vjp), ("softmax", _softmax_core, S.reference_vjp)):
        honest = M.statuses(op)
        M.install(monkeypatch, op, M.numpy_vjp(core, lambda x, g, y, p, ref=ref: ref({"a": x}, g, None, None, p)["a"]))
        assert M.statuses(op) == honest, op


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
@pytest.mark.parametrize("op", ["logsumexp", "softmax"])
def test_catalog_passes_on_pinned_mlx(ops, op):
    st = M.statuses(op)
    assert st and set(st.values()) == {"pass"}, {n: v for n, v in st.items() if v != "pass"}


@needs_pinned_mlx()
def test_all_neg_inf_group_observed(ops):
    """What the unclaimed gradient is on 0.32.4 (recorded, not judged): NaN on the
    whole group, on both paths; the forward is exactly -inf."""
    import mlx.core as mx
    inf = float("inf")
    cases = (   # (input, axis, index of the all -inf group's gradient): primitive, composed
        ([[1.0, 2.0], [-inf, -inf]], -1, (1, slice(None))),
        ([[1.0, -inf], [2.0, -inf]], 0, (slice(None), 1)),
    )
    for values, axis, group in cases:
        (y,), (d,) = mx.vjp(lambda a: mx.logsumexp(a, axis=axis), [mx.array(values)], [mx.ones((2,))])
        assert np.array(y)[1] == -np.inf and np.isfinite(np.array(y)[0])
        assert np.all(np.isnan(np.array(d)[group])), (axis, np.array(d))
