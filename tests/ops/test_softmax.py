"""softmax: the reference against hand-computed values (-inf inputs
included; against float64 differences: test_op_contracts.py), the fuzz
strategy's promise, and semantic mutants each rejected by the catalog."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W

NEG_INF = -np.inf


def test_reference_by_hand():
    from mlx_vjpcheck.ops import softmax as S
    x = {"a": np.array([[0.0, math.log(3.0), NEG_INF]])}
    s = S.reference(x, {"axis": -1})
    assert np.allclose(s, [[0.25, 0.75, 0.0]], rtol=0, atol=1e-15)
    da = S.reference_vjp(x, np.array([[1.0, 0.0, 5.0]]), {"axis": -1})["a"]
    # s * (g - <s, g>) with <s, g> = 1/4
    assert np.allclose(da, [[3 / 16, -3 / 16, 0.0]], rtol=0, atol=1e-15) and da[0, 2] == 0.0


# The hand-written VJP against float64 differences of the forward, on every catalog
# scenario: test_op_contracts.py (test_hand_written_vjp_agrees_with_differences).


def test_strategy_never_draws_an_all_neg_inf_group():
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets
    infs = []

    @settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy("softmax", ("float32",)))
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


def _parts(x, g, p):
    """(s, s * g, axes): the probabilities and the products every rule starts from."""
    axes = _axes(x, p)
    e = np.exp(x - np.max(x, axis=axes, keepdims=True))
    s = e / np.sum(e, axis=axes, keepdims=True)
    return s, s * g, axes


def _mutant(rule):
    """backward(ctx) from rule(x, g, params) -> dx, in float64 numpy."""
    return lambda ctx: {"a": rule(ctx.operands["a"], ctx.cot, ctx.params)}


MUTANTS = {
    "correction_missing": lambda x, g, p: _parts(x, g, p)[1],
    "correction_sign": lambda x, g, p: (lambda s, sg, ax: sg + s * sg.sum(axis=ax, keepdims=True))(
        *_parts(x, g, p)),
    "correction_over_last_axis": lambda x, g, p: (lambda s, sg, ax: sg - s * sg.sum(axis=-1, keepdims=True))(
        *_parts(x, g, p)),
    "input_for_output": lambda x, g, p: x * g - x * (x * g).sum(axis=_axes(x, p), keepdims=True),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # a wrong rule on -inf inputs overflows: expected
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_rejected(mutant):
    assert W.caught("softmax", _mutant(MUTANTS[mutant]), first_only=True), mutant


def test_the_true_rule_planted_the_same_way_is_accepted():
    assert W.honest_control("softmax")


# --- MLX 0.32.4 ------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_catalog_passes_on_pinned_mlx():
    st = W.honest("softmax")
    assert st and set(st.values()) == {"pass"}, {n: v for n, v in st.items() if v != "pass"}


@needs_pinned_mlx()
@pytest.mark.parametrize("name", ["softmax/bfloat16/plain/axis0", "softmax/one_neg_inf/axis0/precise"])
def test_reproducer_says_absent(tmp_path, name):
    from mlx_vjpcheck.cases import reproducer
    s = next(s for s in W.scenarios("softmax") if s.name == name)
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "VERDICT: defect absent" in proc.stdout, proc.stdout + proc.stderr
