"""logsumexp: the reference against hand-computed values (-inf inputs
included; against float64 differences: test_op_contracts.py), the all -inf
policy, the fuzz strategy's promise, semantic mutants each rejected by the
catalog, and what MLX 0.32.4 gives on an all -inf group."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W

NEG_INF = -np.inf


# --- reference: hand-computed ------------------------------------------------------------------

def test_reference_by_hand():
    from mlx_vjpcheck.ops import logsumexp as LSE
    x = {"a": np.array([[0.0, math.log(3.0)], [NEG_INF, 2.0]])}
    y = LSE.reference(x, {"axis": -1})
    assert np.allclose(y, [math.log(4.0), 2.0], rtol=0, atol=1e-15)
    da = LSE.reference_vjp(x, np.array([2.0, 5.0]), {"axis": -1})["a"]
    assert np.allclose(da, [[0.5, 1.5], [0.0, 5.0]], rtol=0, atol=1e-15) and da[1, 0] == 0.0
    kept = LSE.reference(x, {"axis": 0, "keepdims": True})
    assert kept.shape == (1, 2) and kept[0, 0] == 0.0


def test_all_neg_inf_policy():
    """The forward of a group of -inf only is -inf (claimed); its gradient has no
    value, so the reference refuses it, and inf_rows appends such groups as constants."""
    from mlx_vjpcheck.core.numeric import ReferenceUndecided
    from mlx_vjpcheck.ops import logsumexp as LSE
    row = {"a": np.array([[1.0, 2.0], [NEG_INF, NEG_INF]])}
    assert LSE.reference(row, {"axis": -1})[1] == NEG_INF
    with pytest.raises(ReferenceUndecided):
        LSE.reference_vjp(row, np.ones(2), {"axis": -1})
    x = {"a": np.array([[0.0, 0.0]])}
    p = {"axis": -1, "inf_rows": 2}
    assert LSE.reference(x, p).tolist() == [math.log(2.0), NEG_INF, NEG_INF]
    assert LSE.reference_vjp(x, np.array([4.0, 7.0, 9.0]), p)["a"].tolist() == [[2.0, 2.0]]


# The hand-written VJP against float64 differences of the forward, on every catalog
# scenario: test_op_contracts.py (test_hand_written_vjp_agrees_with_differences).


def test_strategy_never_draws_an_all_neg_inf_group():
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets
    infs = []

    @settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy("logsumexp", ("float32",)))
    def check(s):
        exp = expected.expected(s)   # ReferenceUndecided on an all -inf group
        assert all(np.all(np.isfinite(v)) for v in exp.values()), s.name
        infs.append("neg_inf" in s.description)
    check()
    assert any(infs), "no generated case had a -inf entry"


# --- semantic mutants --------------------------------------------------------------------------

def _axes(x, p):
    from mlx_vjpcheck.ops._support.reductions import reduced_axes
    return reduced_axes(p, x.ndim)


def _probs(x, axes):
    e = np.exp(x - np.max(x, axis=axes, keepdims=True))
    return e / np.sum(e, axis=axes, keepdims=True)


def _expanded(g, x, p):
    """The cotangent broadcast back over the reduced axes (inf_rows cut off)."""
    from mlx_vjpcheck.ops import logsumexp as LSE
    g = g if p.get("keepdims") else np.expand_dims(g, _axes(x, p))
    if p.get("inf_rows"):
        ax = LSE.inf_axis(p, x.ndim)
        g = np.take(g, range(x.shape[ax]), axis=ax)
    return g


def _mutant(rule):
    """backward(ctx) from rule(x, g, params) -> dx, in float64 numpy."""
    return lambda ctx: {"a": rule(ctx.operands["a"], ctx.cot, ctx.params)}


MUTANTS = {
    "softmax_over_last_axis": lambda x, g, p: _expanded(g, x, p) * _probs(x, (x.ndim - 1,)),
    "unnormalised": lambda x, g, p: _expanded(g, x, p) * np.exp(x - np.max(x, axis=_axes(x, p), keepdims=True)),
    "cotangents_summed": lambda x, g, p: np.sum(g[np.isfinite(g)]) * _probs(x, _axes(x, p)),
    "exp_of_input": lambda x, g, p: _expanded(g, x, p) * np.exp(x),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # a wrong rule on -inf inputs overflows: expected
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_rejected(mutant):
    names = W.caught("logsumexp", _mutant(MUTANTS[mutant]))
    assert names, mutant
    if mutant == "softmax_over_last_axis":   # only scenarios off the last axis can tell
        assert any("axis0" in n or "axes_0_2" in n for n in names), names


def test_the_true_rule_planted_the_same_way_is_accepted():
    assert W.honest_control("logsumexp")


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_catalog_passes_on_pinned_mlx():
    st = W.honest("logsumexp")
    assert st and set(st.values()) == {"pass"}, {n: v for n, v in st.items() if v != "pass"}


@needs_pinned_mlx()
def test_all_neg_inf_group_observed():
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


@needs_pinned_mlx()
@pytest.mark.parametrize("name", ["logsumexp/one_neg_inf/axis0/squeezed",
                                  "logsumexp/nonfinite/all_neg_inf_row/keepdims"])
def test_reproducer_says_absent(tmp_path, name):
    from mlx_vjpcheck.cases import reproducer
    s = next(s for s in W.scenarios("logsumexp") if s.name == name)
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "VERDICT: defect absent" in proc.stdout, proc.stdout + proc.stderr
