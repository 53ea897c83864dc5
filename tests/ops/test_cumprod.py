"""cumprod: the reference against hand-computed values (against float64
differences: test_op_contracts.py), the fuzz strategy's exactness promise,
and semantic mutants (plausible wrong VJPs for Scan's product rule, above
all around zeros) each rejected by the catalog."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.oracles import FIRST_ORDER


def _flags(rev, inc, axis=0):
    return {"axis": axis, "reverse": rev, "inclusive": inc}


# --- reference: hand-computed -------------------------------------------------------------------

def test_reference_by_hand():
    from mlx_vjpcheck.ops import cumprod
    x, g = {"a": np.array([2.0, 0.0, 3.0])}, np.ones(3)
    cases = {   # (reverse, inclusive): (forward, gradient)
        (False, True): ([2, 0, 0], [1, 8, 0]),     # d/dx1 of x0 x1 + x0 x1 x2 = x0 + x0 x2
        (False, False): ([1, 2, 0], [1, 2, 0]),    # y = (1, x0, x0 x1)
        (True, True): ([0, 0, 3], [0, 9, 1]),      # y = (x0 x1 x2, x1 x2, x2)
        (True, False): ([0, 3, 1], [0, 3, 1]),     # y = (x1 x2, x2, 1): d/dx2 = x1 + 1
    }
    for (rev, inc), (y, dx) in cases.items():
        p = _flags(rev, inc)
        assert cumprod.reference(x, p).tolist() == y, (rev, inc)
        assert cumprod.reference_vjp(x, g, p)["a"].tolist() == dx, (rev, inc)


# The hand-written VJP against float64 differences of the forward, on every catalog
# scenario: test_op_contracts.py (test_hand_written_vjp_agrees_with_differences).


# --- the fuzz strategy keeps its promise ----------------------------------------------------------

def test_strategy_stays_exact_in_each_dtype():
    """Every product and every partial sum of g * y stays an integer the dtype holds."""
    from hypothesis import HealthCheck, given, settings

    from mlx_vjpcheck.cases import expected
    from mlx_vjpcheck.fuzz import targets
    limit = {"float32": 2.0 ** 24, "float16": 2048.0, "bfloat16": 256.0}

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.strategy("cumprod", ("float32", "float16", "bfloat16")))
    def check(s):
        exp = expected.expected(s)
        g = expected.cotangent(s, exp["forward"])
        bound = np.abs(g * exp["forward"]).sum() + np.abs(exp["forward"]).max(initial=0)
        assert bound <= limit[s.operands["a"].dtype], s.name
    check()


# --- semantic mutants: plausible wrong rules, each rejected by the catalog ----------------------

def _rule_at(ctx, x):
    """The true rule evaluated at another input x (same cotangent and flags)."""
    return ctx.s.info.reference_vjp({"a": x}, ctx.cot, ctx.params)["a"]


def _every_zero_patched(ctx):
    """MLX's patch applied to every zero instead of the first: the gradient at each
    zero recomputed with all zeros set to one."""
    x = ctx.operands["a"]
    return {"a": np.where(x == 0, _rule_at(ctx, np.where(x == 0, 1.0, x)), ctx.reference()["a"])}


def _divided(ctx):
    """The textbook rule without the zero patch: (adjoint scan of g * y) / x."""
    from mlx_vjpcheck.ops import cumsum
    x = ctx.operands["a"]
    y = ctx.s.info.reference(ctx.operands, ctx.params)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {"a": cumsum.reference_vjp({"a": x}, ctx.cot * y, ctx.params)["a"] / x}


MUTANTS = {   # name: (backward, a scenario-name fragment that must be among the catches)
    "reverse_ignored": (lambda ctx: ctx.reference(reverse=not ctx.params["reverse"]), "no_zero"),
    "inclusive_ignored": (lambda ctx: ctx.reference(inclusive=not ctx.params["inclusive"]), "no_zero"),
    "zeros_get_zero": (lambda ctx: {"a": np.where(ctx.operands["a"] == 0, 0.0, ctx.reference()["a"])},
                       "one_zero"),
    "every_zero_patched": (_every_zero_patched, "two_zeros"),
    "divided_by_input": (_divided, "zero_first"),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mutant_is_rejected(mutant):
    backward, where = MUTANTS[mutant]
    names = W.caught("cumprod", backward)
    assert any(where in n for n in names), (mutant, names)


def test_the_true_rule_planted_the_same_way_is_accepted():
    """Control for the mutants: the true rule through the same wrapper changes nothing."""
    assert W.honest_control("cumprod")


# --- MLX 0.32.4: the catalog is clean ------------------------------------------------------------

@needs_pinned_mlx()
def test_first_order_fails_exactly_the_complex_scenarios_on_pinned_mlx():
    """Real inputs pass at first order (zero_second_order is shown by the second-order
    oracle only); complex inputs meet complex_scan_conjugate."""
    st = W.honest("cumprod")
    want = {s.name: "fail" if s.expects_defect_under(FIRST_ORDER) else "pass" for s in W.scenarios("cumprod")}
    assert st and "fail" in want.values() and st == want, {n: v for n, v in st.items() if v != want[n]}


@needs_pinned_mlx()
def test_reproducer_says_absent(tmp_path):
    from mlx_vjpcheck.cases import reproducer
    s = next(s for s in W.scenarios("cumprod") if s.name == "cumprod/flattened/axis_none")
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and "VERDICT: defect absent" in proc.stdout, proc.stdout + proc.stderr
